"""Sphinx configuration of the bayeserr documentation.

Build (strict: every warning is an error, every cross-reference must resolve)::

    sphinx-build -W --keep-going -n -b html docs docs/_build/html

The pages are Markdown (MyST); the API reference (``api.md``, ``modules.md``)
is generated from the docstrings by autodoc, so bayeserr must be importable
(``pip install -e ".[docs,inspect]"``: ``bayeserr.models`` exists only in an
installed tree, because its source folder is the top-level ``models/``, and the
API page documents the Inspect AI metrics).
"""

from __future__ import annotations

import importlib
import re
import sys
import warnings
from pathlib import Path

from sphinx.ext.napoleon import Config as NapoleonConfig
from sphinx.ext.napoleon.docstring import NumpyDocstring
from sphinx.util import logging

_log = logging.getLogger("bayeserr.docs")

import bayeserr

project = "bayeserr"
author = "bayeserr contributors"
copyright = "bayeserr contributors"
release = version = bayeserr.__version__

extensions = [
    "myst_parser",  # Markdown pages
    "sphinx.ext.autodoc",  # API reference from the docstrings
    # NumPy-style sections (Parameters / Returns) are converted by napoleon's
    # NumpyDocstring, called from setup() below (see _numpy_sections).
]

source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
html_theme = "alabaster"
html_title = f"bayeserr {release}"
html_theme_options = {"description": "Honest error bars for language-model evals", "fixed_sidebar": True,
                      "page_width": "1240px", "sidebar_width": "240px"}

# --------------------------------------------------------------------- MyST
myst_enable_extensions = ["colon_fence", "deflist"]
# GitHub-style anchors for headings down to ###, so that pages link to a section
# (``methods.md#72-json-schema-bayeserrreport2``) as the code host does.
# methods.md and calibration.md (edited elsewhere) build without a warning
# under these settings; nothing is suppressed for them.
myst_heading_anchors = 3

# ------------------------------------------------------------------ autodoc
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_preserve_defaults = True  # show ``options=None``, not an evaluated default object

# The parameter types in the docstrings are prose ("path, ``"-"``,
# pandas.DataFrame, a list of them"), not class names: napoleon renders them
# as text (use_param / use_rtype off) instead of cross-references.
_NAPOLEON = NapoleonConfig(napoleon_google_docstring=False, napoleon_numpy_docstring=True,
                           napoleon_use_param=False, napoleon_use_rtype=False)


def _numpy_sections(app, what, name, obj, options, lines):
    """Convert NumPy-style sections with napoleon, except in attribute docs.

    Napoleon reads the first line of an attribute's doc as ``type: description``;
    ours are prose doc comments (``#: CR2 on d (M4b): the clustered headline SE``)
    whose colon is punctuation, and the type is already in the annotation.  So
    attributes, data and properties are left as written (the one difference
    from loading ``sphinx.ext.napoleon`` as an extension)."""
    if name in LEFT_OUT_DOCS:
        lines[:] = []
        return
    if what in ("attribute", "data", "property"):
        return
    lines[:] = NumpyDocstring(lines, _NAPOLEON, app, what, name, obj, options).lines()


# ------------------------------------------------------------- nitpicky mode
nitpicky = True
# Without intersphinx (this project builds offline) references to objects of
# third-party packages and of the standard library cannot resolve; they come
# from type annotations in signatures (``-> xr.Dataset``, ``pd.DataFrame``,
# ``np.ndarray``, ``pathlib.Path``) and a few docstrings (``html.escape``).
# Ignore exactly those packages (by their import names and usual aliases) and
# dotted names in standard-library modules.  (Builtins such as ``int`` or
# ``ValueError`` are already exempt in Sphinx.)  Every reference to a bayeserr
# object must still resolve.
_EXTERNAL = ("numpy", "np", "pandas", "pd", "xarray", "xr", "click", "scipy", "statsmodels",
             "matplotlib", "plt", "pymc", "pm", "arviz", "az", "pytensor", "inspect_ai")
_STDLIB = sorted(m for m in sys.stdlib_module_names if not m.startswith("_"))
_PY_ROLES = r"py:(class|obj|exc|func|data|meth|attr|mod)"
nitpick_ignore_regex = [
    (_PY_ROLES, rf"({'|'.join(map(re.escape, _EXTERNAL))})(\..+)?"),
    (_PY_ROLES, rf"({'|'.join(map(re.escape, _STDLIB))})\..+"),
]


# -------------------------------------- names as Python resolves them in a module
_MISSING = object()


def _lookup(dotted: str):
    """The object ``dotted`` names (longest importable module prefix, then
    attributes; a dataclass field without a default counts), or ``_MISSING``.
    Only bayeserr names are looked up, and an old module path
    (``bayeserr._compat``) does not count: a docstring naming one is stale and
    must keep failing."""
    parts = dotted.split(".")
    if parts[0] != "bayeserr":  # only our own names; never import anything else by guess
        return _MISSING
    for i in range(len(parts), 0, -1):
        with warnings.catch_warnings():
            warnings.simplefilter("error", DeprecationWarning)
            try:
                obj = importlib.import_module(".".join(parts[:i]))
            except (ImportError, DeprecationWarning):
                continue
        for attr in parts[i:]:
            fields = getattr(obj, "__dataclass_fields__", {})
            obj = getattr(obj, attr, fields.get(attr, _MISSING))
            if obj is _MISSING:
                break
        return obj
    return _MISSING


