"""The report: the pipeline that builds it (:mod:`.build`), its neutral
tables and layout (:mod:`.tables`, :mod:`.document`), the renderers
(:mod:`.markdown`, :mod:`.html`, :mod:`.latex`) and the figures (:mod:`.plots`)."""

from .build import (FORMATS, ComparisonReport, Report, build_comparison, build_report,
                    build_report_view, to_jsonable)

__all__ = ["FORMATS", "ComparisonReport", "Report", "build_comparison", "build_report",
           "build_report_view", "to_jsonable"]
