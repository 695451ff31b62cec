"""The release gate (issue 25, part 2; ``docs/methods.md`` §3.11): the one-sided test
against independent computations (the CR2 t with clusters, the score test for 0/1
answers and the paired z for fractional scores without them), its size when the true
difference sits exactly at the margin (without clusters and at SWE-bench's cluster
sizes), the command's exit codes, sentence, JSON and job summary, the pytest helper and
the GitHub Action's run step."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import bayeserr
from bayeserr.analyses.gate import decide, gate, holm_levels, one_sided_t, power_at_zero, wild_one_sided
from bayeserr.examples import example_path
from bayeserr.stats.fewclusters import cluster_totals, cr2_mean

from ..conftest import real_file

ROOT = Path(bayeserr.__file__).resolve().parents[1]
EXAMPLE = example_path()
#: SWE-bench Verified's 12 repositories (docs/calibration.md): one holds 231 of 500 questions
SWE_SIZES = np.array([231, 75, 44, 34, 32, 22, 22, 19, 10, 8, 2, 1])
ALPHA = 0.05


# ------------------------------------------------------------------ data
def paired_scores(rng, reps, delta, disagree=0.2, both_right=0.7):
    """0/1 answers of A and B for ``delta`` (reps × n, the true A − B per question):
    A alone right with probability (disagree + δ)/2, B alone with (disagree − δ)/2."""
    x = rng.random(delta.shape)
    a_only = x < (disagree + delta) / 2
    b_only = ~a_only & (x < disagree)
    same = np.where(rng.random(delta.shape) < both_right, 1.0, 0.0)
    a = np.where(a_only, 1.0, np.where(b_only, 0.0, same))
    b = np.where(b_only, 1.0, np.where(a_only, 0.0, same))
    return a, b


def simulate(reps, n, margin, sizes=None, tau=0.0, seed=0, disagree=0.2):
    """Replicates with the true difference at −margin; clusters (sizes) carry an effect
    u_c ~ N(0, τ²) on the difference (mean 0, so E[d̄] = −margin)."""
    rng = np.random.default_rng(seed)
    codes = None
    delta = np.full((reps, n), -margin)
    if sizes is not None:
        codes = np.repeat(np.arange(len(sizes)), sizes)
        u = rng.normal(0.0, tau, size=(reps, len(sizes)))
        delta = np.clip(-margin + u, -disagree + 1e-3, disagree - 1e-3)[:, codes]
    a, b = paired_scores(rng, reps, delta, disagree)
    return a, b, codes


def frame(a, b, codes=None, names=("A", "B")) -> pd.DataFrame:
    """Long results table of two models (one replicate)."""
    n = len(a)
    q = [f"q{i:04d}" for i in range(n)]
    out = pd.DataFrame({"model": np.repeat(names, n), "question_id": q * 2, "score": np.concatenate([a, b])})
    if codes is not None:
        out["cluster_id"] = [f"c{c:02d}" for c in codes] * 2
    return out


def vectorized_gate(a, b, codes, margin, level=0.95, seed=0):
    """The gate's decision on every replicate at once, from the same array functions the
    gate calls (:func:`decide`; CR2 and the Bell–McCaffrey df of the stats layer; without
    clusters the discordant counts of the 0/1 answers, for the score test)."""
    d = a - b
    if codes is None:
        counts = ((d == 1).sum(1), (d == -1).sum(1))
        return decide(d.mean(1), d.std(1, ddof=1) / np.sqrt(d.shape[1]), np.inf, -margin, level,
                      n_eff=d.shape[1], counts=counts)
    r = cr2_mean(d, codes)
    D, sizes = cluster_totals(d, codes)
    return decide(r.mean, r.se, r.df, -margin, level, D, sizes[0], seed=seed)


# ------------------------------------------------------------------ independent references
def cr2_by_matrices(d, codes):
    """CR2 SE and Bell–McCaffrey df of a mean from the general matrix formulas
    (Bell & McCaffrey 2002; Imbens & Kolesár 2016, §4): X = 1, H = 11ᵀ/n,
    A_c = (I − H_cc)^(−1/2), V = Σ_c (1ᵀA_c e_c)² / n², and df = (Σλ)²/Σλ² over the
    eigenvalues of GᵀG, g_c = (I − H)_{·c} A_c 1_c / n."""
    n = len(d)
    e = d - d.mean()
    H = np.full((n, n), 1.0 / n)
    M = np.eye(n) - H
    V, G = 0.0, []
    for c in np.unique(codes):
        idx = np.flatnonzero(codes == c)
        w, U = np.linalg.eigh(M[np.ix_(idx, idx)])
        A = U @ np.diag(w ** -0.5) @ U.T
        V += (np.ones(len(idx)) @ A @ e[idx]) ** 2 / n**2
        G.append(M[:, idx] @ A @ np.ones(len(idx)) / n)
    lam = np.linalg.eigvalsh(np.array(G) @ np.array(G).T)
    return np.sqrt(V), lam.sum() ** 2 / (lam**2).sum()


def clustered_data(seed=3, n_clusters=30, diff=0.0):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(3, 16, size=n_clusters)
    codes = np.repeat(np.arange(n_clusters), sizes)
    u = rng.normal(0, 0.05, n_clusters)[codes]
    a, b = paired_scores(rng, 1, (diff + u)[None])
    return a[0], b[0], codes


# ------------------------------------------------------------------ the one-sided test
@pytest.mark.parametrize("mode, margin", [("non-inferiority", 0.05), ("superiority", 0.0),
                                          ("non-inferiority", 0.01)])
def test_clustered_one_sided_test_matches_scipy_t_on_the_bm_df(mode, margin):
    from scipy import stats
    a, b, codes = clustered_data()
    res = gate(frame(a, b, codes), "A", "B", margin, mode=mode, bayes="off")
    c = res.checks[0]
    d = a - b
    se, df = cr2_by_matrices(d, codes)
    assert df >= 10 and c.wild is None  # the t test alone decides
    null = -margin if mode == "non-inferiority" else margin
    t = (d.mean() - null) / se
    assert c.test == "t_cr2_bm"
    assert c.df == pytest.approx(df, rel=1e-9) and c.se == pytest.approx(se, rel=1e-9)
    assert c.statistic == pytest.approx(t, rel=1e-9)
    assert c.p_value == pytest.approx(stats.t.sf(t, df), rel=1e-9, abs=1e-15)
    assert c.lower == pytest.approx(d.mean() - stats.t.ppf(0.95, df) * se, rel=1e-9)
    assert c.upper == pytest.approx(d.mean() + stats.t.ppf(0.95, df) * se, rel=1e-9)
    assert c.passed == (stats.t.sf(t, df) < ALPHA) == (c.bound > null)
    assert c.p_decision == c.p_value and c.bound == c.lower


@pytest.mark.parametrize("mode, margin", [("non-inferiority", 0.03), ("superiority", 0.01)])
def test_unclustered_one_sided_test_matches_statsmodels_z(mode, margin):
    """Fractional scores without clusters: the paired z (0/1 answers take the score test)."""
    from statsmodels.stats.weightstats import DescrStatsW
    rng = np.random.default_rng(11)
    a, b = paired_scores(rng, 1, np.full((1, 400), 0.02))
    a, b = a[0], b[0]
    a = np.round(np.clip(a * 0.8 + 0.2 * rng.random(400), 0, 1), 2)  # partial credit
    null = -margin if mode == "non-inferiority" else margin
    c = gate(frame(a, b), "A", "B", margin, mode=mode, bayes="off").checks[0]
    ref = DescrStatsW(a - b)
    z, p = ref.ztest_mean(value=null, alternative="larger")
    lower = ref.zconfint_mean(alpha=ALPHA, alternative="larger")[0]
    upper = ref.zconfint_mean(alpha=ALPHA, alternative="smaller")[1]
    # a hand formula too: d̄ ± z · sd(d)/√n
    d = a - b
    se = d.std(ddof=1) / np.sqrt(len(d))
    assert c.test == "z_paired" and c.df is None and c.wild is None
    assert c.se == pytest.approx(se, rel=1e-12)
    assert c.statistic == pytest.approx(z, rel=1e-9) and c.p_value == pytest.approx(p, rel=1e-9)
    assert c.lower == pytest.approx(lower, rel=1e-9) and c.upper == pytest.approx(upper, rel=1e-9)
    assert c.lower == pytest.approx(d.mean() - 1.6448536269514722 * se, rel=1e-9)
    assert c.passed == (p < ALPHA)
    assert "one-sided paired z test" in c.sentence


@pytest.mark.parametrize("mode, margin", [("non-inferiority", 0.03), ("superiority", 0.01),
                                          ("non-inferiority", 0.0)])
def test_unclustered_0_1_answers_take_the_score_test(mode, margin):
    """0/1 answers, one per question, no clusters: the gate's p, statistic and bounds are the
    score test of bayeserr.stats.paired_margin on the discordant counts (tested against
    independent computations in tests/stats/test_paired_margin.py), at the gate's level and at
    Holm's step levels; the JSON and the sentence name it."""
    from bayeserr.stats.paired_margin import score_test
    rng = np.random.default_rng(11)
    a, b = paired_scores(rng, 1, np.full((1, 400), 0.02))
    a, b = a[0], b[0]
    null = -margin if mode == "non-inferiority" else margin
    c = gate(frame(a, b), "A", "B", margin, mode=mode, bayes="off").checks[0]
    nb, nc = int(np.sum((a == 1) & (b == 0))), int(np.sum((a == 0) & (b == 1)))
    ref = score_test(nb, nc, 400, null, 0.95)
    assert c.test == "score_tango" and c.df is None and c.wild is None
    assert c.diff == pytest.approx((nb - nc) / 400, rel=1e-12)
    assert c.statistic == pytest.approx(float(ref.statistic), rel=1e-12)
    assert c.p_value == pytest.approx(float(ref.p_value), rel=1e-12) and c.p_decision == c.p_value
    assert c.lower == pytest.approx(float(ref.lower), abs=1e-12) and c.bound == c.lower
    assert c.upper == pytest.approx(float(ref.upper), abs=1e-12) and c.bound_upper == c.upper
    assert c.passed == (c.p_value < ALPHA) == (c.bound > null)
    assert "one-sided Tango score test" in c.sentence
    # the se, power and questions needed stay those of the paired SE (M7)
    d = a - b
    assert c.se == pytest.approx(d.std(ddof=1) / np.sqrt(400), rel=1e-12)
    # several candidates: each bound at its Holm step's level, from the same test
    rng2 = np.random.default_rng(12)
    a2, _ = paired_scores(rng2, 1, np.full((1, 400), 0.0))
    two = pd.concat([frame(a, b), frame(a2[0], b, names=("C", "B")).query("model == 'C'")])
    res = gate(two, ["A", "C"], "B", margin, mode=mode, bayes="off")
    sub = two.pivot(index="question_id", columns="model", values="score")
    assert res.adjust == "holm" and sorted(k.bound_level for k in res.checks) == pytest.approx([0.95, 0.975])
    for k in res.checks:
        kb = int(((sub[k.candidate] == 1) & (sub["B"] == 0)).sum())
        kc = int(((sub[k.candidate] == 0) & (sub["B"] == 1)).sum())
        step = score_test(kb, kc, k.n_questions, null, k.bound_level)
        assert k.test == "score_tango"
        assert k.bound == pytest.approx(float(step.lower), abs=1e-12)
        assert (k.bound > null) == (k.p_decision < 1 - k.bound_level)


