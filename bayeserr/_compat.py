"""Old module paths, kept for one release (bayeserr 0.1 → 0.2).

The library was reorganised into layer packages (``docs/development.md``);
importing a module by its old path still works, with a
:class:`DeprecationWarning` naming the new one.  The old module is an alias:
attribute reads go to the new module.  Removed in bayeserr 0.3.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import types
import warnings

#: old module path -> new module path
MOVED = {
    "bayeserr.errors": "bayeserr.base.errors",
    "bayeserr.registry": "bayeserr.base.registry",
    "bayeserr.output": "bayeserr.base.output",
    "bayeserr.results": "bayeserr.base.results",
    "bayeserr.readers": "bayeserr.data.readers",
    "bayeserr.filters": "bayeserr.data.filters",
    "bayeserr.config": "bayeserr.data.config",
    **{f"bayeserr.{m}": f"bayeserr.stats.{m}" for m in
       ("estimators", "exact", "pairs", "fewclusters", "passk", "ranking", "planning", "view")},
    **{f"bayeserr.{m}": f"bayeserr.registries.{m}" for m in ("methods", "pairtests", "options", "caveats")},
    **{f"bayeserr.{m}": f"bayeserr.analyses.{m}" for m in ("scoring", "comparison", "power", "arena")},
    **{f"bayeserr.reporting.{m}": f"bayeserr.renderers.{m}" for m in ("markdown", "latex", "html", "plots")},
    "bayeserr.inspect_metrics": "bayeserr.integrations.inspect_metrics",
}
#: names that moved out of an old module into a second one: old module -> further homes
ALSO = {"bayeserr.arena": ("bayeserr.renderers.arena", "bayeserr.reporting.arena"),
        "bayeserr.reporting.markdown": ("bayeserr.reporting.text",),
        "bayeserr.comparison": ("bayeserr.stats.pairs",),
        "bayeserr.caveats": ("bayeserr.base.caveat",)}


class _OldPaths(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds the old paths only; every other import goes to the normal finders."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname in MOVED:
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec):
        return types.ModuleType(spec.name)

    def exec_module(self, module):
        new = MOVED[module.__name__]
        warnings.warn(f"{module.__name__} is now {new}; the old path is removed in bayeserr 0.3.",
                      DeprecationWarning, stacklevel=2)
        homes = [importlib.import_module(m) for m in (new, *ALSO.get(module.__name__, ()))]
        module.__doc__ = homes[0].__doc__

        def find(name):
            for home in homes:
                if hasattr(home, name):
                    return getattr(home, name)
            raise AttributeError(f"module {module.__name__!r} (now {new}) has no attribute {name!r}")

        module.__getattr__ = find
        module.__dir__ = lambda: sorted({n for home in homes for n in dir(home)})


def install() -> None:
    if not any(isinstance(f, _OldPaths) for f in sys.meta_path):
        sys.meta_path.insert(0, _OldPaths())
