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


# ---------------------------------------------------------------- where code sits (issue 39)
#: what the formula layer may not import: files, folders, networks, columnar files
IO_MODULES = ("os", "pathlib", "tempfile", "shutil", "io", "socket", "urllib", "http", "pyarrow", "fsspec",
              "glob", "zipfile", "gzip")
#: a function longer than this, or with more parameters, says why in a ``# size:`` comment
MAX_LINES, MAX_PARAMS = 120, 10


def package_of(module: str) -> str:
    """``bayeserr.stats.view`` -> ``bayeserr.stats``; the package API (``bayeserr``) is its own."""
    return ".".join(module.split(".")[:2])


def _trees(mods):
    for name, path in mods.items():
        yield name, ast.parse(path.read_text())


def io_in_formulas(mods) -> list[str]:
    """Imports of file or network I/O, and calls of ``open``, in ``bayeserr.stats``."""
    out = []
    for name, tree in _trees(mods):
        if package_of(name) != "bayeserr.stats":
            continue
        for n in ast.walk(tree):
            found = ([a.name for a in n.names] if isinstance(n, ast.Import) else
                     [n.module or ""] if isinstance(n, ast.ImportFrom) else
                     ["open()"] if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "open" else [])
            out += [f"{name}:{n.lineno} {f}" for f in found if f == "open()" or f.split(".")[0] in IO_MODULES]
    return out


def renderer_statistics(mods) -> list[str]:
    """Imports of the formulas or the models by a renderer."""
    return [f"{a}:{line} imports {b}" for a, b, _, line in imports(mods)
            if package_of(a) == "bayeserr.renderers" and package_of(b) in ("bayeserr.stats", "bayeserr.models")]


def private_across_packages(mods) -> list[str]:
    """``_name`` imported from, or read as an attribute of, a module of another package."""
    out = []
    for name, tree in _trees(mods):
        aliases = {}  # local name -> module of bayeserr it is bound to
        for n in ast.walk(tree):
            if isinstance(n, ast.ImportFrom) and n.module and n.module.startswith("bayeserr"):
                for a in n.names:
                    full = f"{n.module}.{a.name}"
                    if full in mods:
                        aliases[a.asname or a.name] = full
                    elif a.name.startswith("_") and not a.name.startswith("__") \
                            and package_of(n.module) != package_of(name):
                        out.append(f"{name}:{n.lineno} imports {n.module}.{a.name}")
            elif isinstance(n, ast.Import):
                for a in n.names:
                    if a.name in mods and a.asname:
                        aliases[a.asname] = a.name
        for n in ast.walk(tree):
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id in aliases \
                    and n.attr.startswith("_") and not n.attr.startswith("__") \
                    and package_of(aliases[n.value.id]) != package_of(name):
                out.append(f"{name}:{n.lineno} reads {aliases[n.value.id]}.{n.attr}")
    return out


def oversized_functions(mods) -> list[str]:
    """Functions over :data:`MAX_LINES` lines or :data:`MAX_PARAMS` parameters whose first
    lines (the signature and docstring) hold no ``# size:`` comment saying why."""
    out = []
    for name, path in mods.items():
        lines = path.read_text().splitlines()
        for n in ast.walk(ast.parse("\n".join(lines))):
            if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            size = n.end_lineno - n.lineno + 1
            params = len(n.args.posonlyargs) + len(n.args.args) + len(n.args.kwonlyargs)
            if size <= MAX_LINES and params <= MAX_PARAMS:
                continue
            start = min([d.lineno for d in n.decorator_list] + [n.lineno])
            head = lines[start - 1:n.body[0].end_lineno + 1 if n.body else n.lineno]
            if not any("# size:" in line for line in head):
                out.append(f"{name}:{n.lineno} {n.name} ({size} lines, {params} parameters)")
    return out


def literal_choices(root: Path) -> list[str]:
    """``click.Choice([...])`` with the choices written out in ``bayeserr/cli``: a choosable set
    is a registry (or a tuple beside the code that takes it), and the CLI names it."""
    out = []
    for path in sorted((root / "cli").glob("*.py")):
        for n in ast.walk(ast.parse(path.read_text())):
            if isinstance(n, ast.Call) and getattr(n.func, "attr", None) == "Choice" and n.args \
                    and isinstance(n.args[0], (ast.List, ast.Tuple)):
                out.append(f"{path.name}:{n.lineno}")
    return out


