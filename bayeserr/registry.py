"""Named things a user can choose (interval methods, output formats, figure
kinds, cluster corrections, …): one registry each, one lookup with a
"did you mean" error, and the list of choices the CLI offers."""

from __future__ import annotations

from .errors import InputError, suggest


class Registry(dict):
    """An ordered ``name -> item`` mapping whose lookups fail helpfully.

    ``what`` names the kind of thing in messages; ``option`` the CLI flag
    that chooses it, so the error says which option was wrong.
    """

    def __init__(self, what: str, option: str | None = None, items=()):
        super().__init__(items)
        self.what = what
        self.option = option

    def add(self, name: str, item):
        if name in self:
            raise ValueError(f"{self.what} '{name}' is registered twice")
        self[name] = item
        return item

    def get_checked(self, name):
        """The item called ``name``; an :class:`InputError` naming the choices if none."""
        if name in self:
            return self[name]
        where = f"{self.option} " if self.option else ""
        raise InputError(f"{where}'{name}' is not a known {self.what}.{suggest(name, self)} "
                         f"Choose one of: {', '.join(self)}.")

    def check(self, name) -> str:
        self.get_checked(name)
        return name

    @property
    def choices(self) -> list[str]:
        return list(self)
