"""Numerics of the closed forms, each against an independent computation
(exact rational arithmetic, a hand derivation, or scipy's distributions):
the all-pairs moments where they cancel, variance components and the K
recommendation, the Korn–Graubard n_eff intervals, Jeffreys at the edges,
pass@k, and the paired tie zone.  Tolerances are machine precision unless a
comment says otherwise."""

import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import bayeserr
from bayeserr.bayes import BayesSettings
from bayeserr.stats.estimators import VarianceComponents, variance_components
from bayeserr.stats.exact import effective_n, proportion_interval
from bayeserr.stats.pairs import correlation, pair_moments
from bayeserr.stats.passk import pass_at_k

from .conftest import real_file

EPS = np.finfo(float).eps
Z95 = stats.norm.ppf(0.975)
OFF = BayesSettings(mode="off")


def _frame(scores: dict, clusters=None) -> pd.DataFrame:
    """Long frame from {model: per-question scores}, NaN = not answered."""
    rows = []
    for m, s in scores.items():
        for i, v in enumerate(s):
            if not np.isnan(v):
                rows.append({"model": m, "question_id": f"q{i:03d}", "score": float(v),
                             **({} if clusters is None else {"cluster_id": f"c{clusters[i]}"})})
    return pd.DataFrame(rows)


# ------------------------------------------------------------ all-pairs moments
def test_model_constant_on_the_shared_questions_has_undefined_correlation():
    """C answers 0 on the 40 questions it shares with A and B, and varies on
    20 more; its variance there is exactly 0, so ρ is undefined (NaN -> null),
    not the 1e-9 the moment expansion leaves."""
    rng = np.random.default_rng(0)
    n = 60
    a = np.where(np.arange(n) < 40, rng.integers(0, 4, n) / 3, np.nan)
    b = np.where(np.arange(n) < 40, rng.integers(0, 3, n) / 2, np.nan)
    c = np.where(np.arange(n) < 40, 0.0, rng.integers(1, 4, n) / 3)
    s = np.vstack([a, b, c])
    pm = pair_moments(s)
    assert pm.var[2, 0] == 0 and pm.var[2, 1] == 0 and pm.cov[0, 2] == 0 and pm.cov[2, 1] == 0
    r = correlation(pm)
    assert np.isnan(r[0, 2]) and np.isnan(r[2, 1])
    assert r[0, 1] == pytest.approx(np.corrcoef(a[:40], b[:40])[0, 1], rel=1e-12)
    comps = bayeserr.compare_all(bayeserr.load(_frame({"A": a, "B": b, "C": c})), on_unpaired="drop", bayes=OFF)
    got = {(x.a, x.b): x.to_dict()["correlation"] for x in comps}
    assert got[("A", "C")] is None or math.isnan(got[("A", "C")])
    assert got[("B", "C")] is None or math.isnan(got[("B", "C")])


def test_livebench_constant_models_have_no_correlation():
    """LiveBench: Qwen1.5-0.5B/1.8B-Chat score 0 on all 90 questions they share
    with Smaug-Qwen2-72B-Instruct and the two Mixtrals: six pairs whose
    correlation must be undefined.  Checked for every pair against the
    direct computation on the common questions."""
    path = real_file("livebench_20250113_per_question.csv.gz")
    comps = bayeserr.compare_all(bayeserr.load(path), on_unpaired="drop", bayes=OFF)
    wide = pd.read_csv(path).pivot(index="question_id", columns="model", values="score")
    col = {m: wide[m].to_numpy() for m in wide.columns}
    undefined = set()
    for c in comps:
        both = ~np.isnan(col[c.a]) & ~np.isnan(col[c.b])
        a, b = col[c.a][both], col[c.b][both]
        if np.ptp(a) == 0 or np.ptp(b) == 0:
            undefined.add(frozenset((c.a, c.b)))
            assert math.isnan(c.correlation), (c.a, c.b, c.correlation)
        else:
            assert c.correlation == pytest.approx(np.corrcoef(a, b)[0, 1], rel=1e-9, abs=1e-12)
    for small in ("Qwen1.5-0.5B-Chat", "Qwen1.5-1.8B-Chat"):
        for big in ("Smaug-Qwen2-72B-Instruct", "open-mixtral-8x22b", "open-mixtral-8x7b"):
            assert frozenset((small, big)) in undefined


