"""A package's public names imported from their modules on first use (PEP 562), so that
importing one light module of a package does not import the heavy ones beside it."""

from __future__ import annotations


def lazy_names(package: str, homes: dict) -> tuple[list, object]:
    """``(__all__, __getattr__)`` for ``package``: ``homes`` maps a module of the package to
    the names it holds; each name is imported from it when first asked for, then kept."""
    home = {name: module for module, names in homes.items() for name in names}

    def __getattr__(name):
        if name in home:
            import sys
            from importlib import import_module
            value = getattr(import_module(f"{package}.{home[name]}"), name)
            setattr(sys.modules[package], name, value)
            return value
        raise AttributeError(f"module '{package}' has no attribute {name!r}")

    return sorted(home), __getattr__
