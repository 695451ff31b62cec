"""Two models on the same questions, and all pairs of many (SPEC §3).

Convention: ``compare(ds, A, B)`` estimates ``A − B``.  The headline test
(``z``, ``p_value``, ``ci``) uses the clustered paired SE (M8) when the data
have clusters, else the paired SE (M7).  All pairs are computed at once by
:mod:`bayeserr.pairs`; p-values are adjusted for multiplicity with
``statsmodels.stats.multitest.multipletests`` (Holm, and Benjamini–Hochberg).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import xarray as xr
from scipy import stats
from statsmodels.stats.multitest import multipletests

from . import caveats
from .data import cluster_codes, question_means
from .errors import InputError, suggest
from .estimators import z_value
from .pairs import (correlation, discordant_counts, mcnemar_pvalues, pair_moments,
                    paired_standard_errors)

ADJUST_METHODS = {"holm": "holm", "bh": "fdr_bh"}
ON_UNPAIRED = ("error", "drop")


@dataclass(frozen=True)
class McNemar:
    """McNemar's test on the 2×2 table of a pair of 0/1 models (K = 1)."""

    n_both: int
    n_a_only: int
    n_b_only: int
    n_neither: int
    p_value: float  #: exact binomial test on the discordant pairs
    p_mid: float  #: mid-p version

    def to_dict(self) -> dict:
        return {"n_a_only": self.n_a_only, "n_b_only": self.n_b_only,
                "p_value": self.p_value, "p_mid": self.p_mid}


@dataclass(frozen=True)
class Comparison:
    """A − B on the questions both answered (SPEC §3)."""

    a: str
    b: str
    n_questions: int
    n_only_a: int  #: questions dropped because only A answered them
    n_only_b: int
    mean_a: float
    mean_b: float
    diff: float
    se_unpaired: float
    se_paired: float
    se_clustered_paired: float | None
    n_clusters: int | None
    ci: tuple[float, float]
    z: float
    p_value: float
    p_holm: float
    p_bh: float
    correlation: float
    mcnemar: McNemar | None
    level: float
    cluster_correction: str | None
    prob_a_better: float | None = None
    prob_tie: float | None = None

    @property
    def se(self) -> float:
        """The SE behind the headline test: (M8) with clusters, else (M7)."""
        return self.se_clustered_paired if self.se_clustered_paired is not None else self.se_paired

    def to_dict(self) -> dict:
        """The comparison entry of the SPEC §6 JSON schema."""
        return {
            "a": self.a, "b": self.b, "n_questions": self.n_questions, "diff": self.diff,
            "se_unpaired": self.se_unpaired, "se_paired": self.se_paired,
            "se_clustered_paired": self.se_clustered_paired, "ci": list(self.ci), "z": self.z,
            "p_value": self.p_value, "p_holm": self.p_holm, "correlation": self.correlation,
            "mcnemar": None if self.mcnemar is None else self.mcnemar.to_dict(),
            "prob_a_better": self.prob_a_better, "prob_tie": self.prob_tie,
        }

    def to_frame(self) -> pd.DataFrame:
        return Comparisons((self,)).to_frame()


@dataclass(frozen=True)
class Comparisons:
    """All pairwise comparisons of a report, with multiplicity-adjusted p-values."""

    pairs: tuple[Comparison, ...]
    #: pairs left out because they share fewer than 2 questions: (a, b, n_common)
    skipped: tuple[tuple[str, str, int], ...] = ()

    def __iter__(self):
        return iter(self.pairs)

    def __len__(self):
        return len(self.pairs)

    def get(self, a: str, b: str) -> Comparison:
        for c in self.pairs:
            if (c.a, c.b) == (a, b):
                return c
        raise KeyError((a, b))

    def to_dict(self) -> list[dict]:
        return [c.to_dict() for c in self.pairs]

    def to_frame(self) -> pd.DataFrame:
        rows = []
        for c in self.pairs:
            d = c.to_dict()
            mc = d.pop("mcnemar")
            d["ci_low"], d["ci_high"] = d.pop("ci")
            d["p_bh"] = c.p_bh
            d["mcnemar_p"] = None if mc is None else mc["p_value"]
            rows.append(d)
        return pd.DataFrame(rows)


# ------------------------------------------------------------------- helpers
def _binary_k1(ds: xr.Dataset) -> np.ndarray:
    """Per model: every answer 0/1 and at most one answer per question."""
    cube = ds["score"].values
    answered = ~np.isnan(cube)
    one_each = answered.sum(axis=2) <= 1
    zero_one = np.isin(cube, (0.0, 1.0)) | ~answered
    return one_each.all(axis=1) & zero_one.all(axis=(1, 2))


def _check_paired(pm, names, on_unpaired: str):
    if on_unpaired not in ON_UNPAIRED:
        raise InputError(f"--on-unpaired must be one of {', '.join(ON_UNPAIRED)} "
                         f"(got '{on_unpaired}').")
    if on_unpaired == "drop" or not (pm.only > 0).any():
        return
    a, b = np.argwhere((pm.only > 0) | (pm.only.T > 0))[0]
    n_pairs = int(np.triu((pm.only > 0) | (pm.only.T > 0), 1).sum())
    raise InputError(
        f"models do not share the same question set, so a paired comparison is undefined: "
        f"'{names[a]}' answered {int(pm.only[a, b])} question(s) that '{names[b]}' did not, and "
        f"'{names[b]}' answered {int(pm.only[b, a])} that '{names[a]}' did not ({n_pairs} "
        f"pair(s) affected). Give every model the same questions, or pass --on-unpaired drop "
        f"to compare each pair on the questions both answered (the drop is reported)."
    )