def test_the_lab_path_reads_the_counts_off_the_moments():
    """decide without counts (the lab passes Δ̂, SE and n only) gives the same numbers as with
    them; counts=False keeps the z test; fractional rows keep the z."""
    rng = np.random.default_rng(5)
    a, b, _ = simulate(200, 120, 0.02, seed=5)
    d = a - b
    args = (d.mean(1), d.std(1, ddof=1) / np.sqrt(120), np.inf, -0.02, 0.95)
    given = decide(*args, n_eff=120, counts=((d == 1).sum(1), (d == -1).sum(1)))
    read = decide(*args, n_eff=120)
    z = decide(*args, n_eff=120, counts=False)
    assert given.score_rows.all() and read.score_rows.all() and not z.score_rows.any()
    for f in ("p_value", "lower", "upper"):
        assert np.array_equal(getattr(given, f), getattr(read, f))
    assert np.allclose(z.p_value, one_sided_t(*args[:4], 0.95).p_value)
    frac = d * 0.5 + 0.01 * rng.random(d.shape)
    f = decide(frac.mean(1), frac.std(1, ddof=1) / np.sqrt(120), np.inf, -0.02, 0.95, n_eff=120)
    assert not f.score_rows.any()


def test_the_gate_reads_the_pair_as_compare_computes_it():
    ds = bayeserr.load(EXAMPLE)
    c = gate(ds, "ckpt-0426", "ckpt-0419", 0.02, bayes="off").checks[0]
    ref = bayeserr.compare(ds, "ckpt-0426", "ckpt-0419", bayes="off")
    assert (c.diff, c.se, c.df, c.test, c.n_questions, c.n_clusters) == (
        ref.diff, ref.se, ref.df, ref.test, ref.n_questions, ref.n_clusters)
    # the one-sided t at m = 0 is half the two-sided p of compare, on the side of the estimate
    zero = gate(ds, "ckpt-0412", "baseline-v1", 0.0, mode="superiority", bayes="off").checks[0]
    two = bayeserr.compare(ds, "ckpt-0412", "baseline-v1", bayes="off")
    assert two.diff > 0 and zero.p_value == pytest.approx(two.p_value / 2, rel=1e-12)