@pytest.mark.parametrize("binary", [True, False])
def test_models_identical_on_the_shared_questions_give_exact_zeros(binary):
    """B = A on every question both answered, but B answered 40 more (so the
    two are centred differently).  The gap, the paired SEs and the z are
    exactly 0 and p is 1: before, se_paired came out 2.9e-9."""
    rng = np.random.default_rng(1)
    n = 200
    a = (rng.integers(0, 2, n) if binary else rng.integers(0, 4, n) / 3).astype(float)
    a[rng.random(n) < 0.2] = np.nan
    b = np.where(np.isnan(a), 1.0, a)
    clusters = np.arange(n) // 5
    ds = bayeserr.load(_frame({"A": a, "B": b, "C": rng.random(n)}, clusters))
    for corr in ("paper", "cr1"):
        c = next(x for x in bayeserr.compare_all(ds, on_unpaired="drop", cluster_correction=corr, bayes=OFF)
                 if {x.a, x.b} == {"A", "B"})
        assert c.diff == 0 and c.se_paired == 0
        assert c.se_clustered_paired == 0 and c.se_clustered_paired_paper == 0
        assert c.statistic == 0 and c.p_value == 1 and tuple(c.ci) == (0.0, 0.0)
        assert c.correlation == 1
        assert c.se_unpaired == pytest.approx(np.sqrt(2 * np.var(a[~np.isnan(a)], ddof=1) / c.n_questions),
                                              rel=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 40), st.sampled_from([2, 3, 7, 1000]))
def test_zero_is_zero_and_the_rest_is_unchanged(seed, n_common, grid):
    """Random models on a grid of score values (halves, thirds, sevenths,
    thousandths), some constant on the shared questions, some identical to
    another there: every variance, covariance and Var(d) is exactly 0 when
    (and only when) the direct computation on the common questions says so,
    and agrees with it to machine precision otherwise."""
    rng = np.random.default_rng(seed)
    m, extra = 6, 15
    n = n_common + extra
    s = rng.integers(0, grid + 1, (m, n)) / grid
    s[:, n_common:][rng.random((m, extra)) < 0.5] = np.nan  # own extra questions
    s[1, :n_common] = rng.integers(0, grid + 1) / grid  # constant where all answered
    s[2, :n_common] = s[0, :n_common]  # identical to model 0 there
    if grid == 2:
        s[3, :n_common] = s[4, :n_common] - 0.5  # a constant (exact) offset from model 4
    pm = pair_moments(s)
    for i in range(m):
        for j in range(m):
            both = ~np.isnan(s[i]) & ~np.isnan(s[j])
            a, b = s[i, both], s[j, both]
            if np.ptp(a) == 0:
                assert pm.var[i, j] == 0
            else:
                assert pm.var[i, j] == pytest.approx(np.var(a, ddof=1), rel=1e-12)
            if np.ptp(a - b) == 0:
                assert pm.var_d[i, j] == 0
            else:
                assert pm.var_d[i, j] == pytest.approx(np.var(a - b, ddof=1), rel=1e-11)
            if np.ptp(a) == 0 or np.ptp(b) == 0:
                assert pm.cov[i, j] == 0 and np.isnan(correlation(pm)[i, j])
            else:
                assert pm.cov[i, j] == pytest.approx(np.cov(a, b)[0, 1], rel=1e-10, abs=1e-15)


def test_clustered_sums_against_a_direct_loop():
    """Σ_c (Σ_{i∈c} (d_i − d̄))² of every pair against a plain loop over pairs
    and clusters, on fractional scores with missing answers."""
    rng = np.random.default_rng(2)
    m, n = 7, 300
    s = np.round(rng.beta(2, 3, (m, n)), 4)
    s[rng.random(s.shape) < 0.15] = np.nan
    codes = rng.integers(0, 17, n)
    pm = pair_moments(s, codes)
    for i in range(m):
        for j in range(m):
            if i == j:
                continue
            both = ~np.isnan(s[i]) & ~np.isnan(s[j])
            d = s[i, both] - s[j, both]
            e = d - d.mean()
            direct = sum(e[codes[both] == c].sum() ** 2 for c in np.unique(codes[both]))
            assert pm.cluster_ss[i, j] == pytest.approx(direct, rel=1e-12)
            assert pm.n_clusters[i, j] == np.unique(codes[both]).size


