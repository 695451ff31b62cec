"""The sufficient statistics of the Bayesian columns (``docs/methods.md`` §7.3,
"Sufficient statistics and engines"): what the posteriors of a report need
beyond the sums of :mod:`bayeserr.stats.sufficient`, in forms that any engine
computes partition by partition and combines by addition.

* **Count table** — for 0/1 answers, the number of questions of each model with
  each (cluster, answers ``n``, right answers ``k``): rows
  ``[model, cluster, n, k, questions]``.  Every Beta–Binomial model of §5.2
  (two-level over clusters or over questions, three-level over clusters and
  questions) depends on a model's questions only through this table: its
  likelihood is a product over questions (or over clusters of questions) and
  the questions of a cluster are exchangeable.  Its size is bounded by
  models × clusters × (K + 1)(K + 2)/2, whatever the number of questions.
* **Unit multiset** — without clusters, the distinct rows of per-question
  means across the models (``-1`` where a model did not answer) and how many
  questions have each.  The Bayesian bootstrap over questions (§5.4) draws one
  Gamma variate per distinct row in sorted order
  (:func:`bayeserr.models.bayesian_bootstrap.canonical_units`), so this
  multiset gives the in-memory draws exactly.  It is the one statistic that
  can grow with the questions (continuous scores have as many distinct rows as
  questions), so it is kept only up to :data:`UNIT_BYTES` and otherwise
  dropped, and the quantities that need it are then named as not computed.

Everything else the Bayesian columns need is already among the sums: the Beta
posterior (per-model counts), the cluster-effect posteriors of a model and of
a pair (cluster sums, sizes and the total of squares, from ``QA``/``XX``), the
Bayesian bootstrap over clusters (cluster sums and sizes), the Dirichlet 2×2
pair posterior (McNemar's cells) and the Bayesian ranks (the covariance of the
means).
"""

from __future__ import annotations

import numpy as np

#: the unit multiset is dropped past this many bytes of distinct rows (then the Bayesian bootstrap over
#: questions is named as not computed): 256 MiB holds 1M questions × 32 models of distinct fractional means
UNIT_BYTES = 256 * 2 ** 20
#: the value of a model that did not answer a question, in the unit multiset (scores are in [0, 1])
UNANSWERED = -1.0


# --------------------------------------------------------------------------- #
# count table
# --------------------------------------------------------------------------- #
def count_table(answers: np.ndarray, codes=None) -> np.ndarray:
    """The count table of a cube of answers ``(M, n, K)`` (NaN = no answer): one row
    ``[model, cluster, n, k, questions]`` per distinct (model, cluster, n, k) among the
    questions whose answers are all 0 or 1 (cluster 0 without ``codes``), in sorted order."""
    answers = np.asarray(answers, float)
    m, n_q = answers.shape[:2]
    answered = ~np.isnan(answers)
    n = answered.sum(axis=-1)
    ok = (n > 0) & (np.isin(answers, (0.0, 1.0)) | ~answered).all(axis=-1)
    k = np.rint(np.where(answered, answers, 0.0).sum(axis=-1)).astype(np.int64)
    cl = np.zeros(n_q, np.int64) if codes is None else np.asarray(codes, np.int64)
    width = int(n.max(initial=0)) + 1
    shape = (m, int(cl.max(initial=0)) + 1, width, width)
    # one integer key a cell, counted: a bincount over the key space when it is small (the usual case:
    # models × clusters × (K + 1)², e.g. 400k at 100 models, 1,000 clusters, K = 1), else np.unique
    key = np.ravel_multi_index((np.broadcast_to(np.arange(m)[:, None], (m, n_q))[ok],
                                np.broadcast_to(cl, (m, n_q))[ok], n[ok], k[ok]), shape)
    if np.prod(shape, dtype=float) <= max(4 * key.size, 1 << 20):
        total = np.bincount(key, minlength=int(np.prod(shape)))
        keys = np.flatnonzero(total)
        total = total[keys]
    else:
        keys, total = np.unique(key, return_counts=True)
    return np.stack([*np.unravel_index(keys, shape), total], axis=1).astype(np.int64).reshape(-1, 5)