def test_one_sided_t_edges():
    r = one_sided_t([0.1, -0.1, 0.0, 0.1], [0.0, 0.0, 0.0, np.nan], np.inf, 0.0, 0.95)
    assert list(r.p_value[:3]) == [0.0, 1.0, 0.5] and np.isnan(r.p_value[3])
    assert list(r.lower[:3]) == [0.1, -0.1, 0.0]


def test_equal_differences_use_the_exact_zero_event_bound():
    """Two models that agree on every question (SE 0): the t test would pass any margin on
    any number of questions; the gate uses the exact zero-event bound instead."""
    from statsmodels.stats.proportion import proportion_confint
    rng = np.random.default_rng(0)
    a = (rng.random(100) < 0.7) * 1.0
    pi_l = proportion_confint(0, 100, alpha=2 * ALPHA, method="beta")[1]  # one-sided 95% Clopper–Pearson
    tight = gate(frame(a, a), "A", "B", 0.01, bayes="off").checks[0]
    assert tight.se == 0 and not tight.passed and tight.finding == "not shown"
    assert tight.lower == pytest.approx(-pi_l, rel=1e-9) and tight.bound == tight.lower
    assert tight.p_value == pytest.approx((1 - 0.01) ** 100, rel=1e-12)
    assert "exact bound for equal differences" in tight.sentence and "SE 0" in tight.notes[0]
    assert tight.power_at_zero is None and not tight.too_small
    wide = gate(frame(a, a), "A", "B", 0.05, bayes="off").checks[0]
    assert wide.passed and wide.p_value == pytest.approx(0.95**100, rel=1e-12)
    # with clusters, the units are the effective clusters (every question of a cluster agreeing)
    codes = np.arange(100) % 20
    cl = gate(frame(a, a, codes), "A", "B", 0.05, bayes="off").checks[0]
    assert cl.test == "t_cr2_bm" and cl.effective_clusters == pytest.approx(20)
    assert cl.lower == pytest.approx(-proportion_confint(0, 20, alpha=0.1, method="beta")[1], rel=1e-9)
    assert not cl.passed


# ------------------------------------------------------------------ the wild bootstrap, one-sided
def enumerated_one_sided(D, sizes, null, values):
    """P(t* ≥ t) over every weight vector (both signs), by brute force from the definition
    of the restricted wild bootstrap-t with the CR2 variance (docs/methods.md §3.4)."""
    from itertools import product
    D, sizes = np.asarray(D, float), np.asarray(sizes, float)
    n = sizes.sum()
    p, q = sizes / n, 1.0 / (1.0 - sizes / n)
    ybar = D.sum() / n
    S = D - sizes * ybar
    t = (ybar - null) / (np.sqrt((q * S * S).sum()) / n)
    U = D - null * sizes
    V = np.array(list(product(values, repeat=len(D))))
    N = V @ U
    Sstar = V * U - p * N[:, None]
    tstar = N / np.sqrt((q * Sstar * Sstar).sum(axis=1))
    return np.mean(tstar >= t * (1 - 1e-9) if t > 0 else tstar >= t * (1 + 1e-9)), np.mean(
        np.abs(tstar) >= abs(t) * (1 - 1e-9)), t


@pytest.mark.parametrize("sizes, values", [
    ([12, 7, 30, 3, 9], [-np.sqrt(1.5), -1.0, -np.sqrt(0.5), np.sqrt(0.5), 1.0, np.sqrt(1.5)]),  # Webb, C = 5
    (SWE_SIZES, [-1.0, 1.0]),  # Rademacher, C = 12
])
def test_the_one_sided_wild_p_is_half_the_two_sided_on_the_pass_side(sizes, values):
    rng = np.random.default_rng(5)
    sizes = np.asarray(sizes)
    for null in (-0.06, -0.02, 0.0):
        for _ in range(3):
            D = rng.binomial(sizes, 0.12) - rng.binomial(sizes, 0.13) + 0.0
            res = wild_one_sided(D[None], sizes, null, 0.95)
            assert res.exact
            one, two, t = enumerated_one_sided(D, sizes, null, values)
            assert res.p_two_sided[0] == pytest.approx(two, abs=1e-12)
            if t > 0:  # the pass side: exactly half (the weights are symmetric)
                assert res.p_value[0] == pytest.approx(one, abs=1e-12)
            else:  # the other side: the share is at least 1 − p/2 (ties at t* = t add to it)
                assert one >= res.p_value[0] - 1e-12 and res.p_value[0] >= 0.5 - 1e-12


