"""The uncertainty report: per-model table, pairwise table, tie zone,
warnings and row accounting (SPEC §6), as data, JSON or Markdown.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import numpy as np
import xarray as xr

from . import caveats as _caveats
from .comparison import Comparisons, compare_all, pair_caveats
from .data import RowAccount, rows_of
from .estimators import CLUSTER_CORRECTIONS
from .errors import InputError
from .exact import LABELS
from .planning import tie_zone
from .scoring import Scores, score

SCHEMA = "bayeserr.report/1"
COMPACT_ABOVE = 300  # pairs


@dataclass(frozen=True)
class Report:
    """Everything ``bayeserr report`` prints, for one results file."""

    source: str
    level: float
    columns: dict
    rows: RowAccount
    scores: Scores
    comparisons: Comparisons
    tie_zone: dict
    warnings: tuple
    cluster_correction: str
    adjust: str
    bayes: object = None  #: BayesSettings, or None when --bayes off
    prior_sensitivity: tuple = ()
    posteriors: dict | None = None  #: fits by model, for --save-posterior
    pass_at_k: dict | None = None  #: k -> (Scores, Comparisons) of per-problem pass@k

    def to_dict(self) -> dict:
        """The SPEC §6 JSON object (NaN becomes ``null``)."""
        return _jsonable({
            "schema": SCHEMA,
            "level": self.level,
            "columns": self.columns,
            "rows": self.rows.to_dict(),
            "models": self.scores.to_dict(),
            "comparisons": self.comparisons.to_dict(),
            "tie_zone": self.tie_zone,
            "warnings": [w.to_dict() for w in self.warnings],
            "pass_at_k": None if not self.pass_at_k else {
                str(k): {"models": s.to_dict(), "comparisons": c.to_dict()}
                for k, (s, c) in self.pass_at_k.items()},
        })

    def to_json(self, indent: int | None = None) -> str:
        """JSON text; indented for small reports, one compact line for large
        ones (Python's fast C encoder only runs without indentation)."""
        if indent is None and len(self.comparisons) <= COMPACT_ABOVE:
            indent = 2
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    def to_markdown(self) -> str:
        from .markdown import render_report
        return render_report(self)

    def to_latex(self) -> str:
        from .latex import render
        return render(self)

    def to_html(self, figures: bool = True) -> str:
        from .html import render
        return render(self, figures)

    def render(self, fmt: str) -> str:
        """The report as ``md``, ``json``, ``latex`` or ``html`` text."""
        renderers = {"md": self.to_markdown, "json": self.to_json, "latex": self.to_latex,
                     "html": self.to_html}
        if fmt not in renderers:
            raise InputError(f"unknown format '{fmt}'; use one of {', '.join(renderers)}.")
        return renderers[fmt]()


def _jsonable(obj):
    """Plain JSON types: NaN and infinities become ``None`` (JSON ``null``)."""
    t = type(obj)
    if t is float:
        return obj if math.isfinite(obj) else None
    if t is dict:
        return {k: _jsonable(v) for k, v in obj.items()}
    if t is list or t is tuple:
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.floating):
        return _jsonable(float(obj))
    if isinstance(obj, np.integer):
        return int(obj)
    return obj


def _tie_zone(scores: Scores, comps: Comparisons, level: float) -> dict:
    """Unpaired tie zone at the pooled mean score and median n; paired: the
    median over pairs of ``z · sd(d)/√n`` (SPEC §3)."""
    p = float(np.mean([m.mean for m in scores]))
    n = float(np.median([m.n_questions for m in scores]))
    paired = [c.se_paired for c in comps if math.isfinite(c.se_paired)]
    from .estimators import z_value
    return {"unpaired": tie_zone(p, n, level),
            "paired_median": float(z_value(level) * np.median(paired)) if paired else None}


def _pass_at_k(ds, ks, level, cluster_correction, on_unpaired) -> dict:
    """Per-problem pass@k scored and compared like any other score."""
    from .passk import pass_k_dataset
    out = {}
    for k in ks:
        pk = pass_k_dataset(ds, int(k))
        scores = score(pk, level=level, cluster_correction=cluster_correction)
        scores = Scores(tuple(sorted(scores, key=lambda m: -m.mean)))
        names = [m.model for m in scores]
        comps = (compare_all(pk, names, level=level, cluster_correction=cluster_correction,
                             on_unpaired=on_unpaired) if len(names) > 1 else Comparisons(()))
        out[int(k)] = (scores, comps)
    return out


def build_report(ds: xr.Dataset, *, level: float = 0.95, cluster_correction: str = "paper",
                 adjust: str = "holm", on_unpaired: str = "error", bayes=None,
                 prior_sensitivity: bool = False, pass_k=()) -> Report:
    """Score every model, compare every pair, and collect the warnings.

    ``bayes`` is a :class:`~bayeserr.bayes.BayesSettings` (default: the
    ``fast`` mode); pass ``BayesSettings(mode="off")`` for none.
    """
    from .bayes import BayesSettings
    bayes = BayesSettings() if bayes is None else bayes
    if cluster_correction not in CLUSTER_CORRECTIONS:
        raise InputError(f"cluster correction must be one of {', '.join(CLUSTER_CORRECTIONS)} "
                         f"(got '{cluster_correction}').")
    scores = score(ds, level=level, cluster_correction=cluster_correction)
    order = sorted(scores, key=lambda m: -m.mean)
    scores = Scores(tuple(order))
    names = [m.model for m in order]
    comps = (compare_all(ds, names, level=level, cluster_correction=cluster_correction,
                         on_unpaired=on_unpaired)
             if len(names) > 1 else Comparisons(()))
    fits, notes, sensitivity = None, [], ()
    if bayes.mode != "off":
        from . import bayes as _bayes
        scores, fits, notes = _bayes.model_posteriors(ds, scores, bayes, level)
        comps = _bayes.pair_posteriors(ds, comps, bayes)
        if prior_sensitivity:
            sensitivity = tuple(_bayes.prior_sensitivity(scores, level=level))
    warnings = [w for m in scores for w in m.caveats] + pair_caveats(ds, comps) + notes
    if "cluster" in ds.coords and any(m.binary for m in scores):
        warnings.append(_caveats.Caveat(
            "exact_not_cluster_aware", None, "Wilson, Clopper–Pearson, Jeffreys and Agresti–Coull "
            "assume independent questions; with clusters read the 'n_eff' versions."))
    return Report(source=ds.attrs.get("source", ""), level=level, columns=ds.attrs.get("columns", {}),
                  rows=rows_of(ds), scores=scores, comparisons=comps,
                  tie_zone=_tie_zone(scores, comps, level), warnings=tuple(warnings),
                  cluster_correction=cluster_correction, adjust=adjust,
                  bayes=bayes if bayes.mode != "off" else None, prior_sensitivity=sensitivity,
                  posteriors=fits,
                  pass_at_k=_pass_at_k(ds, pass_k, level, cluster_correction, on_unpaired) if pass_k else None)


__all__ = ["Report", "build_report", "LABELS"]
