"""bayeserr.stats.bradley_terry: the Bradley–Terry MLE against statsmodels' logistic
regression on the same games (docs/methods.md, the arena section)."""

import numpy as np
import pytest

from bayeserr.stats.bradley_terry import fit_strengths, structure


def _games(rng, m=5, n=400):
    truth = np.linspace(-1, 1, m)
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m
    win = rng.random(n) < 1 / (1 + np.exp(-(truth[a] - truth[b])))
    wins = np.zeros((m, m))
    np.add.at(wins, (np.where(win, a, b), np.where(win, b, a)), 1.0)
    return a, b, win, wins


def test_mle_matches_logistic_regression():
    sm = pytest.importorskip("statsmodels.api")
    a, b, win, wins = _games(np.random.default_rng(3))
    m = wins.shape[0]
    X = np.zeros((len(a), m))
    X[np.arange(len(a)), a] += 1
    X[np.arange(len(a)), b] -= 1
    fit = sm.Logit(win.astype(float), X[:, 1:]).fit(disp=0)  # model 0's strength fixed at 0
    ref = np.concatenate([[0.0], fit.params])
    ref -= ref.mean()                                        # bayeserr centres: Σ s = 0
    s = fit_strengths(wins)
    assert abs(s.sum()) < 1e-9
    np.testing.assert_allclose(s, ref, atol=1e-4)            # the ridge (1e-6) moves it by ~1e-6


def test_structure_sees_a_model_that_never_lost():
    wins = np.array([[0, 3, 2], [0, 0, 1], [0, 1, 0]], dtype=float)  # model 0 beat everyone
    st = structure(wins)
    assert st.group.tolist() == [0, 0, 0]                    # one connected set of games
    assert st.scc[0] != st.scc[1] and st.scc[1] == st.scc[2]  # but 0 sits alone: it never lost
    assert not st.core[0] and st.core[1] and st.core[2]
    s = fit_strengths(wins)
    assert np.argmax(s) == 0 and np.all(np.isfinite(s))