def test_wild_bound_and_p_agree_and_the_gate_needs_both():
    path = real_file("swebench_verified_bashonly_per_instance.csv.gz")
    ds = bayeserr.load(path, where=["per_instance_matches_reported=True"])
    names = list(ds["model"].values)
    c = gate(ds, names[1], names[0], 0.03, bayes="off").checks[0]
    assert c.df < 10 and c.wild is not None and c.wild["exact"] and c.wild["weights"] == "rademacher"
    assert c.p_decision == max(c.p_value, c.wild["p_value"])
    assert c.bound == min(c.lower, c.wild["lower"])
    assert (c.wild["p_value"] < ALPHA) == (c.wild["lower"] > -0.03)
    assert c.passed == (c.p_value < ALPHA and c.wild["p_value"] < ALPHA)


# ------------------------------------------------------------------ size at the margin
def _rate(passed, reps):
    return float(np.mean(passed)), 3 * np.sqrt(ALPHA * (1 - ALPHA) / reps)


def test_size_at_the_margin_without_clusters():
    """True A − B exactly at −margin: the gate passes at most 5% (+ 3 MC SE) of the time."""
    reps = 4000
    for n, margin, seed in ((500, 0.02, 1), (150, 0.05, 2)):
        a, b, _ = simulate(reps, n, margin, seed=seed)
        rate, mc = _rate(vectorized_gate(a, b, None, margin).p_value < ALPHA, reps)
        assert rate <= ALPHA + mc, (n, margin, rate)
        assert rate >= ALPHA - 2 * mc  # and it is not trivially conservative


@pytest.mark.parametrize("tau", [0.0, 0.02, 0.05])
def test_size_at_the_margin_at_swebench_cluster_sizes(tau):
    """12 clusters, one holding 231 of 500 questions (BM df 3.3: the wild bootstrap runs
    too), cluster effects on the difference of sd τ."""
    reps, margin = 1500, 0.02
    a, b, codes = simulate(reps, int(SWE_SIZES.sum()), margin, SWE_SIZES, tau, seed=int(100 * tau) + 7)
    dec = vectorized_gate(a, b, codes, margin)
    assert dec.wild is not None and dec.wild_rows.all()
    rate, mc = _rate(dec.p_value < ALPHA, reps)
    assert rate <= ALPHA + mc, rate
    # requiring both tests costs little: each alone is near 5% (the CR2 t one-sided slightly above
    # it at the larger cluster effects: 5.3 ± 0.15% at τ = 0.05 over 20,000 replicates)
    assert rate >= min(np.mean(dec.t.p_value < ALPHA), np.mean(dec.wild.p_value < ALPHA)) - 0.03


def test_the_simulation_runs_the_gates_own_decision():
    """The vectorized path of the size tests gives the gate's own numbers on the same data."""
    for sizes, tau in ((None, 0.0), (SWE_SIZES, 0.05)):
        a, b, codes = simulate(4, 500, 0.02, sizes, tau, seed=9)
        dec = vectorized_gate(a, b, codes, 0.02)
        for r in range(4):
            c = gate(frame(a[r], b[r], codes), "A", "B", 0.02, bayes="off").checks[0]
            assert c.p_decision == pytest.approx(dec.p_value[r], rel=1e-9, abs=1e-12)
            assert c.bound == pytest.approx(dec.lower[r], rel=1e-6, abs=1e-9)
            assert c.p_value == pytest.approx(dec.t.p_value[r], rel=1e-9, abs=1e-12)


# ------------------------------------------------------------------ several candidates
def test_holm_over_candidates():
    from statsmodels.stats.multitest import multipletests
    ds = bayeserr.load(EXAMPLE)
    res = gate(ds, ["ckpt-0426", "ckpt-0412", "baseline-v1"], "ckpt-0419", 0.1, bayes="off")
    p = np.array([c.p_decision for c in res.checks])
    ref = multipletests(p, method="holm")[1]
    assert res.adjust == "holm"
    assert [c.p_adjusted for c in res.checks] == pytest.approx(list(ref), rel=1e-12)
    assert [c.passed for c in res.checks] == [bool(x < ALPHA) for x in ref]
    order = np.argsort(p)
    assert [res.checks[k].bound_level for k in order] == pytest.approx([1 - ALPHA / 3, 1 - ALPHA / 2, 0.95])
    for c in res.checks:  # the bound a verdict reads is at its Holm step's level
        assert (c.bound > -0.1) == (c.p_decision < 1 - c.bound_level)
    assert res.exit_code == 1 and "gate fail: 2 of 3 candidates non-inferior (Holm over 3" in res.sentence
    adj, steps = holm_levels(np.array([0.01, 0.04, 0.03]), 0.95)
    assert list(adj) == pytest.approx([0.03, 0.06, 0.06])
    assert list(steps) == pytest.approx([1 - .05 / 3, 0.95, 0.975])


# ------------------------------------------------------------------ Bayesian probability and power
def test_the_bayesian_probability_is_the_reports_pair_posterior():
    """At a margin of 0 it is P(A > B) of the pair posterior the report uses (fast mode)."""
    from bayeserr.bayes.pairs import pair_posterior
    from bayeserr.bayes.settings import BayesSettings
    from bayeserr.stats.view import DataView
    rng = np.random.default_rng(2)
    a, b = paired_scores(rng, 1, np.full((1, 300), 0.03))
    codes = np.repeat(np.arange(10), 30)
    k3 = frame(np.repeat(a[0], 1), np.repeat(b[0], 1))
    k3 = pd.concat([k3.assign(sample=s, score=np.clip(k3.score + 0.5 * s * (s % 2), 0, 1)) for s in range(2)])
    for data in (frame(a[0], b[0], codes), frame(a[0], b[0]), k3):  # cluster model, Dirichlet, bootstrap
        ds = bayeserr.load(data)
        c = gate(ds, "A", "B", 0.0, mode="superiority").checks[0]
        comp = bayeserr.compare(ds, "A", "B", bayes="off")
        post = pair_posterior(DataView.from_dataset(ds).select(["A", "B"]), comp, BayesSettings())
        assert c.prob == pytest.approx(post.prob_a_better, abs=1e-9)
        assert c.prob_method.split(";")[0] == post.method.split(";")[0]