def undocumented_modules(mods) -> list[str]:
    """Modules of a layer package (or subpackage) that its docstring does not name
    (``:mod:`.name```)."""
    out = []
    for name, path in mods.items():
        if path.name != "__init__.py" or name == "bayeserr" or name == "bayeserr.models":
            continue
        doc = ast.get_docstring(ast.parse(path.read_text())) or ""
        for child in sorted(p for p in path.parent.iterdir() if not p.name.startswith("__")):
            stem = child.stem if child.suffix == ".py" else child.name if (child / "__init__.py").exists() else None
            if stem and f":mod:`.{stem}`" not in doc and f":mod:`{name}.{stem}`" not in doc:
                out.append(f"{name}: {stem}")
    return out


@pytest.mark.parametrize("rule", [io_in_formulas, renderer_statistics, private_across_packages,
                                  oversized_functions, undocumented_modules])
def test_code_sits_where_it_belongs(rule):
    assert rule(library_modules()) == []


def test_the_command_line_names_its_choices():
    assert literal_choices(ROOT) == []


def test_the_rules_catch_each_defect(tmp_path):
    """Each rule above can fail: a made-up package with one defect of each kind."""
    pkg = tmp_path / "bayeserr"
    for sub in ("stats", "renderers", "cli", "base"):
        (pkg / sub).mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "base" / "__init__.py").write_text('"""Lists :mod:`.errors` only."""\n')
    (pkg / "base" / "errors.py").write_text("def _hidden():\n    pass\n")
    (pkg / "base" / "names.py").write_text("")
    (pkg / "stats" / "__init__.py").write_text('"""Lists :mod:`.a`."""\n')
    (pkg / "stats" / "a.py").write_text("import pathlib\n\ndef f(x):\n    return open(x)\n")
    (pkg / "renderers" / "__init__.py").write_text('"""Lists :mod:`.r`."""\n')
    params = ", ".join(f"p{i}" for i in range(12))
    (pkg / "renderers" / "r.py").write_text(
        "from bayeserr.stats import a\nfrom bayeserr.base.errors import _hidden\nimport bayeserr.base.errors as e\n\n"
        f"def g({params}):\n    return e._hidden()\n")
    (pkg / "cli" / "__init__.py").write_text('"""Lists :mod:`.c`."""\n')
    (pkg / "cli" / "c.py").write_text('import click\nX = click.Choice(["a", "b"])\n')
    mods = modules({"bayeserr": pkg})
    assert io_in_formulas(mods) == ["bayeserr.stats.a:1 pathlib", "bayeserr.stats.a:4 open()"]
    assert renderer_statistics(mods) == ["bayeserr.renderers.r:1 imports bayeserr.stats.a"]
    assert sorted(private_across_packages(mods)) == ["bayeserr.renderers.r:2 imports bayeserr.base.errors._hidden",
                                                     "bayeserr.renderers.r:6 reads bayeserr.base.errors._hidden"]
    assert oversized_functions(mods) == ["bayeserr.renderers.r:5 g (2 lines, 12 parameters)"]
    assert literal_choices(pkg) == ["c.py:2"]
    assert undocumented_modules(mods) == ["bayeserr.base: names"]


def test_the_command_lines_registries_name_what_the_formulas_take():
    """A registry the command line offers lists exactly what the code behind it accepts."""
    from bayeserr.analyses.sequential import SAMPLES
    from bayeserr.registries.options import SUITE_WEIGHTINGS, WATCH_METHODS, WATCH_SAMPLES
    from bayeserr.stats.sequential import METHODS
    from bayeserr.stats.suite import WEIGHTINGS
    assert set(WATCH_METHODS) == {"auto", *METHODS} and set(SUITE_WEIGHTINGS) == set(WEIGHTINGS)
    assert tuple(WATCH_SAMPLES) == SAMPLES
