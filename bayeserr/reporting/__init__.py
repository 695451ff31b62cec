"""Layer 7, the report: the pipeline that computes every number of a report
once (:mod:`.build`) and lays it out as neutral tables and blocks
(:mod:`.tables`, :mod:`.document`, :mod:`.arena`, :mod:`.text`), which the
renderers (:mod:`bayeserr.renderers`) write out in each format.

May import: every layer below (base … analyses).  ``Report.to_markdown()`` and
its siblings import a renderer when called (a result's display methods).
"""

from bayeserr.base.jsonable import to_jsonable
from bayeserr.reporting.build import (
                                      FORMATS,
                                      ComparisonReport,
                                      Report,
                                      build_comparison,
                                      build_report,
                                      build_report_view,
)

__all__ = ["FORMATS", "ComparisonReport", "Report", "build_comparison", "build_report",
           "build_report_view", "to_jsonable"]