@pytest.mark.parametrize("null", [-0.05, -0.02, 0.01, 0.0])
def test_dirichlet_probability_above_a_margin_matches_draws(null):
    from bayeserr.models.paired_dirichlet import prob_above

    from models.paired_dirichlet import dirichlet_paired
    for b, c, r in ((29, 28, 443), (3, 9, 88), (40, 25, 35)):
        delta = dirichlet_paired(b, c, r).sample(400_000, seed=1)
        assert prob_above(b, c, r, null) == pytest.approx(np.mean(delta > null), abs=3e-3)


def test_the_cluster_model_is_shift_equivariant():
    """P(Δ > −m | d) is computed as P(Δ > 0) from the sums of d + m (the flat prior on Δ of
    models/paired_clustered.py): the shifted posterior is the posterior shifted, and the
    probability is the one the unshifted posterior puts above −m."""
    from models.paired_clustered import pair_probabilities
    a, b, codes = clustered_data(seed=8, n_clusters=12, diff=0.01)
    d = a - b
    m = 0.03
    D, sizes = cluster_totals(d[None], codes)
    Q, _ = cluster_totals((d * d)[None], codes)
    base = pair_probabilities(D, sizes, 0.01, sum_sq=Q)
    shifted = pair_probabilities(D + m * sizes, sizes, 0.01, sum_sq=Q + 2 * m * D + m * m * sizes)
    assert shifted.interval[0] == pytest.approx(base.interval[0] + m, abs=1e-8)
    assert shifted.mean[0] == pytest.approx(base.mean[0] + m, abs=1e-8)
    c = gate(frame(a, b, codes), "A", "B", m).checks[0]
    assert c.prob == pytest.approx(float(shifted.prob_a_better[0]), abs=1e-12) and c.prob > 0.5
    # the unshifted posterior's (1 − P) quantile is −m: its equal-tailed interval at 2P − 1 starts there
    at = pair_probabilities(D, sizes, 0.01, sum_sq=Q, level=2 * c.prob - 1)
    assert at.interval[0, 0] == pytest.approx(-m, abs=1e-6)


def test_power_and_questions_needed():
    from bayeserr.stats.planning import n_required
    rng = np.random.default_rng(4)
    a, b = paired_scores(rng, 1, np.zeros((1, 300)))
    c = gate(frame(a[0], b[0]), "A", "B", 0.02, bayes="off").checks[0]
    # without clusters the questions needed are (M9) with α = 2(1 − level)
    omega2 = c.se**2 * c.n_questions
    assert c.n_needed == pytest.approx(n_required(0.02, omega2, alpha=0.1, power=0.8), rel=1e-9)
    from scipy import stats
    assert c.power_at_zero == pytest.approx(stats.norm.cdf(0.02 / c.se - stats.norm.ppf(0.95)), rel=1e-9)
    assert c.too_small and not c.passed and c.finding == "not shown"
    assert "too small for this margin" in c.sentence and "questions like these would give 80%" in c.sentence
    # at the questions needed, the approximation gives 80%
    power, _ = power_at_zero(c.se * np.sqrt(c.n_questions / c.n_needed), np.inf, 0.02, 0.95)
    assert power == pytest.approx(0.8, abs=1e-9)
    assert power_at_zero(0.01, np.inf, 0.0, 0.95) == (None, None)
    sup = gate(frame(a[0], b[0]), "A", "B", 0.02, mode="superiority", bayes="off").checks[0]
    assert sup.power_at_zero is None and sup.n_needed is None and not sup.too_small


# ------------------------------------------------------------------ API misuse
@pytest.mark.parametrize("kwargs, match", [
    ({"margin": 1.5}, "margin must be at least 0 and below 1"),
    ({"margin": -0.01}, "margin must be"),
    ({"margin": "0.01"}, "margin must be a number"),
    ({"mode": "equivalence"}, "mode must be one of"),
    ({"level": 0.5}, "above 0.5"),
    ({"bayes": "mcmc"}, "fast pair posterior"),
    ({"candidates": ["ckpt-0426", "ckpt-0426"]}, "listed twice"),
    ({"candidates": "ckpt-0419"}, "two different models"),
    ({"candidates": "ckpt-426"}, "Did you mean 'ckpt-0426'"),
    ({"candidates": []}, "at least one candidate"),
])
def test_bad_arguments_are_input_errors(kwargs, match):
    args = {"candidates": "ckpt-0426", "baseline": "ckpt-0419", "margin": 0.02} | kwargs
    with pytest.raises(bayeserr.InputError, match=match):
        gate(bayeserr.load(EXAMPLE), **args)


def test_result_frame_and_lookup():
    res = gate(bayeserr.load(EXAMPLE), ["ckpt-0426", "ckpt-0412"], "ckpt-0419", 0.1)
    df = res.to_frame()
    assert list(df["candidate"]) == ["ckpt-0426", "ckpt-0412"] and df["bound"].dtype == float
    assert res["ckpt-0412"].candidate == "ckpt-0412"
    with pytest.raises(bayeserr.InputError, match="Did you mean"):
        res["ckpt-412"]
    json.dumps(res.to_dict(), allow_nan=False)