def _python_names(app, env, node, contnode):
    """Resolve a reference the way Python resolves the name in the docstring's
    module: ``:class:`InputError``` in a module that imports it, or
    ``bayeserr.load`` (a lazy attribute of the package), lead to the object's
    documented home (``bayeserr.base.errors.InputError``,
    ``bayeserr.data.loading.load``).  A name that is not defined there, or
    whose object is not documented, stays unresolved (and fails the build)."""
    if node.get("refdomain") != "py":
        return None
    target = node.get("reftarget", "").lstrip(".~")
    modname, clsname = node.get("py:module"), node.get("py:class")
    candidates = [f"{modname}.{clsname}.{target}"] if modname and clsname else []
    candidates += [f"{modname}.{target}"] if modname else []
    candidates.append(target)
    domain = env.get_domain("py")
    for dotted in candidates:
        obj = _lookup(dotted)
        if obj is _MISSING:
            continue
        home = getattr(obj, "__name__", None) if hasattr(obj, "__path__") or type(obj).__name__ == "module" \
            else f"{getattr(obj, '__module__', '')}.{getattr(obj, '__qualname__', '')}"
        if home and home != dotted and home in domain.objects:
            return domain.resolve_xref(env, node["refdoc"], app.builder, node["reftype"], home,
                                       node, contnode)
        return None
    return None


# ------------------------------------------- modules page: the rest of each module
# modules.md holds a marker that is replaced, when the page is read, by one
# section per module found in the layer packages: a module added to a layer
# package appears on the page (and in the strict build) without editing it.
LAYERS = [  # bottom up, as tests/test_layers.py
    ("Layer 0: base", ["bayeserr.base"]),
    ("Layer 1: data", ["bayeserr.data", "bayeserr.examples", "bayeserr.schema"]),
    ("Layer 2: stats", ["bayeserr.stats"]),
    ("Layer 2b: engines", ["bayeserr.engines"]),
    ("Layer 3: models", ["bayeserr.models"]),
    ("Layer 4: bayes", ["bayeserr.bayes"]),
    ("Layer 5: registries", ["bayeserr.registries"]),
    ("Layer 6: analyses", ["bayeserr.analyses"]),
    ("Layer 7: reporting", ["bayeserr.reporting"]),
    ("Layer 8: renderers", ["bayeserr.renderers"]),
    ("Top layer: command line, lab, integrations", ["bayeserr.cli", "bayeserr.lab", "bayeserr.integrations",
                                                    "bayeserr.testing", "bayeserr._compat"]),
]
#: packages whose own ``__init__`` is a module of the page (the layer packages'
#: docstrings are on the API page instead)
OWN_MODULE = {"bayeserr.examples", "bayeserr.schema", "bayeserr.testing", "bayeserr._compat"}
#: documented on the API page with its members
ON_API_PAGE = {"bayeserr.integrations.inspect_metrics"}
#: Docstrings left out of the build, object -> the broken reference.  Each is a
#: real problem in a file being edited elsewhere (not a docs-side one); the
#: object itself stays documented (signature, members, link target) with an
#: empty description.  Remove the entry once the docstring is fixed.
LEFT_OUT_DOCS: dict[str, str] = {
}
#: Members left out of a module's section, module -> {member: reason}; same rule.
LEFT_OUT_MEMBERS: dict[str, dict[str, str]] = {
}
MARKER = "<!-- modules by layer: generated by docs/conf.py -->"


def _package_dir(pkg: str) -> Path:
    return Path(importlib.import_module(pkg).__file__).parent


