"""Planning: questions needed, minimum detectable effect, tie zones (SPEC §4).

All answers are analytic (normal approximation), so each can be checked by
simulation.  ``alpha`` is two-sided; ``power`` is ``1 − β``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
import xarray as xr
from scipy import stats

from .data import cluster_codes, question_means
from .errors import InputError
from .estimators import se_clt, se_clustered, variance_components, z_value


def _z_sum(alpha: float, power: float) -> float:
    """``z_{α/2} + z_β`` of (M9)/(M10)."""
    if not 0 < alpha < 1 or not 0 < power < 1:
        raise InputError(f"alpha and power must lie in (0, 1) (got alpha={alpha}, power={power}); "
                         "e.g. alpha 0.05, power 0.8.")
    return z_value(1 - alpha) + float(stats.norm.ppf(power))


def _check_variances(omega2, sigma2_a, sigma2_b, k_a, k_b) -> None:
    """Planning inputs of (M9)/(M10): variances ≥ 0, sample counts ≥ 1 (NaN rejected)."""
    for name, v in (("omega2", omega2), ("sigma2_a", sigma2_a), ("sigma2_b", sigma2_b)):
        if not v >= 0 or not math.isfinite(v):
            raise InputError(f"{name} is a variance and must be a finite number ≥ 0 (got {v}); "
                             "estimate it from a pilot (--pilot) if unsure.")
    for name, v in (("k_a", k_a), ("k_b", k_b)):
        if not v >= 1 or not math.isfinite(v):
            raise InputError(f"{name} (answers per question) must be at least 1 (got {v}).")


def _check_deff(deff) -> None:
    if not deff >= 1 or not math.isfinite(deff):
        raise InputError(f"the design effect must be a finite number ≥ 1 (got {deff}); a clustered "
                         "design is never credited with more information than independent questions.")


def _check_p(name: str, p) -> None:
    if not 0 < p < 1:
        raise InputError(f"{name} is an accuracy and must lie strictly between 0 and 1 (got {p}).")


def paired_variance(omega2: float, sigma2_a: float = 0.0, sigma2_b: float = 0.0,
                    k_a: float = 1, k_b: float = 1) -> float:
    """The variance term of (M9): ``ω² + σ_A²/K_A + σ_B²/K_B``."""
    _check_variances(omega2, sigma2_a, sigma2_b, k_a, k_b)
    return omega2 + sigma2_a / k_a + sigma2_b / k_b


def design_effect_icc(cluster_size: float, icc: float) -> float:
    """Design effect of equal clusters of ``m`` questions: ``1 + (m − 1) ρ_icc`` (SPEC §4).

    For planning, ``m ≥ 1`` and ``0 ≤ ρ_icc < 1``; anything else raises
    :class:`~bayeserr.errors.InputError` (a negative ICC would promise fewer
    questions than independent ones need; a pilot's negative estimate is
    floored by :func:`from_pilot`, not passed here).
    """
    if not cluster_size >= 1 or not math.isfinite(cluster_size):
        raise InputError(f"cluster size (questions per cluster) must be at least 1 (got {cluster_size}).")
    if not 0 <= icc < 1:
        raise InputError(f"icc (intra-cluster correlation) must lie in [0, 1) for planning (got {icc}); "
                         "a negative estimate is noise: use 0.")
    return 1.0 + (cluster_size - 1.0) * icc


def n_required(delta: float, omega2: float, sigma2_a: float = 0.0, sigma2_b: float = 0.0,
               k_a: float = 1, k_b: float = 1, *, alpha: float = 0.05, power: float = 0.8,
               deff: float = 1.0) -> float:
    """(M9) questions for a paired comparison to detect ``delta``::

        n = (z_{α/2} + z_β)² (ω² + σ_A²/K_A + σ_B²/K_B) / δ²

    multiplied by the design effect ``deff`` (≥ 1) for clustered designs.
    Returns the unrounded n (round up to plan).  Out-of-range inputs
    (``delta`` ≤ 0 or NaN, negative variances, ``alpha``/``power`` outside
    (0, 1), ``deff`` < 1) raise :class:`~bayeserr.errors.InputError`.
    """
    if not delta > 0 or not math.isfinite(delta):
        raise InputError(f"delta must be a positive difference (got {delta}); e.g. 0.03 for 3 points.")
    _check_deff(deff)
    z = _z_sum(alpha, power)
    return z**2 * paired_variance(omega2, sigma2_a, sigma2_b, k_a, k_b) * deff / delta**2


def mde(n: float, omega2: float, sigma2_a: float = 0.0, sigma2_b: float = 0.0,
        k_a: float = 1, k_b: float = 1, *, alpha: float = 0.05, power: float = 0.8,
        deff: float = 1.0) -> float:
    """(M10) minimum detectable effect with n questions: (M9) solved for δ::

        δ = (z_{α/2} + z_β) sqrt( deff (ω² + σ_A²/K_A + σ_B²/K_B) / n )
    """
    if not n > 0 or not math.isfinite(n):
        raise InputError(f"n must be a positive number of questions (got {n}).")
    _check_deff(deff)
    z = _z_sum(alpha, power)
    return z * math.sqrt(paired_variance(omega2, sigma2_a, sigma2_b, k_a, k_b) * deff / n)


def n_unpaired(p_a: float, p_b: float, *, alpha: float = 0.05, power: float = 0.8) -> float:
    """Questions per model to detect ``p_A − p_B`` between independent proportions::

        n = (z_{α/2} + z_β)² (p_A(1 − p_A) + p_B(1 − p_B)) / δ²

    ``p_a`` and ``p_b`` must lie strictly between 0 and 1.
    """
    _check_p("p_a", p_a)
    _check_p("p_b", p_b)
    delta = abs(p_a - p_b)
    if delta == 0:
        raise InputError("p_a and p_b are equal: no sample size detects a zero difference.")
    return _z_sum(alpha, power) ** 2 * (p_a * (1 - p_a) + p_b * (1 - p_b)) / delta**2


def tie_zone(p: float, n: float, level: float = 0.95) -> float:
    """Half-width of the interval of an unpaired difference at accuracy p (SPEC §3)::

        z · sqrt(2 p (1 − p) / n)

    A gap smaller than this cannot be ranked by the benchmark.
    """
    if not 0 <= p <= 1:
        raise InputError(f"the accuracy p must lie in [0, 1] (got {p}).")
    if not n > 0 or not math.isfinite(n):
        raise InputError(f"n must be a positive number of questions (got {n}).")
    return z_value(level) * math.sqrt(2 * p * (1 - p) / n)


def n_for_tie_zone(width: float, p: float, level: float = 0.95) -> float:
    """Questions for the unpaired tie zone at accuracy p to shrink to ``width``.

    :func:`tie_zone` solved for n: ``n = z² · 2 p (1 − p) / width²``.  This is
    the "resolution" criterion (a gap of ``width`` just reaches significance,
    i.e. 50% power), not an 80%-power plan; see :func:`n_unpaired` for that.
    """
    if not width > 0 or not math.isfinite(width):
        raise InputError(f"the tie-zone width must be positive (got {width}); e.g. 0.03 for 3 points.")
    _check_p("p", p)
    return z_value(level) ** 2 * 2 * p * (1 - p) / width**2


@dataclass(frozen=True)
class PilotEstimates:
    """Planning inputs estimated from a pilot results file (SPEC §4)."""

    a: str
    b: str
    n_pilot: int
    omega2: float  #: Var(x_A) + Var(x_B) − 2 Cov(x_A, x_B)
    sigma2_a: float  #: E[σ²] of A (0 when K = 1: then ω² holds all the variance)
    sigma2_b: float
    k_a: float
    k_b: float
    correlation: float
    icc: float | None  #: ρ_icc of the differences used for planning (the estimate, floored at 0)
    cluster_size: float | None  #: size-weighted mean questions per cluster, Σ n_c² / n = n / C_eff
    design_effect: float  #: 1 + (m − 1) ρ_icc, never below 1; 1 without clusters
    icc_estimate: float | None = None  #: the pilot's raw ρ_icc estimate (may be < 0: noise)
    deff_floored: bool = False  #: the raw estimate was < 0 and the design effect was floored at 1

    def to_dict(self) -> dict:
        return asdict(self)


def _pilot_pair(ds: xr.Dataset, a: str, b: str):
    names = [str(m) for m in ds["model"].values]
    for m in (a, b):
        if m not in names:
            from .errors import suggest
            raise InputError(f"pilot: model '{m}' is not in the data.{suggest(m, names)}")
    s, _ = question_means(ds)
    ia, ib = names.index(a), names.index(b)
    both = ~np.isnan(s[ia]) & ~np.isnan(s[ib])
    return s[ia, both], s[ib, both], both, ds["score"].values[[ia, ib]][:, both]


def from_pilot(ds: xr.Dataset, a: str, b: str) -> PilotEstimates:
    """Estimate ω², σ², ρ and ρ_icc for (M9)/(M10) from an existing results file.

    With K > 1, ``Var(x)`` is the between-question component of
    :func:`~bayeserr.estimators.variance_components` and ``σ²`` the within
    part; answer noise is independent across models, so ``Cov(x_A, x_B)`` is
    estimated by ``Cov(s_A, s_B)``.  With K = 1 the two cannot be separated
    and ``ω² = Var(s_A − s_B)`` (σ² set to 0), which is what the paired SE
    of a new eval with K = 1 will see.  With clusters, ρ_icc is read off the
    observed design effect of the differences: ``(deff − 1)/(m − 1)``.  A
    negative estimate is noise, not a discount (SPEC §4): it is kept in
    ``icc_estimate``, while ``icc`` and ``design_effect`` used for planning
    are floored at 0 and 1, and ``deff_floored`` says the floor applied.
    """
    sa, sb, both, answers = _pilot_pair(ds, a, b)
    cov = float(np.cov(sa, sb, ddof=1)[0, 1])
    comps = [variance_components(answers[j]) for j in (0, 1)]
    k = [float(np.sum(~np.isnan(answers[j]), axis=1).mean()) for j in (0, 1)]
    if all(c is not None for c in comps):
        var_x = [max(c.between_questions, 0.0) for c in comps]
        sig = [c.within_questions for c in comps]
        omega2 = max(var_x[0] + var_x[1] - 2 * cov, 0.0)
    else:
        sig = [0.0, 0.0]
        omega2 = float(np.var(sa - sb, ddof=1))
    icc = raw = m = None
    deff, floored = 1.0, False
    codes = cluster_codes(ds)
    if codes is not None:
        codes = codes[both]
        d = sa - sb
        from .fewclusters import cr2_mean
        sizes = np.bincount(np.unique(codes, return_inverse=True)[1]).astype(float)
        # size-weighted mean cluster size n / C_eff = Σ n_c² / n (Kish): with unequal
        # clusters the design effect grows with it, not with the plain mean size
        m = float((sizes**2).sum() / sizes.sum())
        plain = se_clt(d)
        cr2 = float(cr2_mean(d, codes).se) if sizes.size > 1 else float("nan")
        observed = (cr2 / plain) ** 2 if plain > 0 and np.isfinite(cr2) else 1.0
        raw = float((observed - 1) / (m - 1)) if m > 1 else 0.0
        floored = raw < 0
        icc = max(raw, 0.0)
        deff = 1.0 + (m - 1.0) * icc
    corr = float(np.corrcoef(sa, sb)[0, 1]) if np.std(sa) > 0 and np.std(sb) > 0 else float("nan")
    return PilotEstimates(a, b, int(sa.size), omega2, sig[0], sig[1], k[0], k[1], corr, icc, m, deff,
                          raw, floored)