# ------------------------------------------------------------------ the command
def test_cli_exit_codes_and_sentence(cli):
    ok = cli("gate", EXAMPLE, "--candidate", "ckpt-0426", "--baseline", "ckpt-0419", "--margin", "0.1")
    assert ok.exit_code == 0, ok.output
    assert ok.stdout.startswith("non-inferior: ckpt-0426 − ckpt-0419 = −0.3 points, 95% lower bound −4.6 > "
                                "−10.0 margin (one-sided CR2 t test, df 21.1")
    fail = cli("gate", EXAMPLE, "--candidate", "ckpt-0426", "--baseline", "ckpt-0419", "--margin", "0.02")
    assert fail.exit_code == 1
    assert fail.stdout.startswith("not shown non-inferior: ckpt-0426 − ckpt-0419 = −0.3 points, 95% lower "
                                  "bound −4.6 ≤ −2.0 margin")
    assert "too small for this margin" in fail.stdout and fail.stdout.count("\n") == 1
    worse = cli("gate", EXAMPLE, "--candidate", "baseline-v1", "--baseline", "ckpt-0426", "--margin", "0.01")
    assert worse.exit_code == 1 and worse.stdout.startswith("worse than allowed: baseline-v1 − ckpt-0426")
    sup = cli("gate", EXAMPLE, "--candidate", "ckpt-0426", "--baseline", "baseline-v1", "--margin", "0.01",
              "--superiority")
    assert sup.exit_code == 0 and sup.stdout.startswith("superior: ckpt-0426 − baseline-v1 = +7.5 points")


@pytest.mark.parametrize("args, message", [
    (["--margin", "1.5"], "--margin"),
    (["--margin", "0.01", "--level", "0.5"], "--level"),
    (["--margin", "0.01", "--candidate", "nope"], "'nope' is not in the data"),
    (["--margin", "0.01", "--baseline", "ckpt-0426"], "itself"),
    (["--margin", "0.01", "--where", "nonexistent=1"], "--where"),
    ([], "--margin"),
])
def test_cli_bad_input_exits_2(cli, args, message):
    base = ["gate", EXAMPLE, "--candidate", "ckpt-0426"]
    if "--baseline" not in args:
        base += ["--baseline", "ckpt-0419"]
    res = cli(*base, *args)
    assert res.exit_code == 2, res.output
    assert message in res.output and "Traceback" not in res.output


def test_cli_missing_file_exits_2(cli, tmp_path):
    res = cli("gate", tmp_path / "none.csv", "--candidate", "a", "--baseline", "b", "--margin", "0.01")
    assert res.exit_code == 2 and "error:" in res.output


def test_cli_json(cli):
    res = cli("gate", EXAMPLE, "--candidate", "ckpt-0426", "--candidate", "baseline-v1", "--baseline",
              "ckpt-0419", "--margin", "0.1", "--format", "json")
    assert res.exit_code == 1
    out = json.loads(res.stdout)
    assert out["schema"] == "bayeserr.gate/1" and out["verdict"] == "fail" and out["exit_code"] == 1
    assert out["adjust"] == "holm" and out["null"] == -0.1 and out["mode"] == "non-inferiority"
    api = gate(bayeserr.load(EXAMPLE), ["ckpt-0426", "baseline-v1"], "ckpt-0419", 0.1)
    assert out == json.loads(json.dumps(api.to_dict()))
    first = out["candidates"][0]
    for key in ("diff", "se", "df", "p_value", "lower", "p_adjusted", "bound", "bound_level", "prob",
                "power_at_zero", "n_needed", "too_small", "passed", "finding", "sentence"):
        assert key in first


def test_cli_summary_is_appended(cli, tmp_path):
    summary = tmp_path / "step_summary.md"
    summary.write_text("## an earlier step\n")
    args = ["gate", EXAMPLE, "--candidate", "ckpt-0426", "--baseline", "ckpt-0419", "--summary", summary]
    assert cli(*args, "--margin", "0.1").exit_code == 0
    assert cli(*args, "--margin", "0.02").exit_code == 1
    text = summary.read_text()
    assert text.startswith("## an earlier step\n")
    assert text.count("### bayeserr gate") == 2
    assert "### bayeserr gate passed: 1 of 1 candidate non-inferior" in text
    assert "### bayeserr gate failed: 0 of 1 candidate non-inferior" in text
    assert "| ckpt-0426 | **pass** (non-inferior) |" in text
    assert "not the decision" in text
    new = tmp_path / "new.md"  # a new file is created
    assert cli(*args[:-1], new, "--margin", "0.1").exit_code == 0
    assert new.read_text().startswith("### bayeserr")


def test_cli_summary_never_overwrites_an_input(cli, tmp_path):
    data = tmp_path / "r.csv"
    pd.read_csv(EXAMPLE).to_csv(data, index=False)
    before = data.read_bytes()
    res = cli("gate", data, "--candidate", "ckpt-0426", "--baseline", "ckpt-0419", "--margin", "0.1",
              "--summary", data)
    assert res.exit_code == 2 and "input" in res.output and data.read_bytes() == before


def test_summary_escapes_model_names(cli, tmp_path):
    rng = np.random.default_rng(1)
    a, b = paired_scores(rng, 1, np.zeros((1, 200)))
    path = tmp_path / "r.csv"
    frame(a[0], b[0], names=("new|<img src=x>", "prod`x`")).to_csv(path, index=False)
    summary = tmp_path / "s.md"
    res = cli("gate", path, "--candidate", "new|<img src=x>", "--baseline", "prod`x`", "--margin", "0.2",
              "--summary", summary)
    assert res.exit_code == 0, res.output
    text = summary.read_text()
    assert "new\\|\\<img src=x>" in text and "prod\\`x\\`" in text
    assert text.count("<img") == text.count("\\<img") and "`x`" not in text.replace("\\`", "")


def test_gate_help_imports_nothing_heavy():
    from ..cli.test_startup import loaded
    assert loaded(["gate", "--help"]) == []


