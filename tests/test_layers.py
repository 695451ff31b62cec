"""The layers hold: no import cycle in ``bayeserr/`` and ``models/`` (lazy
imports inside functions count) and no import from a lower layer into a
higher one, apart from the exceptions listed below with their reason.

Layers, bottom up (``docs/development.md``)::

    base → data → stats → engines → models → bayes → registries → analyses
         → reporting → renderers → cli / lab / integrations / the package API
"""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

import pytest

import bayeserr

ROOT = Path(bayeserr.__file__).parent
MODELS = ROOT.parent / "models" if (ROOT.parent / "models").is_dir() else ROOT / "models"

LAYERS = {  # package prefix -> layer
    "bayeserr.base": 0, "bayeserr.data": 1, "bayeserr.examples": 1, "bayeserr.schema": 1,
    "bayeserr.stats": 2, "bayeserr.engines": 2.5,
    "bayeserr.models": 3, "bayeserr.bayes": 4, "bayeserr.registries": 5,
    "bayeserr.analyses": 6, "bayeserr.reporting": 7, "bayeserr.renderers": 8,
    "bayeserr.cli": 9, "bayeserr.lab": 9, "bayeserr.integrations": 9, "bayeserr._compat": 9, "bayeserr.testing": 9,
    "bayeserr": 9,
}
#: Upward imports allowed, each only lazily inside the named functions:
#: a result object's display methods render it on request (``Report.to_html()``,
#: ``Ratings._repr_html_()`` in Jupyter).  The renderers sit above the result,
#: so the import must be lazy and is the only way up.
DISPLAY_METHODS = frozenset({"to_markdown", "to_latex", "to_html", "_repr_html_", "render"})


def layer(module: str) -> int:
    best = max((p for p in LAYERS if module == p or module.startswith(p + ".")), key=len)
    return LAYERS[best]


def modules(roots: dict[str, Path]) -> dict[str, Path]:
    """``{dotted name: file}`` for every module under each root package."""
    out = {}
    for pkg, base in roots.items():
        for p in base.rglob("*.py"):
            parts = list(p.relative_to(base).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join([pkg, *parts])] = p
    return out


def imports(mods: dict[str, Path], prefix: str = "bayeserr"):
    """Yield ``(importer, imported, enclosing function or None, line)`` for every
    import of a module in ``mods``, lazy and type-checking-only ones included (a
    package's own ``__init__`` run as a parent is not an edge)."""
    for name, path in mods.items():
        tree = ast.parse(path.read_text())
        is_pkg = path.name == "__init__.py"
        funcs = [(n.lineno, n.end_lineno, n.name) for n in ast.walk(tree)
                 if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                if node.level:
                    base = name.split(".") if is_pkg else name.split(".")[:-1]
                    base = base[: len(base) - (node.level - 1)]
                    mod = ".".join(base + ([node.module] if node.module else []))
                else:
                    mod = node.module or ""
                targets = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in mods else mod for a in node.names]
            inner = [f for f in funcs if f[0] <= node.lineno <= f[1]]
            func = min(inner, key=lambda f: f[1] - f[0])[2] if inner else None
            for t in targets:
                if t.startswith(prefix) and t in mods and t != name:
                    yield name, t, func, node.lineno


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a path ``[a, b, …, a]``, or None."""
    state, stack = {}, []

    def visit(v):
        state[v] = 1
        stack.append(v)
        for w in sorted(edges.get(v, ())):
            if state.get(w) == 1:
                return stack[stack.index(w):] + [w]
            if w not in state and (found := visit(w)):
                return found
        state[v] = 2
        stack.pop()
        return None

    for v in sorted(edges):
        if v not in state and (found := visit(v)):
            return found
    return None


def library_modules():
    return modules({"bayeserr": ROOT, "bayeserr.models": MODELS}) | {}


def test_no_import_cycles():
    edges = {}
    for a, b, _, _ in imports(library_modules()):
        edges.setdefault(a, set()).add(b)
    assert find_cycle(edges) is None, " → ".join(find_cycle(edges))


def test_no_upward_imports():
    problems = []
    for a, b, func, line in imports(library_modules()):
        if layer(b) > layer(a) and not (func in DISPLAY_METHODS and layer(a) in (6, 7)):
            problems.append(f"{a}:{line} (layer {layer(a)}) imports {b} (layer {layer(b)})")
    assert problems == []


def test_the_checks_catch_a_cycle_and_an_upward_import(tmp_path):
    """The checks above can fail: a made-up package with both defects."""
    pkg = tmp_path / "bayeserr"
    (pkg / "stats").mkdir(parents=True)
    (pkg / "analyses").mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "stats" / "__init__.py").write_text("")
    (pkg / "analyses" / "__init__.py").write_text("")
    (pkg / "stats" / "a.py").write_text("def f():\n    from bayeserr.analyses.b import g\n")
    (pkg / "analyses" / "b.py").write_text("from ..stats import a\n")
    mods = modules({"bayeserr": pkg})
    found = list(imports(mods))
    edges = {}
    for a, b, _, _ in found:
        edges.setdefault(a, set()).add(b)
    assert find_cycle(edges) in (["bayeserr.stats.a", "bayeserr.analyses.b", "bayeserr.stats.a"],
                                 ["bayeserr.analyses.b", "bayeserr.stats.a", "bayeserr.analyses.b"])
    assert [(a, b, f) for a, b, f, _ in found if layer(b) > layer(a)] == [
        ("bayeserr.stats.a", "bayeserr.analyses.b", "f")]


def test_every_module_has_a_layer_and_every_package_says_which():
    for name, path in library_modules().items():
        layer(name)  # raises on a module outside every layer
        if path.name == "__init__.py" and name.count(".") == 1:
            doc = ast.get_docstring(ast.parse(path.read_text())) or ""
            assert "layer" in doc.lower(), f"{name}: the docstring does not state its layer"


@pytest.mark.parametrize("old, new", [("bayeserr.methods", "bayeserr.registries.methods"),
                                      ("bayeserr.reporting.plots", "bayeserr.renderers.plots"),
                                      ("bayeserr.data", "bayeserr.data")])
def test_old_module_paths_still_work_with_a_warning(old, new):
    import importlib
    import sys
    sys.modules.pop(old, None) if old != new else None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mod = importlib.import_module(old)
    real = importlib.import_module(new)
    if old == new:
        assert not [w for w in caught if issubclass(w.category, DeprecationWarning)]
        assert mod.load is bayeserr.load
        return
    assert any(issubclass(w.category, DeprecationWarning) and new in str(w.message) for w in caught)
    name = next(n for n in vars(real) if not n.startswith("_") and n.isupper())
    assert getattr(mod, name) is getattr(real, name)
