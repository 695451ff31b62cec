"""One model's mean score under clusters (``docs/methods.md`` §5.4): the
cluster-effect posterior (the pair model of §5.3 with ``d_i = s_i``),
against an independent three-dimensional quadrature of the same model,
its coverage under few clusters next to the Bayesian bootstrap over clusters
(which visibly fails there), and its place in the report."""

import numpy as np
import pandas as pd
import pytest
from bayeserr.models import bayesian_bootstrap as bb
from bayeserr.models import paired_clustered as pc
from scipy import special, stats

import bayeserr

from ..conftest import real_file


def _brute_force_interval(s, codes, level=0.95):
    """Equal-tailed interval of Δ restricted to [0, 1], by brute force on a
    (Δ, log ρ, log σ) grid: clusters' means ȳ_c ~ N(Δ, τ² + σ²/n_c) with
    τ = ρσ, within-cluster sum of squares W ~ σ² χ²(n − C); flat prior on Δ,
    ρ ~ Half-t_3(0, 0.5), σ² ~ Scaled-Inv-χ²(1, 0.05²) (scipy densities)."""
    sizes = np.bincount(codes).astype(float)
    ybar = np.bincount(codes, weights=s) / sizes
    W = float(((s - ybar[codes]) ** 2).sum())
    n, C = s.size, sizes.size
    delta = np.linspace(-0.5, 1.5, 1601)
    log_rho = np.linspace(np.log(1e-5), np.log(1e3), 140)
    log_sigma = np.linspace(np.log(0.01), np.log(2.0), 120)
    D, R, S = np.meshgrid(delta, np.exp(log_rho), np.exp(log_sigma), indexing="ij", sparse=True)
    tau2 = (R * S) ** 2
    lp = -(n - C) * np.log(S) - W / (2 * S ** 2)
    for c in range(C):
        v = tau2 + S ** 2 / sizes[c]
        lp = lp - 0.5 * np.log(v) - (ybar[c] - D) ** 2 / (2 * v)
    lp = lp + np.log(2 * stats.t.pdf(R / 0.5, 3) / 0.5) + np.log(R)            # ρ prior, on log ρ
    sig2 = S ** 2
    lp = lp + stats.invgamma.logpdf(sig2, 0.5, scale=0.5 * 0.05 ** 2) + np.log(2 * sig2)  # on log σ
    dens = np.exp(lp - lp.max()).sum(axis=(1, 2))
    inside = (delta >= 0) & (delta <= 1)
    cdf = np.cumsum(np.where(inside, dens, 0.0))
    cdf /= cdf[-1]
    a = (1 - level) / 2
    return np.interp([a, 1 - a], cdf, delta)


@pytest.mark.parametrize("centre", [0.6, 0.93])
def test_interval_matches_brute_force_quadrature(centre):
    """Three unequal clusters of fractional scores, one set in the middle and one
    near 1 (where the restriction to [0, 1] matters): the interval agrees
    with the brute-force grid within 2e-3 (its Δ step is 1.25e-3)."""
    rng = np.random.default_rng(7)
    codes = np.repeat([0, 1, 2], [12, 7, 5])
    m = special.expit(special.logit(centre) + rng.normal(0, 0.4, 3))[codes]
    s = rng.beta(6 * m, 6 * (1 - m))
    got = pc.mean_from_arrays(s[None], codes)
    ref = _brute_force_interval(s, codes)
    np.testing.assert_allclose(got.interval[0], ref, atol=2e-3)
    assert got.estimable[0] and 0 <= got.interval[0, 0] < got.interval[0, 1] <= 1
    if centre > 0.9:
        assert got.outside[0] > 1e-3  # the unrestricted posterior leaves [0, 1] here


def test_far_from_the_bounds_it_is_the_pair_models_interval():
    """Away from 0 and 1 the restriction changes next to nothing: the interval
    is the pair model's interval of Δ with d = s (one formula, two uses)."""
    rng = np.random.default_rng(3)
    codes = np.repeat(np.arange(6), [30, 20, 10, 8, 5, 2])
    s = rng.beta(5, 5, (4, codes.size))
    got = pc.mean_from_arrays(s, codes)
    pair = pc.from_arrays(s, codes, rope=0.01)
    assert np.all(got.outside < 1e-6)  # heavy t tails of the mixture over large ρ
    np.testing.assert_allclose(got.interval, pair.interval, atol=1e-6)


def test_order_of_questions_one_cluster_and_no_answers():
    rng = np.random.default_rng(1)
    codes = np.repeat([0, 1, 2], [10, 10, 5])
    s = rng.random((3, 25))
    s[1, 10:] = np.nan  # second model: one cluster only
    s[2] = np.nan
    perm = rng.permutation(25)
    a = pc.mean_from_arrays(s, codes)
    b = pc.mean_from_arrays(s[:, perm], codes[perm])
    np.testing.assert_array_equal(a.interval, b.interval)
    assert a.estimable.tolist() == [True, False, False]
    assert np.isnan(a.interval[1:]).all()
    assert "one cluster" in a.reason[1] and "no answered" in a.reason[2]
    with pytest.raises(ValueError, match="bounds"):
        pc.mean_from_arrays(s, codes, bounds=(1, 0))