# ------------------------------------------------------------ variance components
def test_variance_components_against_a_hand_computation():
    """Five questions, K_i = 3, 2, 2, 3, 1 (NaN = no answer).  By hand:

    s_i = 2/3, 1, 1/2, 0, 1;  σ_i² (ddof 1, K_i ≥ 2) = 1/3, 0, 1/2, 0
    E[σ²]        = (1/3 + 0 + 1/2 + 0)/4              = 5/24
    mean σ_i²/K_i = (1/9 + 0 + 1/4 + 0)/4             = 13/144
    Var(s_i)     = Σ (s_i − 19/30)² / 4 = (620/900)/4 = 31/180
    Var(x)       = 31/180 − 13/144                    = 59/720
    K            = ⌊10 · (5/24) / (59/720)⌋ + 1 = ⌊1500/59⌋ + 1 = 26
    (check: (5/24)/26 = 0.00801 < (59/720)/10 = 0.00819 ≤ (5/24)/25 = 0.00833)
    """
    nan = np.nan
    answers = np.array([[1, 0, 1], [1, 1, nan], [0, 1, nan], [0, 0, 0], [1, nan, nan]])
    vc = variance_components(answers)
    assert vc.within_questions == pytest.approx(5 / 24, rel=4 * EPS)
    assert vc.between_questions == pytest.approx(59 / 720, rel=64 * EPS)
    assert vc.k_recommended == 26 and vc.between_clamped is False
    assert (Fraction(5, 24) / 26 < Fraction(59, 720) / 10 <= Fraction(5, 24) / 25)
    assert vc.to_dict() == {"between_questions": vc.between_questions, "within_questions": vc.within_questions,
                            "k_recommended": 26, "between_clamped": False}
    assert variance_components(answers[:, :1]) is None  # no question has two answers


def test_negative_between_variance_is_clamped_and_flagged():
    """Every question scores 1/2 (Var(s) = 0) with σ² = 1/2 and K = 2: the
    subtraction gives Var(x) = 0 − 1/4 < 0, reported as 0 and flagged, with
    no K recommendation (no K makes E[σ²]/K < 0)."""
    answers = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]])
    vc = variance_components(answers)
    assert vc.between_questions == 0.0 and vc.between_clamped is True
    assert vc.within_questions == 0.5 and vc.k_recommended is None
    assert vc.to_dict()["between_clamped"] is True
    assert VarianceComponents(0.1, 0.2, 21).between_clamped is False  # old constructor still works


def test_report_carries_the_clamp_flag():
    """In the report's JSON: A answers every question 1, 0, 1, 0 (Var(s) = 0,
    σ² = 1/3: clamped), B is right on every answer to the even questions and
    wrong on the odd ones (σ² = 0, Var(x) = Var(s) = 60 · ¼ / 59 = 15/59)."""
    rows = [(m, f"q{i}", k, float(k % 2 == 0) if m == "A" else float(i % 2 == 0))
            for m in ("A", "B") for i in range(60) for k in range(4)]
    ds = bayeserr.load(pd.DataFrame(rows, columns=["model", "question_id", "sample", "score"]))
    by = {m["model"]: m["variance"] for m in bayeserr.report(ds, bayes=OFF).to_dict()["models"]}
    assert by["A"] == {"between_questions": 0.0, "within_questions": pytest.approx(1 / 3, rel=4 * EPS),
                       "k_recommended": None, "between_clamped": True}
    assert by["B"]["between_clamped"] is False and by["B"]["within_questions"] == 0
    assert by["B"]["between_questions"] == pytest.approx(15 / 59, rel=4 * EPS)
    assert by["B"]["k_recommended"] == 1


# ------------------------------------------------------------ Korn–Graubard n_eff
def _wilson(x, n, z):
    p = x / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return np.array([centre - half, centre + half])


def test_effective_n_is_n_over_deff_floored_at_one():
    assert effective_n(200, 2.5) == 80.0
    assert effective_n(200, 1.0) == 200.0
    assert effective_n(200, 0.6) == 200.0  # never more information than n independent questions
    assert effective_n(200, float("nan")) == 200.0


@pytest.mark.parametrize("df", [1.0, 2.6, 11.0, 300.0])
def test_effective_n_has_korn_and_graubards_df_factor(df):
    """Korn & Graubard (1998): n_eff · (t_{n−1}/t_df)² at the interval's level (never above n_eff)."""
    for level in (0.9, 0.95):
        q = 0.5 + level / 2
        factor = min(1.0, stats.t.ppf(q, 199) / stats.t.ppf(q, df)) ** 2
        assert effective_n(200, 2.5, df, level) == pytest.approx(80.0 * factor, rel=1e-10)
    assert effective_n(200, 2.5, 1.0) < 0.03 * 80     # two clusters: t_1 = 12.7 against t_199 = 1.97
    assert effective_n(200, 2.5, float("nan")) == effective_n(200, 2.5, None) == 80.0