def _modules(pkg: str) -> list[str]:
    if pkg in OWN_MODULE and not hasattr(importlib.import_module(pkg), "__path__"):
        return [pkg]
    found = [pkg] if pkg in OWN_MODULE else []
    root = _package_dir(pkg)
    # a subpackage (data/readers/) is a module of its own, then its modules
    for p in sorted(root.rglob("*.py")):
        parts = list(p.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__main__" or parts == ["__init__"]:
            continue
        found.append(".".join([pkg, *(parts[:-1] if parts[-1] == "__init__" else parts)]))
    return sorted(found)


def modules_by_layer() -> list[tuple[str, list[str]]]:
    """``[(layer title, [module, ...]), ...]``: every module of the layer packages."""
    return [(title, [m for pkg in pkgs for m in _modules(pkg)]) for title, pkgs in LAYERS]


def _section(module: str) -> str:
    if module in ON_API_PAGE:
        return f"### `{module}`\n\nDocumented with its members in the [API reference](api.md).\n"
    skip = LEFT_OUT_MEMBERS.get(module)
    option = f"\n   :exclude-members: {', '.join(skip)}" if skip else ""
    return f"### `{module}`\n\n```{{eval-rst}}\n.. automodule:: {module}\n   :members:{option}\n```\n"


def _modules_page(app, docname, source):
    if docname != "modules":
        return
    parts = []
    for title, modules in modules_by_layer():
        parts.append(f"## {title}\n")
        parts += [_section(m) for m in modules]
    source[0] = source[0].replace(MARKER, "\n".join(parts))


# ---------------------------------------- command-line reference: every --help
# guide/command-line.md holds a marker replaced, when the page is read, by the
# --help text of every command and subcommand of the installed ``bayeserr``
# (click's own formatting, built-in defaults), so the reference of every
# option cannot drift from the code.
CLI_MARKER = "<!-- bayeserr --help: generated by docs/conf.py -->"
CLI_WIDTH = 88


def _cli_sections() -> str:
    import click

    from bayeserr.cli import main

    out = []

    def walk(cmd, ctx):
        title = ctx.command_path  # "bayeserr", "bayeserr report", "bayeserr simulate coverage"
        level = "###" if title.count(" ") < 2 else "####"
        out.append(f"{level} `{title}`\n\n```text\n{cmd.get_help(ctx).rstrip()}\n```\n")
        if isinstance(cmd, click.Group):
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                walk(sub, click.Context(sub, info_name=name, parent=ctx, terminal_width=CLI_WIDTH,
                                        max_content_width=CLI_WIDTH))

    walk(main, click.Context(main, info_name="bayeserr", terminal_width=CLI_WIDTH,
                             max_content_width=CLI_WIDTH))
    return "\n".join(out)


# ------------------------------------------ the package namespace (api.md)
# api.md holds a marker replaced by a table of every lazy name of ``bayeserr``
# (``bayeserr._API``) and the object it resolves to, so a name added to the
# package appears without editing the page.
API_MARKER = "<!-- bayeserr namespace: generated by docs/conf.py -->"


def _namespace_table() -> str:
    rows = ["| name | documented as |", "|---|---|"]
    for name in sorted(bayeserr._API, key=str.lower):
        module, attr = bayeserr._API[name]
        obj = getattr(bayeserr, name)
        role = ("exc" if issubclass(obj, BaseException) else "class") if isinstance(obj, type) else "func"
        rows.append(f"| `bayeserr.{name}` | {{py:{role}}}`bayeserr.{module}.{attr}` |")
    rows.append("| `bayeserr.__version__` | the installed version (a string) |")
    return "\n".join(rows) + "\n"


def _generated_sections(app, docname, source):
    if docname == "modules":
        _modules_page(app, docname, source)
    elif docname == "guide/command-line":
        source[0] = source[0].replace(CLI_MARKER, _cli_sections())
    elif docname == "api":
        source[0] = source[0].replace(API_MARKER, _namespace_table())


_API_PAGE = Path(__file__).with_name("api.md")
_AUTODOC = re.compile(r"^\.\. auto(?:function|class|exception|data):: (\S+)", re.MULTILINE)
_API_OBJECTS: list = []


def _skip_api_objects(app, what, name, obj, skip, options):
    """On the modules page, leave out the members the API page documents: one
    description each, and references lead to the API page."""
    if what != "module" or app.env.docname != "modules":
        return None
    if not _API_OBJECTS:
        found = map(_lookup, _AUTODOC.findall(_API_PAGE.read_text()))
        # identity decides, so values that many names share (None, numbers, text) never count
        _API_OBJECTS.extend(o for o in found if o is not _MISSING and not isinstance(o, (type(None), int, float, str)))
    return True if any(obj is o for o in _API_OBJECTS) else None


#: pages made from the code (docstrings, the module list, --help): read again on
#: every build, so that an incremental build never reports a stale success
GENERATED_PAGES = ["api", "modules", "guide/command-line"]


def _always_reread(app, env, added, changed, removed):
    return [d for d in GENERATED_PAGES if d in env.found_docs]


def _left_out_notice(app):
    """Say in the build log which docstrings are left out, and fail on an entry
    that no longer names an object (renamed or removed: drop the entry)."""
    for name, reason in LEFT_OUT_DOCS.items():
        if _lookup(name) is _MISSING:
            _log.warning("docs/conf.py LEFT_OUT_DOCS: %s names no object; remove the entry", name)
        else:
            _log.info("docstring left out of the docs: %s (%s)", name, reason)
    for module, members in LEFT_OUT_MEMBERS.items():
        for member, reason in members.items():
            if _lookup(f"{module}.{member}") is _MISSING:
                _log.warning("docs/conf.py LEFT_OUT_MEMBERS: %s.%s names no object; remove the entry",
                             module, member)
            else:
                _log.info("left out of the modules page: %s.%s (%s)", module, member, reason)


def setup(app):
    app.connect("builder-inited", _left_out_notice)
    app.connect("env-get-outdated", _always_reread)
    app.connect("source-read", _generated_sections)
    app.connect("autodoc-process-docstring", _numpy_sections)
    app.connect("autodoc-skip-member", _skip_api_objects)
    app.connect("missing-reference", _python_names)