def _coverage(sizes, logit_sd, reps, seed, mu=0.6, concentration=4.0):
    """Coverage of the population mean E[m_c] (cluster means m_c =
    expit(logit μ + logit_sd z_c), scores Beta with mean m_c) by the
    cluster-effect posterior and by the Bayesian bootstrap over clusters."""
    rng = np.random.default_rng(seed)
    codes = np.repeat(np.arange(len(sizes)), sizes)
    m = special.expit(special.logit(mu) + logit_sd * rng.normal(size=(reps, len(sizes))))[:, codes]
    s = rng.beta(m * concentration, (1 - m) * concentration)
    z, w = np.polynomial.hermite_e.hermegauss(60)
    truth = float(w @ special.expit(special.logit(mu) + logit_sd * z) / w.sum())
    model = pc.mean_from_arrays(s, codes).interval
    sums = np.stack([np.bincount(codes, weights=row) for row in s])
    counts = np.bincount(codes).astype(float)
    boot = np.array([np.quantile(bb.weighted_means(row[:, None], counts[:, None], 1000, 0)[:, 0],
                                 [0.025, 0.975]) for row in sums])
    cover = lambda iv: np.mean((iv[:, 0] <= truth) & (truth <= iv[:, 1]))  # noqa: E731
    return cover(model), cover(boot)


@pytest.mark.parametrize("sizes", [[60, 40], [50, 30, 20], [40, 25, 15, 10, 10],
                                   [231, 75, 44, 33, 22, 20, 19, 16, 14, 12, 8, 6]],
                         ids=["C2", "C3", "C5", "swebench12"])
def test_coverage_under_few_clusters(sizes):
    """400 seeded data sets per design, cluster effects of logit sd 0.3: the
    cluster-effect interval covers the population mean within 3 Monte Carlo
    SE of 95% or above; the Bayesian bootstrap over clusters does not with
    2–5 clusters (measured: about 50%, 68%, 78%)."""
    reps = 400
    model, boot = _coverage(sizes, 0.3, reps, seed=len(sizes))
    se = np.sqrt(0.95 * 0.05 / reps)
    assert model >= 0.95 - 3 * se, model
    if len(sizes) <= 5:
        assert boot < 0.85, boot


def test_report_column_on_alpacaeval():
    """AlpacaEval (judge probabilities, 5 instruction sources): every model
    gets the cluster-effect interval, inside [0, 1] and wider than the
    Bayesian bootstrap over the 5 clusters; a one-cluster file gets none."""
    df = pd.read_csv(real_file("alpacaeval2_per_instruction.csv.gz"))
    models = sorted(df["model"].unique())[:6]
    df = df[df["model"].isin(models)][["model", "question_id", "cluster_id", "score"]].dropna()
    df = df[df.groupby("question_id")["model"].transform("size") == len(models)]
    scores = bayeserr.score(bayeserr.load(df))
    for s in scores:
        lo, hi = s.intervals["cluster_effect_posterior"]
        blo, bhi = s.intervals["bayesian_bootstrap"]
        assert 0 <= lo < s.mean < hi <= 1 and hi - lo > bhi - blo
    one = df.assign(cluster_id="all")
    one_scores = bayeserr.score(bayeserr.load(one))
    assert all(s.intervals["cluster_effect_posterior"] is None for s in one_scores)
    # with one cluster the Bayesian bootstrap resamples questions (it had zero width over one cluster)
    flat = bayeserr.score(bayeserr.load(df.drop(columns="cluster_id")))
    for s, f in zip(one_scores, flat):
        assert s.intervals["bayesian_bootstrap"] == pytest.approx(f.intervals["bayesian_bootstrap"])
        assert s.intervals["bayesian_bootstrap"][1] - s.intervals["bayesian_bootstrap"][0] > 0.01


def test_html_glossary_says_what_the_recommended_methods_are(tmp_path):
    """The HTML glossary's Method entry explains each method that appears in it."""
    df = pd.read_csv(real_file("alpacaeval2_per_instruction.csv.gz"))
    models = sorted(df["model"].unique())[:4]
    df = df[df["model"].isin(models)][["model", "question_id", "cluster_id", "score"]].dropna()
    df = df[df.groupby("question_id")["model"].transform("size") == len(models)]
    rep = bayeserr.report(bayeserr.load(df))
    page = rep.to_html()
    shown = {rep_key for rep_key in (bayeserr.registries.methods.recommended(s) for s in rep.scores)}
    for key in shown:
        m = bayeserr.registries.methods.INTERVALS[key]
        assert f"{m.label}: {m.meaning}" in page.replace("&#x27;", "'"), key
