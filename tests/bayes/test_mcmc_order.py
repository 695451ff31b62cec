"""--bayes mcmc: the models go into the joint NUTS graphs in the order of their names and each
model's questions in a canonical order, so the same data and seed give the same draws whatever
order the rows came in (and whichever engine holds them)."""

from __future__ import annotations

import numpy as np
import pytest

from bayeserr.bayes import fitting
from bayeserr.bayes.settings import BayesSettings


def _captured(items, monkeypatch):
    from bayeserr.models import hierarchical, three_level
    seen = {}

    def fake(kind):
        def fit(data, **kw):
            seen[kind] = [tuple(np.asarray(a).tolist() for a in d) for d in data]
            raise RuntimeError("captured")
        return fit
    monkeypatch.setattr(three_level, "fit_mcmc_many", fake("three"))
    monkeypatch.setattr(hierarchical, "fit_mcmc_many", fake("two"))
    with pytest.raises(RuntimeError, match="captured"):
        fitting.hierarchical_mcmc_many(items, BayesSettings(mode="mcmc"))
    return seen


def test_the_sampler_gets_the_same_data_whatever_the_order(monkeypatch):
    rng = np.random.default_rng(0)
    items = []
    for name in ("b-model", "a-model", "c-model"):
        n = rng.integers(2, 4, 30).astype(float)
        k = rng.binomial(n.astype(int), 0.6).astype(float)
        items.append((name, k, n, rng.integers(0, 5, 30)))
    first = _captured(items, monkeypatch)
    perm = rng.permutation(30)
    shuffled = [(name, k[perm], n[perm], c[perm]) for name, k, n, c in reversed(items)]
    assert _captured(shuffled, monkeypatch) == first and len(first["three"]) == 3
