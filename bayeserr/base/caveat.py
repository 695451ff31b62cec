"""A warning as data: reports collect :class:`Caveat` records and print them
after the tables (JSON: the ``warnings`` list).  Which warnings apply where
is decided in :mod:`bayeserr.registries.caveats`, and so is how several
warnings of one kind read as one (text formats print one line per kind)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Caveat:
    code: str
    model: str | None
    message: str
    pair: tuple | None = None  #: (A, B) for a warning about one comparison
    #: the numbers behind the message, for the one-line summary of several
    #: warnings of a kind (not in the JSON: the message holds them)
    facts: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def subject(self) -> str | None:
        """What the warning is about: a model, a pair "A vs B", or None (the report)."""
        return self.model if self.pair is None else f"{self.pair[0]} vs {self.pair[1]}"

    def to_dict(self) -> dict:
        out = {"code": self.code, "model": self.model, "message": self.message}
        if self.pair is not None:
            out["pair"] = list(self.pair)
        return out
