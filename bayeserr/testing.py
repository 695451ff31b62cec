"""Test helpers: gate a model in a test suite (top layer; ``docs/methods.md`` §3.11).

::

    from bayeserr.testing import assert_not_worse

    def test_new_checkpoint_is_not_worse():
        assert_not_worse("results.csv", "ckpt-new", "ckpt-prod", margin=0.01)

The test fails with the gate's sentence (an :class:`AssertionError`, which
pytest and unittest show as a test failure) when the data do not show the
candidate within the margin of the baseline; bad input (a missing file, an
unknown model) raises :class:`~bayeserr.base.errors.InputError`, an error
rather than a failure.
"""

from __future__ import annotations

#: keyword arguments that go to the gate; every other keyword goes to :func:`bayeserr.load`
GATE_KEYWORDS = frozenset({"on_unpaired", "seed", "bayes", "options", "cluster_correction", "suite", "task"})


def assert_not_worse(results, candidate, baseline, margin: float = 0.01, level: float = 0.95,
                     **kwargs):
    """Assert that ``candidate`` is not worse than ``baseline`` by more than ``margin``.

    The non-inferiority gate of ``bayeserr gate`` (:func:`bayeserr.analyses.gate.gate`):
    passes when the one-sided ``level`` lower bound of candidate − baseline lies
    above ``−margin``.

    Parameters
    ----------
    results
        A path (or anything :func:`bayeserr.load` reads: several paths, a glob
        pattern, a long results DataFrame) or a dataset from :func:`bayeserr.load`.
    candidate
        The model to check, or a list of models (Holm over them; all must pass).
    baseline
        The model it must not be worse than.
    margin
        In score units (0.01 is one point).
    level
        Confidence of the one-sided bound.
    kwargs
        ``on_unpaired``, ``seed``, ``bayes``, ``suite`` (``"macro"``/``"size"``) and
        ``task`` go to the gate; the rest (``where``,
        ``cluster_col``, ``no_cluster``, …) to :func:`bayeserr.load`.

    Returns
    -------
    GateResult
        The gate's result (:class:`bayeserr.analyses.gate.GateResult`), when it passes.

    Raises
    ------
    AssertionError
        With the gate's sentence, when it does not pass.
    """
    from bayeserr.analyses.gate import gate

    gate_kw = {k: v for k, v in kwargs.items() if k in GATE_KEYWORDS}
    load_kw = {k: v for k, v in kwargs.items() if k not in GATE_KEYWORDS}
    ds = _dataset(results, load_kw)
    result = gate(ds, candidate, baseline, margin, mode="non-inferiority", level=level, **gate_kw)
    if not result.passed:
        raise AssertionError(result.sentence)
    return result


def _dataset(results, load_kw: dict):
    """A dataset as it is, anything else through :func:`bayeserr.load`."""
    import xarray as xr

    if isinstance(results, xr.Dataset):
        if load_kw:
            from bayeserr.base.errors import InputError
            raise InputError(f"assert_not_worse: {', '.join(sorted(load_kw))} are options of bayeserr.load, "
                             "but the results are already a loaded dataset; pass them to load, or pass the "
                             "path.")
        return results
    from bayeserr.data.loading import load
    return load(results, **load_kw)