@pytest.mark.parametrize("x, n, deff", [(37, 200, 2.5), (12, 50, 1.7), (150, 151, 3.1), (0, 80, 2.0)])
def test_n_eff_intervals_against_closed_forms(x, n, deff):
    """Wilson and Clopper–Pearson on the fractional n_eff = n/deff with
    x_eff = x/deff: Wilson's closed form, and Clopper–Pearson's Beta
    quantiles (Beta(x, n − x + 1), Beta(x + 1, n − x)) from scipy."""
    ne = effective_n(n, deff)
    xe = x / n * ne
    np.testing.assert_allclose(proportion_interval(xe, ne, 0.95, "wilson"), _wilson(xe, ne, Z95),
                               rtol=1e-12, atol=1e-15)
    lo = stats.beta.ppf(0.025, xe, ne - xe + 1) if xe > 0 else 0.0
    hi = stats.beta.isf(0.025, xe + 1, ne - xe) if xe < ne else 1.0
    np.testing.assert_allclose(proportion_interval(xe, ne, 0.95, "clopper_pearson"), [lo, hi], rtol=1e-12)


def test_report_n_eff_intervals_use_the_reported_design_effect_and_its_floor():
    """Clusters of 4: in `pos` each cluster is all right or all wrong
    (deff > 1), in `neg` each holds two right and two wrong (residuals cancel
    within clusters: deff < 1, floored to 1).  The report's n_eff intervals
    equal Wilson / Clopper–Pearson on n / max(deff, 1) · (t_{n−1}/t_df)², deff and df
    as reported (Korn & Graubard 1998)."""
    rng = np.random.default_rng(4)
    n = 120
    cl = np.arange(n) // 4
    pos = np.repeat(rng.random(n // 4) < 0.6, 4).astype(float)
    neg = np.tile([1.0, 0.0, 1.0, 0.0], n // 4)
    rep = bayeserr.report(bayeserr.load(_frame({"pos": pos, "neg": neg}, cl)), bayes=OFF).to_dict()
    by = {m["model"]: m for m in rep["models"]}
    assert by["pos"]["design_effect"] > 2 and by["neg"]["design_effect"] < 1
    for m in by.values():
        ne = n / max(m["design_effect"], 1.0) * (stats.t.ppf(0.975, n - 1) / stats.t.ppf(0.975, m["df"])) ** 2
        xe = m["mean"] * ne
        np.testing.assert_allclose(m["intervals"]["wilson_clustered"], _wilson(xe, ne, Z95), rtol=1e-12)
        lo, hi = stats.beta.ppf(0.025, xe, ne - xe + 1), stats.beta.isf(0.025, xe + 1, ne - xe)
        np.testing.assert_allclose(m["intervals"]["clopper_pearson_clustered"], [lo, hi], rtol=1e-12)
    # the floor: deff < 1 credits no more than n questions (the df factor alone shrinks it)
    assert by["neg"]["intervals"]["wilson_clustered"][0] < by["neg"]["intervals"]["wilson"][0]


# ------------------------------------------------------------ Jeffreys at the edges
@pytest.mark.parametrize("n", [1, 7, 20, 500])
@pytest.mark.parametrize("level", [0.9, 0.95])
def test_jeffreys_edges_are_zero_and_one(n, level):
    """Brown, Cai & DasGupta (2001): at x = 0 the lower end is 0, at x = n the
    upper end is 1; the other end, and every interior interval, is the
    equal-tailed Beta(x + ½, n − x + ½) interval (scipy)."""
    a = (1 - level) / 2
    x = np.arange(n + 1)
    ci = proportion_interval(x, n, level, "jeffreys")
    ref_lo = stats.beta.ppf(a, x + 0.5, n - x + 0.5)
    ref_hi = stats.beta.isf(a, x + 0.5, n - x + 0.5)
    assert ci[0, 0] == 0.0 and ci[-1, 1] == 1.0
    np.testing.assert_allclose(ci[1:, 0], ref_lo[1:], rtol=1e-10)
    np.testing.assert_allclose(ci[:-1, 1], ref_hi[:-1], rtol=1e-10)
    # the observed proportion is always inside
    assert np.all((ci[:, 0] <= x / n) & (x / n <= ci[:, 1]))


def test_jeffreys_edges_on_fractional_n_eff_and_scalars():
    lo, hi = proportion_interval(20, 20, 0.95, "jeffreys")
    assert hi == 1.0 and lo == pytest.approx(stats.beta.ppf(0.025, 20.5, 0.5), rel=1e-10)
    lo, hi = proportion_interval(0, 20, 0.95, "jeffreys")
    assert lo == 0.0 and hi == pytest.approx(stats.beta.isf(0.025, 0.5, 20.5), rel=1e-10)
    ci = proportion_interval(np.array([0.0, 7.25]), np.array([7.25, 7.25]), 0.95, "jeffreys")
    assert ci[0, 0] == 0.0 and ci[1, 1] == 1.0


def test_report_jeffreys_column_reaches_one_at_a_perfect_score():
    ds = bayeserr.load(_frame({"perfect": np.ones(20), "half": np.tile([0.0, 1.0], 10)}))
    by = {m["model"]: m for m in bayeserr.report(ds, bayes=OFF).to_dict()["models"]}
    assert by["perfect"]["intervals"]["jeffreys"][1] == 1.0


# ------------------------------------------------------------ pass@k
def _exact_pass(n, c, k):
    return 1 - Fraction(math.comb(n - c, k), math.comb(n, k))


@pytest.mark.parametrize("n", [1, 2, 5, 10, 37, 200, 1000])
@pytest.mark.parametrize("k", [1, 2, 5, 10, 100])
def test_pass_at_k_against_exact_rational_arithmetic(n, k):
    """Every c from 0 to n: exactly 0 at c = 0, exactly 1 when n − c < k, and
    elsewhere within (c + 2) ε of 1 − C(n − c, k)/C(n, k) computed exactly
    (c rounded factors and one subtraction)."""
    if k > n:
        return
    c = np.arange(n + 1)
    got = pass_at_k(np.full(n + 1, n), c, k)
    assert got[0] == 0.0
    assert np.all(got[n - c < k] == 1.0)
    for ci in range(n + 1):
        err = abs(Fraction(float(got[ci])) - _exact_pass(n, ci, k))
        assert err <= (ci + 2) * Fraction(EPS), (n, k, ci, float(err))


def test_pass_at_k_mixed_sample_counts_and_bad_input():
    n = np.array([5, 20, 20, 200, 7, 200])
    c = np.array([0, 3, 20, 150, 4, 0])
    got = pass_at_k(n, c, 4)
    exact = [_exact_pass(int(a), int(b), 4) for a, b in zip(n, c)]
    for g, e, ci in zip(got, exact, c):
        assert abs(Fraction(float(g)) - e) <= (ci + 2) * Fraction(EPS)
    assert got[0] == 0.0 and got[2] == 1.0 and got[4] == 1.0 and got[5] == 0.0
    for bad in (dict(n=[5], c=[6], k=1), dict(n=[5], c=[-1], k=1), dict(n=[3], c=[1], k=4),
                dict(n=[5], c=[1], k=0), dict(n=[5], c=[1.5], k=1)):
        with pytest.raises(bayeserr.InputError):
            pass_at_k(np.array(bad["n"]), np.array(bad["c"]), bad["k"])


# ------------------------------------------------------------ tie zones
@pytest.mark.parametrize("level", [0.95, 0.9])
def test_paired_tie_zone_by_hand(level):
    """The report's paired tie zone is the median over pairs of
    z · sd(d)/√n on the common questions, z = Φ⁻¹(1 − α/2); the unpaired one
    is z · sqrt(2 p (1 − p)/n) at the pooled accuracy and median n."""
    rng = np.random.default_rng(5)
    n = 150
    base = rng.random(n)
    scores = {m: (rng.random(n) < np.clip(base + shift, 0, 1)).astype(float)
              for m, shift in (("A", 0.1), ("B", 0.0), ("C", -0.1), ("D", 0.05))}
    rep = bayeserr.report(bayeserr.load(_frame(scores)), level=level, bayes=OFF).to_dict()
    z = stats.norm.ppf(0.5 + level / 2)
    names = sorted(scores)
    by_hand = [z * np.std(scores[a] - scores[b], ddof=1) / math.sqrt(n)
               for i, a in enumerate(names) for b in names[i + 1:]]
    assert rep["tie_zone"]["paired_median"] == pytest.approx(float(np.median(by_hand)), rel=1e-12)
    p = np.mean([s.mean() for s in scores.values()])
    assert rep["tie_zone"]["unpaired"] == pytest.approx(z * math.sqrt(2 * p * (1 - p) / n), rel=1e-12)
