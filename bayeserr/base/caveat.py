"""A warning as data: reports collect :class:`Caveat` records and print them
after the tables (JSON: the ``warnings`` list).  Which warnings apply where
is decided in :mod:`bayeserr.registries.caveats`."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Caveat:
    code: str
    model: str | None
    message: str

    def to_dict(self) -> dict:
        return asdict(self)
