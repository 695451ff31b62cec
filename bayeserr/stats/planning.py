"""Planning: questions needed, minimum detectable effect, tie zones (SPEC §4).

All answers are analytic (normal approximation), so each can be checked by
simulation.  ``alpha`` is two-sided; ``power`` is ``1 − β``.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

import numpy as np

from bayeserr.base.errors import InputError, describe, row_list, suggest
from bayeserr.base.registry import check_level
from bayeserr.stats.estimators import normal_quantile, se_clt, variance_components, z_value

if TYPE_CHECKING:
    import xarray as xr

# planning without a pilot file imports neither xarray, pandas nor scipy: the data layer and
# scipy.optimize are imported where a pilot or a tie-zone root needs them (``bayeserr power`` starts fast)

#: An example value of each planning input, for messages.
_EXAMPLES = {"delta": "0.03 for a 3-point difference", "n": "500 questions", "alpha": "0.05",
             "power": "0.8", "rho": "0.6", "level": "0.95"}


def check_number(name: str, value, example: str | None = None) -> float:
    """``value`` as a float if it is a real number, else an :class:`InputError`
    naming ``name``, what was given and an example.

    The shared type check of every planning input (the API boundary of
    :mod:`bayeserr.stats.planning` and :func:`bayeserr.plan`): text such as
    ``"0.03"``, ``None``, ``True`` or a list is refused here rather than
    failing later with a TypeError from a comparison.  NaN and ±∞ pass, so
    the range check that follows names the allowed range.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        example = example or _EXAMPLES.get(name)
        raise InputError(f"{name} must be a number (got {describe(value)})"
                         + (f"; e.g. {example}." if example else "."))
    return float(value)


def check_alpha_power(alpha, power) -> tuple[float, float]:
    """``alpha`` (two-sided) and ``power``: numbers in (0, 1)."""
    alpha, power = check_number("alpha", alpha), check_number("power", power)
    if not 0 < alpha < 1 or not 0 < power < 1:
        raise InputError(f"alpha and power must lie in (0, 1) (got alpha={alpha:g}, power={power:g}); "
                         "e.g. alpha 0.05, power 0.8.")
    return alpha, power


def _z_sum(alpha: float, power: float) -> float:
    """``z_{α/2} + z_β`` of (M9)/(M10)."""
    alpha, power = check_alpha_power(alpha, power)
    return z_value(1 - alpha) + normal_quantile(power)


def _check_variances(omega2, sigma2_a, sigma2_b, k_a, k_b) -> None:
    """Planning inputs of (M9)/(M10): variances ≥ 0, sample counts ≥ 1 (NaN rejected)."""
    for name, v in (("omega2", omega2), ("sigma2_a", sigma2_a), ("sigma2_b", sigma2_b)):
        check_number(name, v, "0.11, or estimate it from a pilot (--pilot)")
        if not v >= 0 or not math.isfinite(v):
            raise InputError(f"{name} is a variance and must be a finite number ≥ 0 (got {v}); "
                             "estimate it from a pilot (--pilot) if unsure.")
    for name, v in (("k_a", k_a), ("k_b", k_b)):
        check_number(f"{name} (answers per question)", v, "1")
        if not v >= 1 or not math.isfinite(v):
            raise InputError(f"{name} (answers per question) must be at least 1 (got {v}).")


def _check_deff(deff) -> None:
    check_number("the design effect (deff)", deff, "1.5")
    if not deff >= 1 or not math.isfinite(deff):
        raise InputError(f"the design effect must be a finite number ≥ 1 (got {deff}); a clustered "
                         "design is never credited with more information than independent questions.")


def _check_n(n) -> None:
    check_number("n", n)
    if not n > 0 or not math.isfinite(n):
        raise InputError(f"n must be a positive number of questions (got {n}).")


