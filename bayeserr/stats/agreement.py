"""Judge–human agreement on the labelled subset: Cohen's κ and Krippendorff's α
(``docs/methods.md`` §3.14).

Both take the columns of :mod:`bayeserr.stats.ppi` (``human`` with NaN where
unlabelled, ``judge`` on every question) and use the labelled questions only.

* (J10) Cohen's κ (Cohen 1960) from the k×k table of (human, judge)
  categories with proportions ``p_ab``, margins ``p_a·``, ``p_·b``::

      κ = (p_o − p_e)/(1 − p_e),   p_o = Σ_a p_aa,   p_e = Σ_a p_a· p_·a

  weighted (Cohen 1968) with disagreement weights ``v_ab`` (linear
  ``|a − b|/(k_max − k_min)`` or quadratic, on the category values):
  ``κ_w = 1 − Σ v_ab p_ab / Σ v_ab p_a· p_·b``.
* (J11) its large-sample SE, not under the null (Fleiss, Cohen & Everitt 1969):
  with agreement weights ``w = 1 − v``, ``w̄_a· = Σ_b p_·b w_ab``,
  ``w̄_·b = Σ_a p_a· w_ab`` and ``p_e = Σ w_ab p_a· p_·b``::

      Var κ̂ = [ Σ_ab p_ab (w_ab − (w̄_a· + w̄_·b)(1 − κ))² − (κ − p_e(1 − κ))² ] / (n (1 − p_e)²)

  interval ``κ ± z SE``.  Both through
  ``statsmodels.stats.inter_rater.cohens_kappa`` (imported when called).
* (J12) Krippendorff's α (Krippendorff 2004, 2011) for two coders and no
  missing values: every labelled question is a unit with two pairable values,
  the coincidence matrix ``o_ck`` counts each unit's ordered pairs (c, k) and
  (k, c), ``n_c = Σ_k o_ck``, ``n = Σ_c n_c = 2·units``::

      α = 1 − D_o / D_e,  D_o = Σ_ck o_ck δ²_ck / n,  D_e = Σ_ck n_c n_k δ²_ck / (n (n − 1))

  with ``δ²_ck = [c ≠ k]`` (nominal), ``(c − k)²`` (interval) or
  ``(Σ_{g=c}^{k} n_g − (n_c + n_k)/2)²`` (ordinal, over the ordered values
  between c and k).  Its interval: percentile bootstrap over questions (or
  over clusters, given cluster ids), seeded (J12).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from bayeserr.base.errors import InputError, describe
from bayeserr.base.jsonable import as_float
from bayeserr.base.registry import check_level, check_range
from bayeserr.stats.distributions import norm_ppf

METRICS = ("interval", "ordinal", "nominal")
KAPPA_WEIGHTS = (None, "linear", "quadratic")

#: ordinal α's bootstrap works on the k×k coincidence matrix of every draw: at most this many categories
MAX_ORDINAL_CATEGORIES = 200


def _labelled_pairs(human, judge, what: str):
    """The labelled (human, judge) pairs: 1-D, same length, judge finite where labelled."""
    from bayeserr.stats.ppi import as_column
    y, f = as_column(human, "human"), as_column(judge, "judge")
    if len(y) != len(f):
        raise InputError(f"human and judge must have one entry per question each (got lengths {len(y)} "
                         f"and {len(f)}); align them on question_id first.")
    lab = ~np.isnan(y)
    miss = lab & np.isnan(f)
    if miss.any():
        idx = ", ".join(str(int(i)) for i in np.flatnonzero(miss)[:5])
        raise InputError(f"judge is missing at labelled position(s) {idx}: {what} needs the judge's "
                         "score on every labelled question.")
    if lab.sum() < 2:
        raise InputError(f"{what} needs at least 2 labelled questions (got {int(lab.sum())}); label a "
                         "uniformly random subset of the questions.")
    return y[lab], f[lab], lab


# --------------------------------------------------------------------------- #
# Cohen's kappa
# --------------------------------------------------------------------------- #
@dataclass(frozen=True)
class Kappa:
    """Result of :func:`cohens_kappa` (J10, J11)."""

    kappa: float
    se: float                   #: large-sample SE, not under the null (J11)
    lower: float
    upper: float
    n: int                      #: labelled questions
    observed_agreement: float   #: ``p_o`` (weighted: ``1 − Σ v p_ab``)
    expected_agreement: float   #: ``p_e`` (weighted: ``1 − Σ v p_a· p_·b``)
    weights: str | None         #: None, "linear" or "quadratic"
    categories: tuple           #: the category values, ordered
    level: float
    note: str | None = None     #: why κ is undefined (NaN), if it is

    def to_dict(self) -> dict:
        return {"kappa": as_float(self.kappa), "se": as_float(self.se), "lower": as_float(self.lower),
                "upper": as_float(self.upper), "n": self.n,
                "observed_agreement": as_float(self.observed_agreement),
                "expected_agreement": as_float(self.expected_agreement), "weights": self.weights,
                "categories": [float(c) for c in self.categories], "level": self.level, "note": self.note}


def cohens_kappa(human, judge, *, weights=None, categories=None, level=0.95) -> Kappa:
    """Cohen's κ between human labels and the judge on the labelled questions,
    with its large-sample SE and interval ((J10), (J11); ``docs/methods.md`` §3.14).

    ``human`` (NaN where unlabelled) and ``judge`` hold category values
    (0/1, or ordered categories such as 1–5).  ``weights``: None (plain κ),
    ``"linear"`` or ``"quadratic"`` (weighted κ for ordered categories, on the
    category values).  ``categories``: the full list of possible values
    (default: those seen); a category neither coder used adds an empty row
    and column.  κ and its variance are statsmodels'
    ``cohens_kappa`` (Fleiss, Cohen & Everitt 1969); the interval is
    ``κ ± z SE`` at ``level``.  κ is NaN (with ``note``) when both coders
    used one category only (``p_e = 1``).  Questions are treated as
    independent.
    """
    if weights not in KAPPA_WEIGHTS:
        raise InputError(f"weights must be None, 'linear' or 'quadratic' (got {weights!r}).")
    level = check_level(level, "level")
    y, f, _ = _labelled_pairs(human, judge, "Cohen's κ")
    seen = np.unique(np.r_[y, f])
    if categories is None:
        cats = seen
    else:
        try:
            cats = np.unique(np.asarray(categories, dtype=float))
        except (TypeError, ValueError):
            raise InputError(f"categories must be numbers (got {describe(categories)}).") from None
        extra = np.setdiff1d(seen, cats)
        if extra.size:
            raise InputError(f"values {', '.join(f'{v:g}' for v in extra[:5])} are not among the categories "
                             f"given ({', '.join(f'{v:g}' for v in cats[:10])}); add them or fix the labels.")
    k = len(cats)
    if k > 50:
        raise InputError(f"Cohen's κ needs categories, not continuous scores ({k} distinct values); "
                         "use krippendorff_alpha(metric='interval') for scores.")
    table = np.zeros((k, k))
    np.add.at(table, (np.searchsorted(cats, y), np.searchsorted(cats, f)), 1.0)
    n = len(y)
    z = float(norm_ppf(0.5 + level / 2))
    nan = math.nan
    row, col = table.sum(1) / n, table.sum(0) / n
    if k < 2 or (weights is None and np.isclose((row * col).sum(), 1.0)):
        return Kappa(nan, nan, nan, nan, n, 1.0, 1.0, weights, tuple(cats), level,
                     "both coders used a single category: κ is 0/0, undefined")
    from statsmodels.stats.inter_rater import cohens_kappa as sm_kappa

    if weights is None:
        res = sm_kappa(table)
        v = 1.0 - np.eye(k)
    else:
        res = sm_kappa(table, weights=cats, wt=weights)
        span = cats[-1] - cats[0]
        d = np.abs(cats[:, None] - cats[None, :]) / span
        v = d if weights == "linear" else d**2
    p_obs = 1.0 - (v * table).sum() / n
    p_exp = 1.0 - (v * np.outer(row, col)).sum()
    kappa = float(res.kappa)
    se = float(np.sqrt(res.var_kappa)) if res.var_kappa >= 0 else nan
    return Kappa(kappa, se, kappa - z * se, kappa + z * se, n, float(p_obs), float(p_exp), weights,
                 tuple(float(c) for c in cats), level)


# --------------------------------------------------------------------------- #
# Krippendorff's alpha
# --------------------------------------------------------------------------- #
@dataclass(frozen=True)
class Alpha:
    """Result of :func:`krippendorff_alpha` (J12)."""

    alpha: float
    lower: float               #: percentile bootstrap interval (J12)
    upper: float
    metric: str
    n: int                     #: labelled questions (units)
    observed_disagreement: float   #: ``D_o``
    expected_disagreement: float   #: ``D_e``
    level: float
    draws: int
    seed: int
    resampled: str             #: "questions" or "clusters"
    draws_undefined: int = 0   #: bootstrap draws with ``D_e = 0`` (α undefined), left out
    note: str | None = None

    def to_dict(self) -> dict:
        return {"alpha": as_float(self.alpha), "lower": as_float(self.lower), "upper": as_float(self.upper),
                "metric": self.metric, "n": self.n,
                "observed_disagreement": as_float(self.observed_disagreement),
                "expected_disagreement": as_float(self.expected_disagreement), "level": self.level,
                "draws": self.draws, "seed": self.seed, "resampled": self.resampled,
                "draws_undefined": self.draws_undefined, "note": self.note}


def _alpha_interval(a, b, W):
    """Interval-metric α for unit weights ``W`` (B, n) (J12): moments only.

    With ``N = 2 Σ w`` pairable values, ``Σ_{i≠j}(v_i − v_j)² = 2 N S₂ − 2 S₁²``
    and ``Σ_ck o_ck (c − k)² = 2 Σ_u w_u (a_u − b_u)²``.
    """
    N = 2.0 * W.sum(-1)
    do = 2.0 * (W @ (a - b) ** 2) / N
    s1, s2 = W @ (a + b), W @ (a * a + b * b)
    with np.errstate(invalid="ignore", divide="ignore"):
        de = (2.0 * N * s2 - 2.0 * s1 * s1) / (N * (N - 1.0))
    return do, de


def _alpha_categorical(ia, ib, k, W, metric):
    """Nominal / ordinal α for unit weights ``W`` (B, n) from coincidence matrices (J12)."""
    B = W.shape[0]
    pair = np.zeros((len(ia), k * k))
    pair[np.arange(len(ia)), ia * k + ib] += 1.0
    pair[np.arange(len(ia)), ib * k + ia] += 1.0
    O = (W @ pair).reshape(B, k, k)                     # coincidence matrices
    nc = O.sum(-1)                                      # (B, k) value frequencies
    N = nc.sum(-1)
    if metric == "nominal":
        delta = np.broadcast_to(1.0 - np.eye(k), (B, k, k))
    else:
        cum = np.cumsum(nc, axis=-1)                    # Σ_{g ≤ c} n_g
        lo = np.minimum.outer(np.arange(k), np.arange(k))
        hi = np.maximum.outer(np.arange(k), np.arange(k))
        # Σ_{g=lo}^{hi} n_g − (n_lo + n_hi)/2
        between = cum[:, hi] - cum[:, lo] + nc[:, lo]
        delta = (between - (nc[:, lo] + nc[:, hi]) / 2.0) ** 2
    do = (O * delta).sum((-1, -2)) / N
    with np.errstate(invalid="ignore", divide="ignore"):
        de = (nc[:, :, None] * nc[:, None, :] * delta).sum((-1, -2)) / (N * (N - 1.0))
    return do, de


def _alpha_stats(a, b, W, metric, cats):
    if metric == "interval":
        return _alpha_interval(a, b, W)
    ia, ib = np.searchsorted(cats, a), np.searchsorted(cats, b)
    k = len(cats)
    out_o, out_e = np.empty(W.shape[0]), np.empty(W.shape[0])
    step = max(1, int(2**22 // max(k * k, len(a))))      # bound the (draws, k, k) arrays
    for j in range(0, W.shape[0], step):
        out_o[j:j + step], out_e[j:j + step] = _alpha_categorical(ia, ib, k, W[j:j + step], metric)
    return out_o, out_e


def krippendorff_alpha(human, judge, *, metric="interval", codes=None, level=0.95, draws=2000,
                       seed=0) -> Alpha:
    """Krippendorff's α between human labels and the judge on the labelled
    questions, with a seeded percentile-bootstrap interval ((J12);
    ``docs/methods.md`` §3.14).

    Two coders (human, judge), no missing value within the labelled subset.
    ``metric``: ``"interval"`` (squared differences: scores), ``"ordinal"``
    (ranks of the ordered values, for rating scales; at most
    :data:`MAX_ORDINAL_CATEGORIES` distinct values) or ``"nominal"``.
    The interval resamples labelled questions with replacement (``draws``
    times, ``numpy.random.default_rng(seed)``), or whole clusters when
    ``codes`` (one cluster id per question) is given; draws where α is
    undefined (every value equal, ``D_e = 0``) are left out and counted.
    α is NaN (with ``note``) when the labelled values are all equal.
    """
    if metric not in METRICS:
        raise InputError(f"metric must be one of {', '.join(METRICS)} (got {metric!r}).")
    level = check_level(level, "level")
    draws = int(check_range("draws", draws, 1, None, integer=True))
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise InputError(f"seed must be a whole number (got {describe(seed)}).")
    y, f, lab = _labelled_pairs(human, judge, "Krippendorff's α")
    n = len(y)
    cats = np.unique(np.r_[y, f])
    if metric == "ordinal" and len(cats) > MAX_ORDINAL_CATEGORIES:
        raise InputError(f"the ordinal metric needs a rating scale, not continuous scores ({len(cats)} "
                         f"distinct values, at most {MAX_ORDINAL_CATEGORIES}); use metric='interval'.")
    do, de = _alpha_stats(y, f, np.ones((1, n)), metric, cats)
    do, de = float(do[0]), float(de[0])
    resampled = "questions"
    nan = math.nan
    if not de > 0:
        return Alpha(nan, nan, nan, metric, n, do, de, level, draws, int(seed), resampled, 0,
                     "every labelled value is the same: α is 0/0, undefined")
    alpha = 1.0 - do / de
    rng = np.random.default_rng(seed)
    inv = None
    m = n
    if codes is not None:
        c = np.asarray(codes)
        if c.ndim != 1 or len(c) != len(lab):
            raise InputError(f"codes must hold one cluster id per question ({len(lab)}), got shape {c.shape}.")
        try:
            _, inv = np.unique(c[lab], return_inverse=True)
        except TypeError:
            raise InputError("codes must be cluster ids of one sortable type.") from None
        inv = inv.reshape(-1)
        m = int(inv.max()) + 1
        if m < 2:
            raise InputError("the labelled questions all lie in one cluster: a cluster bootstrap needs at "
                             "least 2 clusters with labels.")
        resampled = "clusters"
    stats = np.empty(draws)
    step = max(1, int(2**22 // max(n, m)))
    for j in range(0, draws, step):
        b = min(step, draws - j)
        cnt = rng.multinomial(m, np.full(m, 1.0 / m), size=b).astype(float)
        o, e = _alpha_stats(y, f, cnt if inv is None else cnt[:, inv], metric, cats)
        with np.errstate(invalid="ignore", divide="ignore"):
            stats[j:j + b] = np.where(e > 0, 1.0 - o / e, np.nan)
    ok = np.isfinite(stats)
    lo, hi = (np.quantile(stats[ok], [(1 - level) / 2, (1 + level) / 2]) if ok.any() else (nan, nan))
    return Alpha(alpha, float(lo), float(hi), metric, n, do, de, level, draws, int(seed), resampled,
                 int((~ok).sum()))