def test_cli_on_a_real_file_with_many_candidates(cli):
    path = real_file("swebench_verified_bashonly_per_instance.csv.gz")
    ds = bayeserr.load(path, where=["per_instance_matches_reported=True"])
    names = list(ds["model"].values)
    args = [a for m in names[1:6] for a in ("--candidate", m)]
    res = cli("gate", path, "--where", "per_instance_matches_reported=True", *args, "--baseline", names[0],
              "--margin", "0.05", "--format", "json")
    out = json.loads(res.stdout)
    assert res.exit_code == out["exit_code"] and len(out["candidates"]) == 5 and out["adjust"] == "holm"
    assert all(c["wild"] is not None and c["test"] == "t_cr2_bm" for c in out["candidates"])


# ------------------------------------------------------------------ the pytest helper
def test_assert_not_worse_passes_and_returns_the_result(tmp_path):
    from bayeserr.testing import assert_not_worse
    res = assert_not_worse(EXAMPLE, "ckpt-0426", "ckpt-0419", margin=0.1)
    assert res.passed and res.checks[0].finding == "non-inferior"
    ds = bayeserr.load(EXAMPLE)
    assert assert_not_worse(ds, "ckpt-0426", "ckpt-0419", margin=0.1, bayes="off").passed
    df = pd.read_csv(EXAMPLE)
    res = assert_not_worse(df, "ckpt-0426", "ckpt-0419", margin=0.1, no_cluster=True)
    assert res.checks[0].test == "z_paired"  # three answers per question: fractional means


def test_assert_not_worse_fails_with_the_gates_sentence():
    from bayeserr.testing import assert_not_worse
    with pytest.raises(AssertionError) as info:
        assert_not_worse(EXAMPLE, "ckpt-0426", "ckpt-0419", margin=0.02)
    expected = gate(bayeserr.load(EXAMPLE), "ckpt-0426", "ckpt-0419", 0.02).sentence
    assert str(info.value) == expected
    assert str(info.value).startswith("not shown non-inferior: ckpt-0426 − ckpt-0419 = −0.3 points")
    with pytest.raises(bayeserr.InputError, match="already a loaded dataset"):
        assert_not_worse(bayeserr.load(EXAMPLE), "ckpt-0426", "ckpt-0419", where=["model=x"])


# ------------------------------------------------------------------ the GitHub Action
def _action():
    import yaml
    return yaml.safe_load((ROOT / "action.yml").read_text())


def test_action_declares_its_inputs_and_steps():
    action = _action()
    assert action["runs"]["using"] == "composite"
    assert set(action["inputs"]) == {"results", "candidate", "baseline", "margin", "mode", "level",
                                     "python-version", "package", "extra-args"}
    steps = action["runs"]["steps"]
    assert steps[0]["uses"].startswith("actions/setup-python@")
    assert "${{ inputs.package }}" in steps[1]["env"]["GATE_PACKAGE"] and "pip install" in steps[1]["run"]
    run = next(s for s in steps if s.get("id") == "gate")
    assert "${{" not in run["run"]  # inputs reach the script as environment variables only


def run_action_step(tmp_path, **inputs):
    """Run the action's gate step as GitHub would: its ``run`` script with ``bash
    --noprofile --norc -eo pipefail``, inputs as the step's env maps them, a step
    summary file and an output file; this interpreter's bin folder on PATH."""
    action = _action()
    step = next(s for s in action["runs"]["steps"] if s.get("id") == "gate")
    values = {k: str(v.get("default", "")) for k, v in action["inputs"].items()} | inputs
    env = dict(os.environ)
    for name, expr in step["env"].items():
        key = expr.strip()[len("${{ inputs."):-len(" }}")]
        env[name] = values.get(key, "")
    summary, output = tmp_path / "summary.md", tmp_path / "output.txt"
    summary.write_text("")
    output.write_text("")
    env |= {"GITHUB_STEP_SUMMARY": str(summary), "GITHUB_OUTPUT": str(output),
            "PATH": os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])}
    script = tmp_path / "step.sh"
    script.write_text(step["run"])
    res = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], env=env,
                         capture_output=True, text=True, timeout=300, cwd=tmp_path, check=False)
    outputs = dict(line.split("=", 1) for line in output.read_text().splitlines())
    return res, summary.read_text(), outputs


def test_action_run_step_passes_fails_and_refuses(tmp_path):
    pytest.importorskip("yaml")
    res, summary, out = run_action_step(tmp_path, results=str(EXAMPLE), candidate="ckpt-0426",
                                        baseline="ckpt-0419", margin="0.1")
    assert res.returncode == 0, res.stderr
    assert out == {"verdict": "pass", "exit-code": "0"}
    assert res.stdout.startswith("non-inferior: ckpt-0426") and "### bayeserr gate passed" in summary

    res, summary, out = run_action_step(tmp_path, results=str(EXAMPLE), candidate="ckpt-0426\nckpt-0412\n",
                                        baseline="ckpt-0419", margin="0.02",
                                        **{"extra-args": "--seed 3 --where 'model!=baseline-v1'"})
    assert res.returncode == 1, res.stderr
    assert out == {"verdict": "fail", "exit-code": "1"}
    assert "Holm over 2 candidates" in res.stdout and "### bayeserr gate failed: 0 of 2" in summary

    res, summary, out = run_action_step(tmp_path, results=str(EXAMPLE), candidate="ckpt-0426",
                                        baseline="ckpt-0419", mode="equivalence")
    assert res.returncode == 2 and out == {"verdict": "error", "exit-code": "2"}
    assert summary.startswith("### bayeserr gate: error (exit 2)")  # the job summary says so too
    assert "mode input must be" in res.stderr

    res, summary, out = run_action_step(tmp_path, results=str(EXAMPLE), candidate="ckpt-0426",
                                        baseline="ckpt-0419", margin="2")
    assert res.returncode == 2 and out["verdict"] == "error" and "--margin" in res.stderr

    # a model name with shell syntax is an argument, never code
    res, summary, out = run_action_step(tmp_path, results=str(EXAMPLE), candidate="$(touch pwned); `id`",
                                        baseline="ckpt-0419")
    assert res.returncode == 2 and not (tmp_path / "pwned").exists()