def _adjusted(p: np.ndarray, method: str) -> np.ndarray:
    ok = np.isfinite(p)
    out = np.full_like(p, np.nan)
    if ok.any():
        out[ok] = multipletests(p[ok], method=ADJUST_METHODS[method])[1]
    return out


def _headline(diff, se, level):
    """z, two-sided normal p and interval; a zero SE with zero gap is no evidence."""
    with np.errstate(invalid="ignore", divide="ignore"):
        z = np.where((se == 0) & (diff == 0), 0.0, diff / se)
    p = 2 * stats.norm.sf(np.abs(z))
    half = z_value(level) * se
    return z, p, np.stack([diff - half, diff + half], axis=-1)


def _resolve_models(ds, models):
    names = [str(m) for m in ds["model"].values]
    if models is None:
        return names
    for m in models:
        if m not in names:
            raise InputError(f"model '{m}' is not in the data.{suggest(m, names)}")
    return list(models)


# ------------------------------------------------------------------- public
def compare_all(ds: xr.Dataset, models=None, *, level: float = 0.95,
                cluster_correction: str = "paper", on_unpaired: str = "error") -> Comparisons:
    """Every pair ``(models[i], models[j])``, ``i < j``, estimating ``models[i] − models[j]``.

    Holm and Benjamini–Hochberg adjusted p-values are over all the pairs
    returned.  ``on_unpaired="drop"`` compares each pair on the questions both
    models answered; the counts dropped from each side are in each
    :class:`Comparison` (``n_only_a``, ``n_only_b``).
    """
    names = _resolve_models(ds, models)
    ds = ds.sel(model=names)
    s, _ = question_means(ds)
    codes = cluster_codes(ds)
    pm = pair_moments(s, codes)
    _check_paired(pm, names, on_unpaired)
    se_un, se_pa, se_cl = paired_standard_errors(pm, cluster_correction)
    corr = correlation(pm)
    binary = _binary_k1(ds)
    only = discordant_counts(s) if binary.any() else None

    ia, ib = np.triu_indices(len(names), 1)
    few = pm.n[ia, ib] < 2
    skipped = tuple((names[i], names[j], int(pm.n[i, j])) for i, j in zip(ia[few], ib[few]))
    ia, ib = ia[~few], ib[~few]
    diff = pm.mean[ia, ib] - pm.mean.T[ia, ib]
    head_se = (se_cl if se_cl is not None else se_pa)[ia, ib]
    z, p, ci = _headline(diff, head_se, level)
    p_holm, p_bh = _adjusted(p, "holm"), _adjusted(p, "bh")
    mc_b = mc_c = mc_p = mc_mid = None
    if only is not None:
        mc_b, mc_c = only[ia, ib], only.T[ia, ib]
        mc_p, mc_mid = mcnemar_pvalues(mc_b, mc_c)

    pairs = []
    for k, (i, j) in enumerate(zip(ia, ib)):
        mc = None
        if only is not None and binary[i] and binary[j]:
            n_ij = int(pm.n[i, j])
            both = int(round(pm.mean[i, j] * n_ij)) - int(mc_b[k])
            mc = McNemar(both, int(mc_b[k]), int(mc_c[k]), n_ij - both - int(mc_b[k]) - int(mc_c[k]),
                         float(mc_p[k]), float(mc_mid[k]))
        pairs.append(Comparison(
            a=names[i], b=names[j], n_questions=int(pm.n[i, j]), n_only_a=int(pm.only[i, j]),
            n_only_b=int(pm.only[j, i]), mean_a=float(pm.mean[i, j]), mean_b=float(pm.mean[j, i]),
            diff=float(diff[k]), se_unpaired=float(se_un[i, j]), se_paired=float(se_pa[i, j]),
            se_clustered_paired=None if se_cl is None else float(se_cl[i, j]),
            n_clusters=None if pm.n_clusters is None else int(pm.n_clusters[i, j]),
            ci=(float(ci[k, 0]), float(ci[k, 1])), z=float(z[k]), p_value=float(p[k]),
            p_holm=float(p_holm[k]), p_bh=float(p_bh[k]), correlation=float(corr[i, j]),
            mcnemar=mc, level=level, cluster_correction=cluster_correction if codes is not None else None,
        ))
    return Comparisons(tuple(pairs), skipped)


def compare(ds: xr.Dataset, a: str, b: str, **kwargs) -> Comparison:
    """One pair in depth: ``A − B`` (M5–M8, McNemar).  See :func:`compare_all`."""
    if a == b:
        raise InputError(f"compare needs two different models (got '{a}' twice).")
    comps = compare_all(ds, [a, b], **kwargs)
    if not comps.pairs:
        raise InputError(f"'{a}' and '{b}' share {comps.skipped[0][2]} question(s); a paired "
                         "comparison needs at least 2.")
    return comps.pairs[0]


def pair_caveats(ds: xr.Dataset, comps: Comparisons) -> list:
    """Warnings about the comparisons: unpaired drops, McNemar under clustering."""
    out = [caveats.unpaired_dropped(c.a, c.b, c.n_questions, c.n_only_a, c.n_only_b)
           for c in comps if c.n_only_a or c.n_only_b]
    out += [caveats.pair_skipped(a, b, n) for a, b, n in comps.skipped]
    if "cluster" in ds.coords and any(c.mcnemar is not None for c in comps):
        out.append(caveats.mcnemar_clustered())
    return out
