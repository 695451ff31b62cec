"""Layer 7, the report: its sections, one registry (:mod:`.sections`: how each is
computed from any engine's source, laid out and written to the JSON), the one assembler
(:mod:`.build`) and the neutral tables and blocks (:mod:`.tables`, :mod:`.document`,
:mod:`.arena`, :mod:`.text`, and :mod:`.task_summary` for ``bayeserr tasks``), which the renderers (:mod:`bayeserr.renderers`) write out
in each format; the output formats are listed in :mod:`.formats` (light, for the
command line).

May import: every layer below (base … analyses).  ``Report.to_markdown()`` and
its siblings import a renderer when called (a result's display methods).
"""

from bayeserr.reporting.formats import FORMATS

# the pipeline's names, imported on first use: listing the formats must not import the statistics
_BUILD = ("ComparisonReport", "Report", "build_comparison", "build_report", "build_report_view")
__all__ = ["FORMATS", *_BUILD, "to_jsonable"]


def __getattr__(name):
    if name in _BUILD or name == "to_jsonable":
        from importlib import import_module
        home = "bayeserr.base.jsonable" if name == "to_jsonable" else "bayeserr.reporting.build"
        value = getattr(import_module(home), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'bayeserr.reporting' has no attribute {name!r}")