def test_review_mends_pooled_note_clusters_of_a_suite_and_bounds_in_range(tmp_path):
    """A multi-task file gated without --suite says it gates the pooled score; a suite of
    identical models counts its clusters, not its questions, in the exact bound; a bound
    never leaves [−1, 1]."""
    rng = np.random.default_rng(3)
    n = 200
    base = (rng.random(n) < 0.6).astype(int)
    df = pd.DataFrame({"model": np.repeat(["new", "prod"], n), "question_id": np.tile([f"q{i}" for i in range(n)], 2),
                       "task": np.tile(np.where(np.arange(n) < 100, "a", "b"), 2),
                       "cluster_id": np.tile([f"c{i % 4}" for i in range(n)], 2),
                       "score": np.concatenate([base, base])})  # identical models
    ds = bayeserr.load(df)
    pooled = bayeserr.gate(ds, "new", "prod", 0.01)
    assert any("this gates the pooled score" in n for c in pooled.checks for n in c.notes)
    suite = bayeserr.gate(ds, "new", "prod", 0.01, suite="macro")
    units = [n for c in suite.checks for n in c.notes if "exact one for no difference" in n]
    assert units and "effective clusters" in units[0]
    assert pooled.passed == suite.passed  # the same data, the same units: the same verdict
    q = [f"q{i}" for i in range(12)]  # two very unequal clusters: df 1, a t bound far below −1
    few = pd.DataFrame({"model": ["new"] * 12 + ["prod"] * 12, "question_id": q * 2,
                        "cluster_id": (["c0"] * 10 + ["c1"] * 2) * 2,
                        "score": [1] * 5 + [0] * 7 + [0] * 5 + [1] * 7})
    r = bayeserr.gate(bayeserr.load(few), "new", "prod", 0.05)
    assert r.checks[0].bound == -1.0 and "lower bound −100.0" in r.checks[0].sentence


def test_the_first_p_of_the_json_and_the_summary_is_the_decisions(cli, tmp_path):
    """With clusters the verdict reads max(CR2 t p, wild p): that p comes first in each
    candidate's JSON (before the t-test's own p_value), with a note on why there are two,
    and it is the job summary's p column; the gate study shows why (the t-test alone can
    pass more often than the level at SWE-bench's repositories, the decision does not)."""
    from pathlib import Path

    import pandas as pd
    res = cli("gate", EXAMPLE, "--candidate", "ckpt-0426", "--baseline", "ckpt-0419", "--margin", "0.05",
              "--format", "json")
    first = json.loads(res.stdout)["candidates"][0]
    keys = list(first)
    assert [k for k in keys if k.startswith("p_")][0] == "p_decision"
    assert keys.index("p_decision") < keys.index("p_value")
    assert (first["p_note"] is not None) == (first["wild"] is not None)
    summary = tmp_path / "summary.md"
    cli("gate", EXAMPLE, "--candidate", "ckpt-0426", "--baseline", "ckpt-0419", "--margin", "0.05",
        "--summary", summary)
    text = summary.read_text()
    assert "| p the verdict reads |" in text
    study = pd.read_csv(Path(__file__).resolve().parents[2] / "docs" / "calibration_gate.csv")
    size = study[(study.clusters == "swebench") & (study.measures == "size")]
    assert size.t_pass_rate.max() > 0.05 > size.pass_rate.max()  # "up to 5.9%" against "1.8–3.6%"
    assert round(100 * size.t_pass_rate.max(), 1) == 5.9
    assert (round(100 * size.pass_rate.min(), 1), round(100 * size.pass_rate.max(), 1)) == (1.8, 3.6)


def test_action_never_passes_without_testing(tmp_path):
    """A results line or an extra argument that would end the command before testing
    (--help, --version) is an error, never exit 0 and verdict=pass (issue 43 item 4)."""
    pytest.importorskip("yaml")
    res, summary, out = run_action_step(tmp_path, results="--help", candidate="ckpt-0426",
                                        baseline="ckpt-0419", margin="0.1")
    assert res.returncode == 2 and out == {"verdict": "error", "exit-code": "2"}, (res.stdout, res.stderr)
    res, summary, out = run_action_step(tmp_path, results=f"{EXAMPLE}\n--version", candidate="ckpt-0426",
                                        baseline="ckpt-0419", margin="0.1")
    assert res.returncode == 2 and out["verdict"] == "error"
    res, summary, out = run_action_step(tmp_path, results=str(EXAMPLE), candidate="ckpt-0426",
                                        baseline="ckpt-0419", margin="0.1", **{"extra-args": "--help"})
    assert res.returncode == 2 and out["verdict"] == "error" and "ends bayeserr gate" in res.stderr
    res, summary, out = run_action_step(tmp_path, results="", candidate="ckpt-0426",
                                        baseline="ckpt-0419", margin="0.1")
    assert res.returncode == 2 and out["verdict"] == "error"


def test_summary_appends_from_two_processes_at_once_all_land_and_keep_old_bytes(tmp_path):
    """Two processes appending to one summary at the same time both land (the append is
    locked), and bytes already there that are not UTF-8 stay as they were (issue 43 item 3)."""
    summary = tmp_path / "summary.md"
    old = b"## an earlier step\n\xff\xfe not UTF-8\n"
    summary.write_bytes(old)
    code = ("import sys; from bayeserr.cli.gate import _append\n"
            "for i in range(40): _append(sys.argv[1], f'### {sys.argv[2]} {i}\\n')")
    procs = [subprocess.Popen([sys.executable, "-c", code, str(summary), who], stderr=subprocess.DEVNULL)
             for who in ("first", "second")]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    data = summary.read_bytes()
    assert data.startswith(old)
    lines = data.decode("utf-8", errors="replace").splitlines()
    for who in ("first", "second"):
        assert {f"### {who} {i}" for i in range(40)} <= set(lines), who