def _check_p(name: str, p) -> None:
    check_number(name, p, "0.75")
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
    :class:`~bayeserr.base.errors.InputError` (a negative ICC would promise fewer
    questions than independent ones need; a pilot's negative estimate is
    floored by :func:`from_pilot`, not passed here).
    """
    check_number("the cluster size (questions per cluster)", cluster_size, "10")
    check_number("icc (intra-cluster correlation)", icc, "0.1")
    if not cluster_size >= 1 or not math.isfinite(cluster_size):
        raise InputError(f"cluster size (questions per cluster) must be at least 1 (got {cluster_size}).")
    if not 0 <= icc < 1:
        raise InputError(f"icc (intra-cluster correlation) must lie in [0, 1) for planning (got {icc}); "
                         "a negative estimate is noise: use 0.")
    return 1.0 + (cluster_size - 1.0) * icc


#: more questions than any eval could hold: a plan beyond it is an input mistake, not a plan
MAX_QUESTIONS = 1e15


def n_required(delta: float, omega2: float, sigma2_a: float = 0.0, sigma2_b: float = 0.0,
               k_a: float = 1, k_b: float = 1, *, alpha: float = 0.05, power: float = 0.8,
               deff: float = 1.0) -> float:
    """(M9) questions for a paired comparison to detect ``delta``::

        n = (z_{α/2} + z_β)² (ω² + σ_A²/K_A + σ_B²/K_B) / δ²

    multiplied by the design effect ``deff`` (≥ 1) for clustered designs.
    Returns the unrounded n (round up to plan).  Out-of-range inputs
    (``delta`` ≤ 0 or NaN, negative variances, ``alpha``/``power`` outside
    (0, 1), ``deff`` < 1) or inputs that are not numbers raise
    :class:`~bayeserr.base.errors.InputError`.
    """
    check_number("delta", delta)
    if not delta > 0 or not math.isfinite(delta):
        raise InputError(f"delta must be a positive difference (got {delta}); e.g. 0.03 for 3 points.")
    _check_deff(deff)
    z = _z_sum(alpha, power)
    n = z**2 * paired_variance(omega2, sigma2_a, sigma2_b, k_a, k_b) * deff / delta / delta  # δ² can underflow
    if not math.isfinite(n) or n > MAX_QUESTIONS:
        raise InputError(f"delta {delta:g} is too small to plan for: it would take more than "
                         f"{MAX_QUESTIONS:.0e} questions. Give the smallest difference that matters, "
                         "e.g. --delta 0.01 for 1 point.")
    return n


def mde(n: float, omega2: float, sigma2_a: float = 0.0, sigma2_b: float = 0.0,
        k_a: float = 1, k_b: float = 1, *, alpha: float = 0.05, power: float = 0.8,
        deff: float = 1.0) -> float:
    """(M10) minimum detectable effect with n questions: (M9) solved for δ,
    ``δ = (z_{α/2} + z_β) sqrt(deff (ω² + σ_A²/K_A + σ_B²/K_B) / n)``.
    """
    _check_n(n)
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
        raise InputError(f"the two accuracies are equal ({p_a:g}): no sample size detects a zero "
                         "difference. Give a --target (or the second --unpaired value) that differs "
                         "from the baseline.")
    return _z_sum(alpha, power) ** 2 * (p_a * (1 - p_a) + p_b * (1 - p_b)) / delta**2


def rho_range(p_a: float, p_b: float) -> tuple[float, float]:
    """The correlations two 0/1 scores with accuracies ``p_a`` and ``p_b`` can have.

    The joint 2×2 table has ``P(both right) = p_A p_B + ρ sqrt(p_A(1 − p_A) p_B(1 − p_B))``
    and every cell must be ≥ 0, so ``P(both right)`` lies between
    ``max(0, p_A + p_B − 1)`` and ``min(p_A, p_B)`` (the Fréchet bounds);
    returns the ρ at those two ends (``docs/methods.md`` §4.6).
    """
    _check_p("p_a", p_a)
    _check_p("p_b", p_b)
    s = math.sqrt(p_a * (1 - p_a) * p_b * (1 - p_b))
    return ((max(0.0, p_a + p_b - 1) - p_a * p_b) / s, (min(p_a, p_b) - p_a * p_b) / s)


def _omega2_binary(p_a: float, p_b: float, rho: float) -> float:
    var_a, var_b = p_a * (1 - p_a), p_b * (1 - p_b)
    return var_a + var_b - 2 * rho * math.sqrt(var_a * var_b)


def _check_rho(p_a: float, p_b: float, rho: float) -> None:
    check_number("rho", rho)
    if not -1 <= rho <= 1:
        raise InputError(f"rho is a correlation and must lie in [−1, 1] (got {rho}).")
    low, high = rho_range(p_a, p_b)
    if not low - 1e-12 <= rho <= high + 1e-12:
        # printed inward (3 decimals), so every value shown is itself feasible
        lo, hi = math.ceil(low * 1000) / 1000, math.floor(high * 1000) / 1000
        raise InputError(
            f"rho = {rho:g} is impossible for 0/1 answers with accuracies {p_a:g} and {p_b:g}: the "
            f"joint 2×2 table of the two models' answers would need a negative cell. With these "
            f"accuracies rho must lie in [{lo:.3f}, {hi:.3f}] (the Fréchet bounds).")


def omega2_binary(p_a: float, p_b: float, rho: float) -> float:
    """ω² of (M9) for 0/1 scores with one answer per question, from the two
    accuracies and the correlation ρ of the models' answers on the same
    question (``docs/methods.md`` §4.6)::

        ω² = Var(s_A − s_B) = p_A(1 − p_A) + p_B(1 − p_B) − 2ρ sqrt(p_A(1 − p_A) p_B(1 − p_B))

    With one 0/1 answer per question (K = 1) the answer noise cannot be told
    apart from the question effect, so ω² holds all the variance and σ² = 0
    in (M9), as when planning from a K = 1 pilot (§4.5).  ρ must lie within
    :func:`rho_range` (the implied 2×2 table must have no negative cell),
    else :class:`~bayeserr.base.errors.InputError` names the allowed range.
    """
    _check_p("p_a", p_a)
    _check_p("p_b", p_b)
    _check_rho(p_a, p_b, rho)
    return max(_omega2_binary(p_a, p_b, rho), 0.0)


def mde_binary(n: float, p: float, rho: float, *, alpha: float = 0.05, power: float = 0.8,
               deff: float = 1.0) -> float:
    """(M10) for 0/1 scores given as a baseline accuracy ``p`` and correlation
    ``rho``: the smallest δ > 0 with ``δ = (z_{α/2} + z_β) sqrt(deff ω²(p, p + δ, ρ) / n)``,
    ω² from :func:`omega2_binary` (it depends on δ through the target accuracy
    ``p + δ``, so the equation is solved numerically).  Raises
    :class:`~bayeserr.base.errors.InputError` when no gap up to ``1 − p`` is
    detectable, or when ρ is impossible at the solution.
    """
    _check_n(n)
    _check_p("p", p)
    check_number("rho", rho)
    if not -1 <= rho <= 1:
        raise InputError(f"rho is a correlation and must lie in [−1, 1] (got {rho}).")
    _check_deff(deff)
    z = _z_sum(alpha, power)

    def gap(d):  # ≥ 0 once δ is detectable
        return d - z * math.sqrt(deff * max(_omega2_binary(p, p + d, rho), 0.0) / n)

    grid = np.linspace(0.0, 1.0 - p, 2001)[1:-1]
    values = np.array([gap(d) for d in grid])
    hit = np.flatnonzero(values >= 0)
    if hit.size == 0:
        raise InputError(f"with n = {n:g} questions no gap up to {1 - p:g} (target accuracy 1) is "
                         f"detectable at alpha {alpha:g} and power {power:.0%}: give a larger --n.")
    i = int(hit[0])
    low = 1e-12 if i == 0 else float(grid[i - 1])
    from scipy.optimize import brentq
    delta = low if gap(low) >= 0 else float(brentq(gap, low, float(grid[i]), xtol=1e-14))
    try:
        _check_rho(p, p + delta, rho)
    except InputError as exc:
        raise InputError(f"at the minimum detectable effect {delta:.4f} (target accuracy "
                         f"{p + delta:.4f}): {exc}") from None
    return delta


def tie_zone(p: float, n: float, level: float = 0.95) -> float:
    """Half-width of the interval of an unpaired difference at accuracy p (SPEC §3)::

        z · sqrt(2 p (1 − p) / n)

    A gap smaller than this cannot be ranked by the benchmark.
    """
    check_number("the accuracy p", p, "0.75")
    check_number("level", level)
    level = check_level(level, "level")
    if not 0 <= p <= 1:
        raise InputError(f"the accuracy p must lie in [0, 1] (got {p}).")
    _check_n(n)
    return z_value(level) * math.sqrt(2 * p * (1 - p) / n)


def n_for_tie_zone(width: float, p: float, level: float = 0.95) -> float:
    """Questions for the unpaired tie zone at accuracy p to shrink to ``width``.

    :func:`tie_zone` solved for n: ``n = z² · 2 p (1 − p) / width²``.  This is
    the "resolution" criterion (a gap of ``width`` just reaches significance,
    i.e. 50% power), not an 80%-power plan; see :func:`n_unpaired` for that.
    """
    check_number("the tie-zone width", width, "0.03 for 3 points")
    check_number("level", level)
    level = check_level(level, "level")
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


def check_pilot(ds, a, b) -> tuple[xr.Dataset, str, str]:
    """The pilot of :func:`from_pilot`: a dataset from :func:`bayeserr.load`
    (the contract :func:`~bayeserr.stats.view.check_dataset` checks) and two
    different models of it; an :class:`InputError` naming the fix otherwise."""
    from bayeserr.stats.view import check_dataset, model_names
    ds = check_dataset(ds)
    a, b = (model_names([m], "pilot", "from_pilot(ds, 'A', 'B')")[0] for m in (a, b))
    if a == b:
        raise InputError(f"pilot: planning from a pilot needs two different models (got '{a}' twice); "
                         "name the two models to compare, e.g. from_pilot(ds, 'A', 'B').")
    names = [str(m) for m in ds["model"].values]
    for m in (a, b):
        if m not in names:
            raise InputError(f"pilot: model '{m}' is not in the data.{suggest(m, names)} "
                             f"Models: {row_list(names)}.")
    return ds, a, b


def _pilot_pair(ds: xr.Dataset, a: str, b: str):
    from bayeserr.data.dataset import question_means
    names = [str(m) for m in ds["model"].values]
    s, _ = question_means(ds)
    ia, ib = names.index(a), names.index(b)
    both = ~np.isnan(s[ia]) & ~np.isnan(s[ib])
    return s[ia, both], s[ib, both], both, ds["score"].values[[ia, ib]][:, both]


def from_pilot(ds: xr.Dataset, a: str, b: str) -> PilotEstimates:
    """Estimate ω², σ², ρ and ρ_icc for (M9)/(M10) from an existing results file.

    With K > 1, ``Var(x)`` is the between-question component of
    :func:`~bayeserr.stats.estimators.variance_components` and ``σ²`` the within
    part; answer noise is independent across models, so ``Cov(x_A, x_B)`` is
    estimated by ``Cov(s_A, s_B)``.  With K = 1 the two cannot be separated
    and ``ω² = Var(s_A − s_B)`` (σ² set to 0), which is what the paired SE
    of a new eval with K = 1 will see.  With clusters, ρ_icc is read off the
    observed design effect of the differences: ``(deff − 1)/(m − 1)``.  A
    negative estimate is noise, not a discount (SPEC §4): it is kept in
    ``icc_estimate``, while ``icc`` and ``design_effect`` used for planning
    are floored at 0 and 1, and ``deff_floored`` says the floor applied.
    """
    ds, a, b = check_pilot(ds, a, b)
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
    from bayeserr.data.dataset import cluster_codes
    codes = cluster_codes(ds)
    if codes is not None:
        codes = codes[both]
        d = sa - sb
        from bayeserr.stats.fewclusters import cr2_mean
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