def counts_give_scores(s, correct, samples) -> np.ndarray:
    """Cells whose ``n_correct``/``n_samples`` counts are whole, in range and give the score ``s`` to its
    rounding (``|s − c/n| ≤ ½/n``): the cells a Beta–Binomial model may read through their counts."""
    c, n = np.asarray(correct, float), np.asarray(samples, float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return ((n >= 1) & (c >= 0) & (c <= n) & (c == np.round(c)) & (n == np.round(n))
                & (np.abs(s - c / n) <= 0.5 / n))


def column_count_table(s: np.ndarray, correct: np.ndarray, samples: np.ndarray, codes=None):
    """The count table of ``n_correct``/``n_samples`` columns ``(M, n)`` (NaN = absent) for the
    questions whose counts are whole, in range and give the score ``s`` (``|s − c/n| ≤ ½/n``: the
    memory engine's rule), and per model whether every answered question's counts do (the models
    the Beta–Binomial models read through their counts)."""
    answered = ~np.isnan(s)
    c, n = np.asarray(correct, float), np.asarray(samples, float)
    ok = counts_give_scores(s, c, n)
    m, n_q = s.shape
    cl = np.zeros(n_q, np.int64) if codes is None else np.asarray(codes, np.int64)
    cols = [np.broadcast_to(np.arange(m)[:, None], (m, n_q))[ok], np.broadcast_to(cl, (m, n_q))[ok],
            n[ok], c[ok], np.ones(int(ok.sum()))]
    table = reduce_counts(np.stack([np.asarray(x, np.int64) for x in cols], 1))
    return table, (ok | ~answered).all(axis=-1)


def reduce_counts(rows: np.ndarray) -> np.ndarray:
    """Rows of a count table with the same (model, cluster, n, k) added, in sorted order."""
    rows = np.asarray(rows, np.int64).reshape(-1, 5)
    if not len(rows):
        return rows
    keys, inverse = np.unique(rows[:, :4], axis=0, return_inverse=True)
    total = np.bincount(inverse.ravel(), weights=rows[:, 4], minlength=len(keys)).astype(np.int64)
    return np.concatenate([keys, total[:, None]], axis=1)


def select_counts(table: np.ndarray, order) -> np.ndarray:
    """The count table of the models at positions ``order`` (renumbered in that order)."""
    new = np.full(int(table[:, 0].max(initial=-1)) + 1, -1, np.int64)
    order = np.asarray(order, np.int64)
    new[order[order < new.size]] = np.flatnonzero(order < new.size)
    out = table[new[table[:, 0]] >= 0].copy() if len(table) else table.copy()
    out[:, 0] = new[out[:, 0]] if len(out) else out[:, 0]
    return reduce_counts(out)


def unit_counts(table: np.ndarray, rows: int, clusters: int | None):
    """``(k_u, n_u, m_u)`` of each model for the Beta–Binomial models (§5.2): with
    ``clusters``, per cluster (right answers, answers, questions), each ``(rows, C)``;
    without, one unit per question (``(rows, U)``, padded with 0 / 0 / 0), in the order
    of the table (the models do not depend on the order of the units)."""
    if clusters is not None:
        shape = (rows, clusters)
        idx = np.ravel_multi_index((table[:, 0], table[:, 1]), shape) if len(table) else np.zeros(0, np.int64)
        acc = [np.bincount(idx, weights=w, minlength=rows * clusters).reshape(shape)
               for w in (table[:, 3] * table[:, 4], table[:, 2] * table[:, 4], table[:, 4])]
        return tuple(a.astype(float) for a in acc)
    k, n, cl = question_rows(table, rows)
    return k, n, (n > 0).astype(float)


def question_rows(table: np.ndarray, rows: int):
    """Each model's questions expanded from the count table: ``(k, n, cluster)``, each
    ``(rows, U)`` with U the most questions of a model, padded with 0 / 0 / 0 (order: the
    table's, which every model of §5.2 ignores)."""
    per = np.bincount(table[:, 0], weights=table[:, 4], minlength=rows).astype(np.int64) if len(table) else \
        np.zeros(rows, np.int64)
    width = int(per.max(initial=0))
    out = [np.zeros((rows, width)) for _ in range(3)]
    if not len(table):
        return tuple(out)
    model = np.repeat(table[:, 0], table[:, 4])
    start = np.concatenate([[0], np.cumsum(per)[:-1]])
    pos = np.arange(model.size) - start[model]
    for arr, col in zip(out, (3, 2, 1)):
        arr[model, pos] = np.repeat(table[:, col], table[:, 4])
    return tuple(out)


def repeated_models(table: np.ndarray, rows: int) -> np.ndarray:
    """Models with some question answered more than once (K > 1)."""
    out = np.zeros(rows, bool)
    if len(table):
        out[np.unique(table[table[:, 2] > 1, 0])] = True
    return out


# --------------------------------------------------------------------------- #
# unit multiset (the Bayesian bootstrap over questions)
# --------------------------------------------------------------------------- #
def unit_multiset(s: np.ndarray):
    """The distinct rows of per-question means ``s`` ``(M, n)`` (NaN = unanswered) across the
    models, with ``UNANSWERED`` for no answer, and the number of questions of each:
    ``(values (U, M), mult (U,))``."""
    rows = np.where(np.isnan(s), UNANSWERED, s).T
    if not rows.size:
        return rows.reshape(0, s.shape[0]), np.zeros(0)
    values, mult = np.unique(rows, axis=0, return_counts=True)
    return values, mult.astype(float)


def merge_units(a, b):
    """Two unit multisets added (``None`` when either was dropped or the sum passes
    :data:`UNIT_BYTES`)."""
    if a is None or b is None:
        return None
    if not len(a[1]):
        return b
    if not len(b[1]):
        return a
    return bounded_units(_distinct(np.concatenate([a[0], b[0]]), np.concatenate([a[1], b[1]])))


def _distinct(values, mult):
    """The distinct rows of ``values`` with the multiplicities of their copies added."""
    values, inverse = np.unique(values, axis=0, return_inverse=True)
    return values, np.bincount(inverse.ravel(), weights=mult, minlength=len(values))


def bounded_units(units):
    """``units`` unless past :data:`UNIT_BYTES` (then ``None``)."""
    return None if units is None or units[0].nbytes > UNIT_BYTES else units


def select_units(units, order):
    """The unit multiset of the models at positions ``order`` (questions none of them answered dropped)."""
    if units is None:
        return None
    values = units[0][:, np.asarray(order, np.int64)]
    keep = (values != UNANSWERED).any(axis=1)
    if not keep.any():
        return values[:0], units[1][:0]
    return _distinct(values[keep], units[1][keep])


def units_as_scores(units):
    """A unit multiset as per-question means ``(M, U)`` (NaN = unanswered) and multiplicities."""
    values, mult = units
    return np.where(values == UNANSWERED, np.nan, values).T, mult


# --------------------------------------------------------------------------- #
# run table (pass@k and pass^k)
# --------------------------------------------------------------------------- #
#: the run table is kept up to this many (model, question) cells (two float32 counts each, 128 MiB; the
#: pass@k and pass^k sections then build a view of about 3 × 8 bytes a cell), else named as not computed
RUN_CELLS = 2 ** 24


def run_table(answers: np.ndarray, questions, codes=None, columns=None):
    """Runs ``n`` and successes ``c`` per (model, question) of 0/1 answers ``(M, n, K)`` — or the
    ``(n_correct, n_samples)`` ``columns`` when the data have them, as the memory engine reads them —
    (float32, exact below 2²⁴), the question labels (text) and their cluster codes: what pass@k and
    pass^k read (§6; their pair tests need each question's counts, so this grows with the questions)."""
    if columns is not None:
        c, n = (np.asarray(x, np.float32) for x in columns)
    else:
        answered = ~np.isnan(answers)
        n = answered.sum(axis=-1).astype(np.float32)
        c = np.where(answered, answers, 0.0).sum(axis=-1).astype(np.float32)
    labels = np.array([str(q) for q in questions], dtype=object)
    return n, c, labels, None if codes is None else np.asarray(codes, np.int64)


def merge_runs(a, b):
    """Two run tables of disjoint questions side by side (``None`` when either was dropped or the
    cells pass :data:`RUN_CELLS`)."""
    if a is None or b is None or a[0].size + b[0].size > RUN_CELLS:
        return None
    return (np.concatenate([a[0], b[0]], axis=1), np.concatenate([a[1], b[1]], axis=1),
            np.concatenate([a[2], b[2]]), None if a[3] is None else np.concatenate([a[3], b[3]]))


def select_runs(runs, order):
    """The run table of the models at positions ``order``."""
    if runs is None:
        return None
    idx = np.asarray(order, np.int64)
    return runs[0][idx], runs[1][idx], runs[2], runs[3]


# --------------------------------------------------------------------------- #
# sums of squares of paired differences
# --------------------------------------------------------------------------- #
def cluster_value_sums(d, codes):
    """Per-row cluster sums ``(D, sizes, Q)`` — each (rows, C) — of ``d`` (rows × n,
    NaN = not answered) and ``d²`` for the integer cluster ``codes`` (n,).  Sums
    come from :func:`bayeserr.stats.fewclusters.cluster_totals` (one call over all
    rows, with codes offset per row).  Unless the values are integers (0/1
    scores), each row's questions are first put in order of value, so the sums,
    and every result, do not depend on the order of the questions."""
    from bayeserr.stats.fewclusters import cluster_totals
    d = np.atleast_2d(np.asarray(d, dtype=float))
    codes = np.asarray(codes)
    if codes.shape != d.shape[-1:]:
        raise ValueError(f"codes must have shape ({d.shape[-1]},), got {codes.shape}")
    if codes.size == 0:
        raise ValueError("no questions")
    if not np.issubdtype(codes.dtype, np.integer) or codes.min() < 0:
        raise ValueError("codes must be non-negative integers")
    finite = d[~np.isnan(d)]
    if np.any(np.abs(finite) > 1):
        raise ValueError("differences of scores in [0, 1] must lie in [-1, 1]")
    P, C = d.shape[0], int(codes.max()) + 1
    if exact_in_any_order(finite):
        per_row = np.broadcast_to(codes, d.shape)
    else:                                        # canonical order: by value (NaN last)
        order = np.argsort(d, axis=1, kind="stable")
        d = np.take_along_axis(d, order, axis=1)
        per_row = codes[order]
    flat = (per_row + C * np.arange(P)[:, None]).ravel()
    D, sizes = cluster_totals(d.ravel(), flat)
    Q, _ = cluster_totals((d * d).ravel(), flat)
    return D.reshape(P, C), sizes.reshape(P, C), Q.reshape(P, C)


def exact_in_any_order(*arrays) -> bool:
    """Every value an integer small enough for float sums to be exact in any order."""
    return all(bool(np.all(a == np.round(a))) and float(np.abs(a).sum()) < 2.0 ** 52 for a in arrays)


def total_of_squares(Q: np.ndarray) -> np.ndarray:
    """Each row's total of per-cluster sums of squares ``Q`` (rows × C), added in order of value
    unless they are whole numbers (then exact in any order): the same total however the
    clusters are numbered."""
    Q = np.asarray(Q, float)
    return Q.sum(axis=-1) if exact_in_any_order(Q) else np.sort(Q, axis=-1).sum(axis=-1)


def pair_square_totals(N, SA, QA, XX, centre, ia, ib) -> np.ndarray:
    """``Σ d_i²`` over the questions both answered, ``d = s_a − s_b``, of the pairs
    ``(ia[k], ib[k])`` from the centred pair sums (``x = s − c``; δ = c_a − c_b)::

        Σ d² = QA_ab + QA_ba − 2 XX_ab + 2δ (SA_ab − SA_ba) + δ² N_ab

    Exact in float64 for 0/1 scores (every term is a multiple of 2⁻²⁰)."""
    delta = centre[ia] - centre[ib]
    out = (QA[ia, ib] + QA[ib, ia] - 2.0 * XX[ia, ib] + 2.0 * delta * (SA[ia, ib] - SA[ib, ia])
           + delta * delta * N[ia, ib])
    return np.maximum(out, 0.0)
