"""Joint inference over a family of pairs (docs/methods.md §3.9): the
step-down against a direct implementation of its formula, the joint wild
bootstrap against the per-pair one, the parametric path against the normal
distribution, Holm and BH against statsmodels, and the promise that a
simultaneous interval excluding 0 belongs to a pair declared different."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from bayeserr.stats.fewclusters import bm_df, cr2_from_sums, wild_cluster_bootstrap
from bayeserr.stats.simultaneous import (
    benjamini_hochberg,
    from_z,
    gaussian_draws,
    holm,
    joint_inference,
    to_z,
    wild_draws,
)

TOL = 1e-5  # the tie tolerance of the step-down (relative; it runs in single precision)


def _blocks(T, size=37):
    """A blocks() function over a given (draws × pairs) matrix, in uneven blocks."""
    def blocks():
        for start in range(0, len(T), size):
            yield T[start:start + size]
    return blocks


def direct_step_down(t, T, rows, level):
    """Romano–Wolf's step-down written from its formula, one hypothesis at a
    time: hypotheses (k, ±1) with statistic ±t_k and draws ±T*_k; sorted by
    statistic, the j-th largest gets max_{i ≤ j} share(max_{l ≥ i} T*_l ≥ t_(i));
    a pair's p is the smaller of its two directions.  Also the level quantile
    of max |T*| over the family."""
    T = T.astype(np.float32).astype(float)  # the precision the library compares in
    hyps = [(k, s) for k in rows for s in (1.0, -1.0)]
    stat = np.array([s * t[k] for k, s in hyps])
    order = sorted(range(len(hyps)), key=lambda h: -stat[h])
    raw = {}
    for pos, h in enumerate(order):
        rest = order[pos:]
        m = np.max(np.stack([hyps[l][1] * T[:, hyps[l][0]] for l in rest]), axis=0)
        raw[h] = np.mean(m >= stat[h] - TOL * abs(stat[h]))
    adjusted, running = {}, 0.0
    for h in order:
        running = max(running, raw[h])
        adjusted[h] = running
    p = {k: min(adjusted[i] for i, (kk, _) in enumerate(hyps) if kk == k) for k in rows}
    crit = np.quantile(np.max(np.abs(T[:, rows]), axis=1), level, method="higher")
    return p, crit


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_step_down_matches_its_formula(seed):
    rng = np.random.default_rng(seed)
    P, B = 7, 400
    L = rng.normal(size=(P, P)) * 0.4 + np.eye(P)
    T = rng.standard_normal((B, P)) @ L.T / np.sqrt((L * L).sum(axis=1))
    t = np.array([3.1, -2.7, 0.4, 2.2, -0.1, 1.6, 2.9])
    families = [np.arange(P), np.array([0, 2, 4]), np.array([1, 3, 5]), np.array([6, 2, 0])]
    res = joint_inference(t, np.inf, _blocks(T), B, families, 0.95)
    for rows, r in zip(families, res):
        p, crit = direct_step_down(t, T, rows, 0.95)
        assert list(r.rows) == list(rows)
        assert r.p_adjusted == pytest.approx([p[k] for k in rows], abs=1e-12)
        assert r.critical == pytest.approx(crit, rel=1e-6)


def test_classic_step_down_loop_gives_the_same_decisions():
    """The critical-value form (reject every remaining hypothesis above the
    family's quantile; repeat on the rest), as csranks runs it."""
    rng = np.random.default_rng(5)
    P, B, alpha = 10, 2000, 0.05
    T = rng.standard_normal((B, P)).astype(np.float32).astype(float)
    t = np.array([4.0, 3.2, 2.9, 2.6, 2.4, 1.0, -3.5, 0.2, -2.8, 0.0])
    res = joint_inference(t, np.inf, _blocks(T, 500), B, [np.arange(P)], 1 - alpha)[0]
    hyps = [(k, s) for k in range(P) for s in (1.0, -1.0)]
    remaining, rejected = set(range(len(hyps))), set()
    while True:
        m = np.max(np.stack([hyps[h][1] * T[:, hyps[h][0]] for h in remaining]), axis=0)
        new = {h for h in remaining
               if np.sum(m >= hyps[h][1] * t[hyps[h][0]] * (1 - TOL)) < alpha * B and hyps[h][1] * t[hyps[h][0]] > 0}
        if not new:
            break
        rejected |= new
        remaining -= new
    loop = {hyps[h][0] for h in rejected}
    assert loop == set(np.flatnonzero(res.p_adjusted < alpha))
    assert {0, 1, 6} <= loop and not loop & {5, 7, 9}  # |t| 3.2–4.0 in, 1.0 and below out


@pytest.mark.parametrize("clusters", [5, 11])
def test_a_family_of_one_pair_is_the_wild_bootstrap(clusters):
    """One pair: the step-down p equals the two-sided wild cluster restricted
    bootstrap p of §3.4 exactly (every weight vector enumerated on both sides)."""
    rng = np.random.default_rng(clusters)
    sizes = rng.integers(3, 30, clusters).astype(float)
    for k in range(4):
        D = rng.normal(0.3, 1, clusters) * sizes
        n = sizes.sum()
        t = (D.sum() / n) / cr2_from_sums((D - sizes * D.sum() / n)[None], sizes[None])[0]
        blocks, info = wild_draws(D[None], sizes[None])
        assert info.exact and info.draws == (6**5 if clusters == 5 else 2**11)
        got = joint_inference(np.array([t]), np.array([bm_df(sizes)]), blocks, info.draws,
                              [np.array([0])], 0.95)[0].p_adjusted[0]
        ref = wild_cluster_bootstrap(D[None], sizes, interval=False).p_value[0]
        assert got == pytest.approx(ref, abs=1e-12)


def test_joint_wild_draws_share_the_weights():
    """Two identical pairs get identical bootstrap statistics draw by draw, and
    a pair's draws do not depend on the others in the call."""
    rng = np.random.default_rng(3)
    sizes = np.array([40.0, 25, 12, 9, 5])
    D = rng.normal(0, 1, (3, 5)) * sizes
    both, _ = wild_draws(np.vstack([D, D[:1]]), np.broadcast_to(sizes, (4, 5)))
    alone, _ = wild_draws(D[:1], sizes[None])
    a, b = np.vstack(list(both())), np.vstack(list(alone()))
    assert np.array_equal(a[:, 0], a[:, 3]) and np.allclose(a[:, 0], b[:, 0])


@pytest.mark.parametrize("clusters", [6, 40])  # Webb weights (enumerated), Rademacher (drawn)
def test_wild_draws_from_per_model_sums_equal_the_pairs_own(clusters):
    """Complete data: every pair's cluster sums are S[a] − S[b] on one set of sizes, and the
    draws made from the per-model products equal those from the pairs' own sums (to
    rounding), the NaN of a one-cluster family included."""
    rng = np.random.default_rng(clusters)
    sizes = rng.integers(1, 30, clusters).astype(float)
    S = rng.normal(0.5, 0.3, (7, clusters)) * sizes
    ia, ib = np.triu_indices(7, 1)
    D = S[ia] - S[ib]
    own, info = wild_draws(D, np.broadcast_to(sizes, D.shape), draws=999, seed=2)
    per_model, info2 = wild_draws(D, np.broadcast_to(sizes, D.shape), draws=999, seed=2, models=(S, ia, ib))
    a, b = np.vstack(list(own())), np.vstack(list(per_model()))
    assert info == info2 and a.shape == (info.draws, len(ia)) and np.isfinite(a).all()
    assert np.allclose(a, b, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("scheme,table", [("rademacher", (-1.0, 1.0)),
                                          ("webb", tuple(np.sort([s * np.sqrt(x) for s in (-1, 1) for x in (0.5, 1, 1.5)])))])
def test_drawn_weights_in_blocks_are_one_draw(monkeypatch, scheme, table):
    """Drawn weight vectors come block by block (no B × C array): the draws equal the
    bootstrap t written out by hand from one (B, C) draw of the same generator, on every
    pass over the blocks (the step-down reads them twice when a family is split)."""
    import bayeserr.stats.simultaneous as sim
    monkeypatch.setattr(sim, "_BLOCK_CELLS", 3 * 50)  # blocks of 50 // 2 = 3 draws
    rng = np.random.default_rng(5)
    C, B = 50, 101
    sizes = rng.integers(1, 20, C).astype(float)
    D = rng.normal(0, 1, (2, C)) * sizes
    blocks, info = sim.wild_draws(D, np.broadcast_to(sizes, D.shape), draws=B, seed=11, weights=scheme)
    assert (info.weights, info.draws, info.exact) == (scheme, B, False)
    V = np.array(table)[np.random.default_rng(11).integers(0, len(table), size=(B, C))]
    p = sizes / sizes.sum()
    q = 1 / (1 - p)
    N, K, Q = V @ D.T, V @ (p * q * D).T, (V * V) @ (q * D * D).T
    want = N / np.sqrt(np.maximum(Q - 2 * N * K + (p * p * q).sum() * N * N, 0))
    for _ in range(2):
        np.testing.assert_allclose(np.vstack(list(blocks())), want, rtol=1e-10)


def test_a_single_pair_by_the_parametric_path_is_the_normal_test():
    cov = np.array([[1.0, 0.6], [0.6, 2.0]]) * 1e-4
    sd = np.sqrt(cov[0, 0] + cov[1, 1] - 2 * cov[0, 1])
    for t in (1.0, 1.96, 2.5):
        blocks, info = gaussian_draws(cov, np.array([0]), np.array([1]), draws=20_000, seed=1)
        p = joint_inference(np.array([t]), np.inf, blocks, info.draws, [np.array([0])], 0.95)[0].p_adjusted[0]
        exact = 2 * stats.norm.sf(t)
        assert abs(p - exact) < 4 * np.sqrt(exact * (1 - exact) / 20_000)
    assert sd > 0


def test_max_t_critical_value_of_independent_pairs_is_sidak():
    """Uncorrelated pairs (models 0–1, 2–3, 4–5 with independent means): the
    95% point of max |z| over 3 is Šidák's 2.388."""
    cov = np.eye(6)
    ia, ib = np.array([0, 2, 4]), np.array([1, 3, 5])
    blocks, info = gaussian_draws(cov, ia, ib, draws=40_000, seed=2)
    res = joint_inference(np.zeros(3) + 0.5, np.inf, blocks, info.draws, [np.arange(3)], 0.95)[0]
    sidak = stats.norm.isf((1 - 0.95 ** (1 / 3)) / 2)
    assert res.critical == pytest.approx(sidak, abs=0.03)


@pytest.mark.parametrize("m", [1, 2, 7, 50])
def test_holm_and_bh_match_statsmodels(m):
    from statsmodels.stats.multitest import multipletests
    rng = np.random.default_rng(m)
    p = rng.uniform(0, 0.3, m) ** 2
    if m > 2:
        p[1] = p[2]  # a tie
    assert holm(p) == pytest.approx(multipletests(p, method="holm")[1], abs=1e-15)
    assert benjamini_hochberg(p) == pytest.approx(multipletests(p, method="fdr_bh")[1], abs=1e-15)


@pytest.mark.parametrize("df", [2.5, 3, 5, 10, 30, 200])
def test_wallace_transform_puts_t_on_the_normal_scale(df):
    for q in (0.9, 0.975, 0.995):
        tol = 0.06 if df < 3 else 0.035  # only how evenly pairs share the error depends on it
        assert to_z(np.array([stats.t.ppf(q, df)]), df)[0] == pytest.approx(stats.norm.ppf(q), abs=tol)
    z = np.linspace(0, 6, 25)
    assert from_z(to_z(z, df), df) == pytest.approx(z, rel=1e-9, abs=1e-12)
    assert np.all(np.diff(to_z(np.linspace(-50, 50, 101), df)) > 0)
    assert to_z(np.array([1.7, -2.0]), np.inf) == pytest.approx([1.7, -2.0])
    if df == 3:  # quoted in docs/methods.md §3.9
        assert f"{to_z(np.array([stats.t.ppf(0.975, 3)]), 3)[0]:.3f}" == "1.948"
