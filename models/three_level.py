"""Three-level hierarchical model: cluster → question → answer (SPEC §5.2).

For 0/1 answers with both clusters and K > 1 samples per question::

    η ~ Normal(0, 1.5)                     logit of a typical cluster's accuracy
    τ ~ HalfNormal(1)                      between-cluster SD on the logit scale
    z_c ~ Normal(0, 1)                     cluster effect, non-centred
    φ_c = expit(η + τ z_c)                 accuracy of cluster c
    log κ_q ~ Normal(2.5, 1.5)             between-question concentration within a cluster
    k_i ~ BetaBinomial(K_i, φ_c κ_q, (1 − φ_c) κ_q)   right answers of question i in cluster c

The question rate θ_i ~ Beta(φ_c κ_q, (1 − φ_c) κ_q) is integrated out (the
Beta–Binomial line).  Reported:

* ``mu`` — μ = E_z[expit(η + τ z)], the mean accuracy of a *new* cluster
  (deterministic, by quadrature over z: :func:`mean_rate`);
* ``phi`` — the rate φ_c of each observed cluster; the score's estimand is
  the question-weighted mean of these clusters, ``W = Σ_c m_c φ_c / Σ_c m_c``
  (m_c answered questions in cluster c).

Why these priors.  The cluster level is logit-normal rather than Beta so
that it can be written non-centred (``z_c`` standard normal, scaled by τ):
the centred form, with φ_c drawn around its mean, puts NUTS in a funnel when
τ is small or clusters hold few answers (12 divergent transitions on the
40-question example of tests/bayes/test_three_level.py, 47 on the issue's; none
non-centred).  ``η ~ Normal(0, 1.5)``: a typical cluster's accuracy between 5%
and 95% a priori (central 95%), nearly flat for μ in between (the same
scale as the paired latent model's intercepts).  ``τ ~ HalfNormal(1)``:
cluster odds ratios up to about e² ≈ 7 between a typical and a ±1 SD cluster
(97.5% prior quantile τ ≈ 2.2) — clusters of one benchmark rarely differ more
— while keeping the posterior proper with two or three clusters, which a
flat prior on τ does not; its density is positive at τ = 0, so "no cluster
effect" is not ruled out.  ``log κ_q ~ Normal(2.5, 1.5)`` is the two-level
model's concentration prior (:mod:`.hierarchical`): question-level
intra-cluster correlations 1/(1 + κ_q) of about 0.004–0.6.  Change them with
:class:`ThreeLevelPrior`.

Two fits of the same model:

* :func:`fit_exact` — no sampler.  The hyperparameters are integrated on a
  grid: a coarse pass over the prior box of (ν, τ, log κ_q), η = ν s(τ)
  (``_spread``), and zoom passes locate the region above 1e-9 of the
  largest density; the fine pass puts uniform nodes on τ (from 0: the
  integrand is even in τ) and log κ_q (trapezoid rule) and, on every line
  (τ, κ_q), uniform η nodes over that line's own mass range
  (``_line_ranges``: η's conditional spread shrinks as τ → 0); axes are
  refined where an a-posteriori error estimate asks.  Each cluster's φ_c is
  integrated numerically: for every κ_q the cluster likelihood
  ``l_c(x) = Π_i BetaBinomial(k_i | K_i, expit(x) κ_q, expit(−x) κ_q)`` is
  tabulated once per fit on a uniform lattice in x = logit φ (log-gamma sums
  grouped by count; clusters with the same questions' (k, K) computed once),
  and ``∫ l_c(x) Normal(x; η, τ) dx`` is a matrix product of that table with
  the normal weights of the nodes — the trapezoid rule, whose error falls
  like exp(−2π² (width / step)²) for these smooth integrands.  The finest
  lattice's step is half the sharpest cluster's binomial width; each κ_q
  takes the coarsest of its halvings whose step is at most 1/2.5 of its own
  likelihoods' sharpest width (which grows as κ_q falls: a cluster of
  questions far apart says less about φ_c), checked a posteriori, and each
  τ one whose step is at most τ / 1.5 (``_Lattice``); for τ below ¾ of the
  binomial width the integral is a Gauss–Hermite sum in z with l_c
  evaluated exactly at η + τz (``_integrals``).  Lines (τ, κ_q) computed by
  one pass are kept for the next (``_SlabCache``).  The interval of μ
  inverts its posterior CDF (μ increases with η on each line; cubic-Hermite
  cumulative integrals, fourth order: ``_mu_summaries``).  The interval of
  W: given the hyperparameters and the data the φ_c are independent, their
  first four conditional moments come from the same matrix products, and
  W's posterior is the grid mixture of laws with those cumulants (Pearson
  type I or Edgeworth, ``hierarchical._mixture_quantiles``) on η lines
  refined by interpolation, each node's law widened by its cell
  (``w_mixture``).
* :func:`fit_mcmc` — PyMC NUTS on the same model, non-centred.

Both are tested against each other (tests/bayes/test_three_level.py: within 4
MCSEs on MathArena), the grid against a Monte Carlo brute force and against
a finer grid.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from bayeserr.models import hierarchical as _h
from scipy import special

#: z nodes of μ = E[expit(η + τ Z)]: trapezoid on [−9.5, 9.5], step 1/8 (error below
#: exp(−2π²/(τ/8)), < 3e-9 for τ ≤ 8: expit's poles lie π/τ off the real z axis)
Z_NODES = np.arange(-76, 77) / 8
Z_WEIGHTS = np.exp(-Z_NODES ** 2 / 2) / np.exp(-Z_NODES ** 2 / 2).sum()
#: Gauss–Hermite rules in z for τ below the x-grid's reach: n nodes where l_c's
#: width in z is at least 3, 2 and 4/3 (8, 12, 16 nodes: relative error < 3e-7, 6e-11, 1e-9)
_GH = {n: (z, w / w.sum()) for n in (8, 12, 16) for z, w in [np.polynomial.hermite_e.hermegauss(n)]}
#: the x = logit φ grid stays within ±X_LIMIT; beyond, each cluster likelihood is taken as constant
X_LIMIT = 15.0
#: the finest x-lattice step as a fraction of the sharpest cluster likelihood's SD (binomial width)
X_STEP = 0.5
#: below this × that SD, τ is integrated in z (Gauss–Hermite) rather than on the x grid; above,
#: the integrand is at least 1.2 steps wide and the trapezoid error below exp(−2π² 1.2²) ≈ 5e-13
SMALL_TAU = 0.75
#: log l_c below its maximum by more than this is not computed (taken as 0 likelihood)
X_TRIM = 40.0
#: each pattern's region above max − X_TRIM is located on every this-many x-grid points
WINDOW_STRIDE = 8
#: up to this many patterns, each pattern's x-grid region is evaluated on its own
WINDOW_PATTERNS = 16
#: cells below this fraction of the largest density are outside the box
MASS_THRESHOLD = 1e-9
RESOLVED_STEPS = 5
COARSE = (16, 12, 12)  #: (η, τ, log κ_q) points of the coarse pass over the prior box
ZOOM = (12, 10, 10)
FINE = (21, 13, 15)  #: fine pass: η nodes per line, τ, log κ_q (odd: every other node is a coarser grid)
EXPLORE = 32  #: η nodes per line when locating each line's mass
MAX_POINTS = (129, 81, 65)
#: target error of μ's quantiles and mean (a-posteriori estimate, see _refine)
TOLERANCE = 1e-3
#: largest change from dropping every other τ or log κ node that is accepted: three times
#: TOLERANCE, so that even at the trapezoid rule's second order the full grid's error is
#: within TOLERANCE (2e-2 let EvalPerf's QwQ-32B miss it by 2.9e-3; 3e-3 keeps every EvalPerf
#: and MathArena model within 1e-3 of a grid four times finer, for μ and for the weighted mean)
HALF_TOLERANCE = 3 * TOLERANCE
CHECK_QUANTILES = (0.005, 0.025, 0.1, 0.5, 0.9, 0.975, 0.995)


@dataclass(frozen=True)
class ThreeLevelPrior:
    """Priors of η, τ and κ_q (see the module docstring for the reasoning)."""

    eta_mean: float = 0.0
    eta_sd: float = 1.5
    tau_sd: float = 1.0  #: scale of the HalfNormal prior of τ
    log_kappa_mean: float = 2.5
    log_kappa_sd: float = 1.5

    def log_density(self, eta, tau, log_kappa):
        """Log prior density of (η, τ, log κ_q), up to a constant."""
        a = (np.asarray(eta, float) - self.eta_mean) / self.eta_sd
        b = np.asarray(tau, float) / self.tau_sd
        c = (np.asarray(log_kappa, float) - self.log_kappa_mean) / self.log_kappa_sd
        return -0.5 * (a * a + b * b + c * c)

    def box(self) -> np.ndarray:
        """Integration box of (ν, τ, log κ_q), η = ν s(τ): ν and log κ_q within
        6 prior SDs (``|η| ≤ |ν| s(τ)``, so the η box is covered), τ in [0, 6 scales]."""
        return np.array([[self.eta_mean - 6 * self.eta_sd, self.eta_mean + 6 * self.eta_sd],
                         [0.0, 6 * self.tau_sd],
                         [self.log_kappa_mean - 6 * self.log_kappa_sd,
                          self.log_kappa_mean + 6 * self.log_kappa_sd]])


def _rate_terms(eta, tau):
    """E[expit(η + τZ)], E[expit(−η − τZ)] and E[expit′(η + τZ)] (broadcast)."""
    e = np.asarray(eta, float)[..., None] + np.asarray(tau, float)[..., None] * Z_NODES
    p, r = special.expit(e), special.expit(-e)
    return p @ Z_WEIGHTS, r @ Z_WEIGHTS, (p * r) @ Z_WEIGHTS


def mean_rate(eta, tau):
    """μ = E_z[expit(η + τ z)], z ~ Normal(0, 1): a new cluster's mean accuracy."""
    return _rate_terms(eta, tau)[0]


# ----------------------------------------------------------------- data
@dataclass(frozen=True)
class _Data:
    """Clusters with the same (k, K) of their questions and the same weight, once."""

    k: np.ndarray  #: (patterns × questions) right answers, padded with 0
    n: np.ndarray  #: answers, padded with 0 (ignored)
    tables: tuple  #: for k, n − k and n: (values, patterns × values counts) of :func:`_value_counts`
    mult: np.ndarray  #: clusters per pattern
    share: np.ndarray  #: each such cluster's share of W, m_c / Σ m
    sigma: float  #: smallest binomial SD of a cluster rate on the logit scale
    n_clusters: int
    n_questions: int
    n_answers: int
    lattice: object = None  #: the fit's :class:`_Lattice` (x lattices kept across its passes)


def _prepare(k, n, codes, weights=None) -> _Data:
    k, n = np.asarray(k, float).ravel(), np.asarray(n, float).ravel()
    codes = np.asarray(codes).ravel()
    if not (k.shape == n.shape == codes.shape):
        raise ValueError("k, n and the cluster codes need one entry per question")
    if not (np.all(np.isfinite(k)) and np.all(np.isfinite(n))):
        raise ValueError("k and n must be finite")
    if np.any(k < 0) or np.any(k > n) or np.any(k != np.round(k)) or np.any(n != np.round(n)):
        raise ValueError("need integers 0 <= k <= n for every question")
    keep = n > 0
    if not keep.any():
        raise ValueError("no answered question")
    k, n, codes = k[keep], n[keep], codes[keep]
    labels, inv = np.unique(codes, return_inverse=True)
    inv = inv.ravel()
    size = np.bincount(inv)
    if weights is None:
        weights = size.astype(float)
    weights = np.asarray(weights, float).ravel()
    if weights.shape != size.shape or np.any(weights < 0) or not np.all(np.isfinite(weights)) \
            or weights.sum() <= 0:
        raise ValueError("weights: one finite, non-negative number per cluster, not all 0")
    order = np.lexsort((k, n, inv))
    start = np.concatenate([[0], np.cumsum(size)[:-1]])
    pos = np.arange(order.size) - start[inv[order]]
    kp, np_ = np.zeros((labels.size, size.max())), np.zeros((labels.size, size.max()))
    kp[inv[order], pos], np_[inv[order], pos] = k[order], n[order]
    share = weights / weights.sum()
    table = np.concatenate([kp, np_, share[:, None]], axis=1)
    uniq, mult = np.unique(table, axis=0, return_counts=True)
    q = size.max()
    kc, nc = np.bincount(inv, weights=k), np.bincount(inv, weights=n)
    p = (kc + 0.5) / (nc + 1)
    sigma = float(np.min(1 / np.sqrt(nc * p * (1 - p))))
    kq, nq = uniq[:, :q], uniq[:, q:2 * q]
    return _Data(kq, nq, tuple(_value_counts(v) for v in (kq, nq - kq, nq)), mult.astype(float),
                 uniq[:, 2 * q], sigma, int(labels.size), int(k.size), int(n.sum()))


def _value_counts(values: np.ndarray):
    """How to add ``Σ_i [lnΓ(v_i + a) − lnΓ(a)]`` over each row's entries:
    ``("rising", counts)`` with counts[:, j] = entries > j (then the sum is
    Σ_j counts_j log(a + j)), or, for large values, ``("gamma", distinct
    values, counts)``."""
    top = int(values.max()) if values.size else 0
    if top <= 32:
        above = (values[:, :, None] > np.arange(top)[None, None, :]).sum(axis=1).astype(float)
        return ("rising", None, above)
    uniq, inv = np.unique(values, return_inverse=True)
    counts = np.zeros((values.shape[0], uniq.size))
    np.add.at(counts, (np.repeat(np.arange(values.shape[0]), values.shape[1]), inv.ravel()), 1.0)
    keep = uniq > 0
    return ("gamma", uniq[keep], counts[:, keep])


def _add_log_rising(out, table, shift):
    """out (D, L, n) += Σ_i [lnΓ(v_i + shift) − lnΓ(shift)] per pattern; shift (L, n)."""
    kind, values, counts = table
    if not counts.shape[1]:
        return
    # a table of terms (values × shift) times the counts (patterns × values), in blocks of values
    block = max(1, 2 ** 21 // max(shift.size, 1))
    for j in range(0, counts.shape[1], block):
        if kind == "rising":
            terms = np.log(shift[None] + np.arange(j, min(j + block, counts.shape[1]))[:, None, None])
        else:  # lnΓ(v + shift) − lnΓ(shift), precise for any κ (a plain lnΓ difference is not, far out)
            terms = _h.log_rising(values[j:j + block, None, None], shift[None])
        out += (counts[:, j:j + block] @ terms.reshape(terms.shape[0], -1)).reshape(out.shape)


def _loglik(data: _Data, x, log_kappa) -> np.ndarray:
    """log l_c(x, κ_q) of every pattern (binomial coefficients dropped):
    (patterns, len(log_kappa), points), for points ``x`` of shape (points,)
    (the same for every κ_q) or (len(log_kappa), points).  Each question adds
    ``[lnΓ(k + a) − lnΓ(a)] + [lnΓ(K − k + b) − lnΓ(b)] − [lnΓ(K + κ) − lnΓ(κ)]``
    with a = φκ, b = (1 − φ)κ, φ = expit(x)."""
    kappa = np.exp(np.asarray(log_kappa, float))[:, None]
    x = np.broadcast_to(np.clip(np.asarray(x, float), -30.0, 30.0), (kappa.size, np.shape(x)[-1]))
    out = np.zeros((data.k.shape[0],) + x.shape)
    _add_log_rising(out, data.tables[0], kappa * special.expit(x))
    _add_log_rising(out, data.tables[1], kappa * special.expit(-x))
    by_kappa = np.zeros((data.k.shape[0], kappa.size, 1))
    _add_log_rising(by_kappa, data.tables[2], kappa)
    out -= by_kappa
    return out


def _pattern_rows(data: _Data, rows) -> _Data:
    """The patterns ``rows`` of ``data`` alone (for :func:`_loglik`)."""
    tables = tuple((kind, values, counts[rows]) for kind, values, counts in data.tables)
    return replace(data, k=data.k[rows], n=data.n[rows], tables=tables, mult=data.mult[rows],
                   share=data.share[rows], lattice=None)


def _windowed_loglik(data: _Data, x: np.ndarray, log_kappa):
    """:func:`_loglik` on the grid ``x``, evaluated only where it matters:
    ``(x[a:b], log l)`` with log l = −inf where a pattern's log l_c is more
    than ``X_TRIM`` below its maximum (for every κ_q), and ``[a, b)`` the
    range where some pattern is above.

    Each pattern's likelihood is unimodal in x (a sum of terms concave in φ,
    and x = logit φ is monotone), so its region above max − X_TRIM is one
    interval: it is located on every ``WINDOW_STRIDE``-th point and widened by
    one such stride on each side (which contains the interval, the coarse
    maximum being at most the true one), then evaluated at full resolution.
    With few patterns each gets its own interval, so the gaps between
    clusters' peaks are not computed; with many, their union is."""
    D, L = data.k.shape[0], np.size(log_kappa)
    idx = np.unique(np.append(np.arange(0, x.size, WINDOW_STRIDE), x.size - 1))
    coarse = _loglik(data, x[idx], log_kappa)
    keep = (coarse - coarse.max(axis=2, keepdims=True) > -X_TRIM).any(axis=1)  # (D, coarse points)
    first = np.argmax(keep, axis=1)
    last = keep.shape[1] - 1 - np.argmax(keep[:, ::-1], axis=1)
    lo = idx[np.maximum(first - 1, 0)]
    hi = idx[np.minimum(last + 1, idx.size - 1)] + 1
    a, b = int(lo.min()), int(hi.max())
    if D > WINDOW_PATTERNS:
        return x[a:b], _loglik(data, x[a:b], log_kappa)
    out = np.full((D, L, b - a), -np.inf)
    for d in range(D):
        out[d, :, lo[d] - a:hi[d] - a] = _loglik(_pattern_rows(data, [d]), x[lo[d]:hi[d]], log_kappa)[0]
    return x[a:b], out


# ----------------------------------------------------------------- posterior on a grid
def _spread(tau):
    """s(τ) = √(1 + πτ²/8): with η = ν s(τ), ν ≈ logit μ whatever τ (the
    probit approximation E[expit(η + τZ)] ≈ expit(η / s(τ)))."""
    return np.sqrt(1 + np.pi / 8 * np.asarray(tau, float) ** 2)


#: a cluster likelihood's lattice step is at most its width / this (the old fixed step,
#: X_STEP × the sharpest binomial width, is the finest level); with τ ≥ TAU_STEPS steps the
#: product l_c × Normal(η, τ) is at least 1.27 steps wide: trapezoid error below 2e-14
WIDTH_STEPS = 2.5
TAU_STEPS = 1.5
#: the a-posteriori check of a lattice: the trapezoid sums of l_c and of its second moment from
#: every other node may differ from the full lattice's by at most this (relative); the full
#: lattice's own error is then far smaller (the fourth power for a Gaussian, the square for a
#: function analytic in a strip); the log likelihoods' own rounding makes ~1e-12
LATTICE_CHECK = 1e-8
#: the coarsest lattice step (the poles of the log-gamma terms lie π off the real x axis:
#: the trapezoid error is below exp(−2π²/0.35) ≈ 4e-25 whatever the width)
MAX_STEP = 0.35


class _Lattice:
    """The x = logit φ lattices of one fit's cluster likelihoods, kept across its passes.

    All lattices are levels of one: x = −X_LIMIT + g h0 (h0 = X_STEP × the
    sharpest cluster's binomial width, the step of a single lattice), level m
    taking every 2^m-th node.  For every κ_q node:

    1. the likelihoods are explored on a coarse level (step ≤ 0.5): each
       pattern's region above its maximum − ``X_TRIM`` (unimodal, so widened by
       one explored step it contains the true region) and the largest
       curvature of log l_c there, whose inverse square root s is the
       sharpest width of l_c at this κ_q;
    2. its level: the coarsest with step ≤ min(s / ``WIDTH_STEPS``,
       ``MAX_STEP``), checked a posteriori (``LATTICE_CHECK``: the sums from
       every other node agree) and made finer until the check holds;
    3. l_c is tabulated on that region at the level a pass needs (finer for
       small τ, see :func:`_integrals`), once per fit.

    At large κ_q every cluster likelihood is as sharp as its binomial width
    and the level is the old single lattice; at small κ_q (questions of a
    cluster far apart) l_c is several times wider and so is its step."""

    def __init__(self, data: _Data):
        self.data = data
        h0 = float(np.clip(X_STEP * data.sigma, 1e-3, MAX_STEP))
        # every level up to the coarsest allowed ends on ±X_LIMIT: the step a little finer if need be
        top = 2 ** int(max(0, np.floor(np.log2(MAX_STEP / h0) + 1e-9)))
        self.G = top * int(np.ceil(2 * X_LIMIT / (h0 * top) - 1e-9))  # level-0 nodes 0..G
        self.h0 = 2 * X_LIMIT / self.G
        self.explore = int(max(0, min(5, np.floor(np.log2(0.5 / self.h0)))))
        self.info = {}  # κ -> (level, lowest g, highest g) of the union of the patterns' regions
        self.tables = {}  # κ -> {level: (first index j at that level, log l (D, N))}

    def x(self, g):
        return -X_LIMIT + np.asarray(g, float) * self.h0

    def _explore(self, lk):
        """Regions and levels of the κ_q nodes ``lk`` not yet explored."""
        new = [v for v in dict.fromkeys(lk.tolist()) if v not in self.info]
        if not new:
            return
        stride = 2 ** self.explore
        g = np.arange(0, self.G + 1, stride)
        ll = _loglik(self.data, self.x(g), np.array(new))  # (D, new, points)
        keep = ll > ll.max(axis=2, keepdims=True) - X_TRIM
        first = np.argmax(keep, axis=2)
        last = g.size - 1 - np.argmax(keep[:, :, ::-1], axis=2)
        g_lo = g[np.maximum(first - 1, 0)].min(axis=0)
        g_hi = g[np.minimum(last + 1, g.size - 1)].max(axis=0)
        step = stride * self.h0
        curv = -(ll[:, :, :-2] - 2 * ll[:, :, 1:-1] + ll[:, :, 2:]) / step ** 2  # at nodes 1 .. points − 2
        top = np.where(keep[:, :, 1:-1], curv, -np.inf).max(axis=2) if g.size > 2 else np.full(keep.shape[:2], -np.inf)
        with np.errstate(divide="ignore"):
            width = np.where(keep.sum(axis=2) >= 3, np.where(top > 0, 1 / np.sqrt(np.maximum(top, 1e-300)), np.inf),
                             0.0).min(axis=0)  # 0: too sharp for the explored step
        limit = np.minimum(width / WIDTH_STEPS, MAX_STEP)
        with np.errstate(divide="ignore"):
            level = np.floor(np.log2(np.maximum(limit, 1e-300) / self.h0) + 1e-9)
        level = np.clip(np.nan_to_num(level, neginf=0.0), 0, 30).astype(int)
        for v, m, a, b in zip(new, level, g_lo, g_hi):
            self.info[v] = [int(m), int(a), int(b)]
            self.tables[v] = {}
        self.tabulate(new, [self.info[v][0] for v in new])  # together, one likelihood call per level
        for v in new:  # the a-posteriori check (tabulating the level it settles on, one κ_q at a time)
            while self.info[v][0] > 0 and not self._resolved(v):
                self.info[v][0] -= 1

    def _resolved(self, v) -> bool:
        """Whether l_c at κ_q = exp(v) on its level passes ``LATTICE_CHECK`` (every pattern)."""
        m = self.info[v][0]
        j0, ll = self.table(v, m)
        j = j0 + np.arange(ll.shape[1])
        x = self.x(j * 2 ** m)
        f = np.exp(ll - ll.max(axis=1, keepdims=True))  # (D, N), 0 where not computed
        centre = x[np.argmax(f, axis=1)][:, None]
        even = j % 2 == 0
        for g in (1.0, (x[None] - centre) ** 2):
            fg = f * g
            full, half = fg.sum(axis=1), 2 * fg[:, even].sum(axis=1)
            if np.any(np.abs(half - full) > LATTICE_CHECK * np.abs(full)):
                return False
        return True

    def table(self, v, m: int):
        """``(j0, log l (D, N))``: l_c at κ_q = exp(v) on level ``m`` over the
        patterns' region (j0: the first node's index on that level); −inf
        where a pattern's value was not computed (more than ``X_TRIM`` below
        its maximum, see :func:`_windowed_loglik`)."""
        tabs = self.tables[v]
        if m not in tabs:
            self.tabulate([v], [m])
        return tabs[m]

    def tabulate(self, values, levels):
        """Tabulate the κ_q values ``values`` at ``levels``: one κ_q by
        :func:`_windowed_loglik` (each pattern only over its own region), several
        of one level by one likelihood call over each one's region."""
        for m in set(levels):
            group = [v for v, lv in zip(values, levels) if lv == m and m not in self.tables[v]]
            if not group:
                continue
            size = 2 ** m
            top = self.G // size
            lo = np.array([-(-self.info[v][1] // size) for v in group])
            hi = np.minimum(np.array([self.info[v][2] // size for v in group]), top)
            lo = np.minimum(lo, hi)
            if len(group) == 1:
                j = np.arange(lo[0], hi[0] + 1)
                xs, ll = _windowed_loglik(self.data, self.x(j * size), np.array(group))
                start = lo + int(np.round((xs[0] - self.x(lo[0] * size)) / (self.h0 * size)))
            else:
                n = int((hi - lo).max()) + 1
                start = np.clip(np.minimum(lo, top - n + 1), 0, None)
                j = start[:, None] + np.arange(n)[None, :]
                ll = _loglik(self.data, self.x(j * size), np.array(group))  # (D, group, n)
            for i, v in enumerate(group):
                self.tables[v][m] = (int(start[i]), ll[:, i])

    def level(self, v) -> int:
        return self.info[v][0]


def _integrals(data: _Data, E, T, lk, moments: bool = False, live=None):
    """``log ∫ l_c(x) Normal(x; η, τ) dx`` of every pattern c for the columns
    (η, τ) = (E[p, l], T[p]) and κ_q = exp(lk[l]) — ``E`` is (columns, len(lk))
    or (columns, 1) when the same for every κ_q: (patterns, len(lk), columns);
    with ``moments`` also the first four conditional moments of φ_c about a
    reference ``ref`` (patterns, len(lk)), on the columns ``live`` (NaN
    elsewhere, and there the log integrals are not computed either).

    τ ≥ ``SMALL_TAU`` × the sharpest cluster's width: trapezoid sums on the
    x lattices of :class:`_Lattice` (a product of the tabulated l_c with the
    normal weights; beyond a lattice's ends l_c is taken as constant), each
    κ_q on its own level: the coarser of the level its likelihoods allow and
    the one with steps ≤ τ / ``TAU_STEPS``; smaller τ: Gauss–Hermite sums in
    z with l_c evaluated exactly at η + τ z (l_c(η) at τ = 0).
    """
    D, L, P = data.k.shape[0], lk.size, E.shape[0]
    lat = data.lattice if data.lattice is not None else _Lattice(data)
    want = np.ones(P, bool) if live is None or not moments else np.asarray(live, bool)
    small = T < SMALL_TAU * data.sigma
    ratio = np.where(T > 0, data.sigma / np.maximum(T, 1e-300), np.inf)  # l_c's width in z, at least
    parts = []  # Gauss–Hermite: (columns, log l (D, L, points), points (L, points), weights)
    for cols, (nodes, weights) in ((np.flatnonzero(want & (T == 0)), (np.zeros(1), np.ones(1))),
                                   (np.flatnonzero(want & small & (ratio >= 3)), _GH[8]),
                                   (np.flatnonzero(want & small & (ratio < 3) & (ratio >= 2)), _GH[12]),
                                   (np.flatnonzero(want & small & (ratio < 2) & (T > 0)), _GH[16])):
        if cols.size:
            pts = (E[cols].T[:, :, None] + T[None, cols, None] * nodes[None, None, :]).reshape(E.shape[1], -1)
            parts.append((cols, _loglik(data, pts, lk), np.broadcast_to(pts, (L, pts.shape[1])), weights))
    on_grid = np.flatnonzero(want & ~small)
    tabs = None
    if on_grid.size:
        lat._explore(lk)
        with np.errstate(divide="ignore"):
            finest = int(max(0, np.floor(np.log2(T[on_grid].min() / (TAU_STEPS * lat.h0)) + 1e-9)))
        levels = [min(lat.level(v), finest) for v in lk.tolist()]
        todo = [(v, m) for v, m in zip(lk.tolist(), levels) if m not in lat.tables[v]]
        lat.tabulate([v for v, _ in todo], [m for _, m in todo])
        tabs = [lat.table(v, m) + (m, lat.level(v)) for v, m in zip(lk.tolist(), levels)]
    maxima = [p[1].max(axis=2) for p in parts]
    if tabs is not None:
        maxima.append(np.stack([t[1].max(axis=1) for t in tabs], axis=1))
    M = np.max(maxima, axis=0)  # (D, L)
    M = np.where(np.isfinite(M), M, 0.0)
    if moments:
        if tabs is not None:  # the mode of every pattern on its lattice
            ref = special.expit(np.stack([lat.x((t[0] + np.argmax(t[1], axis=1)) * 2 ** t[2]) for t in tabs],
                                         axis=1))
        else:
            last = parts[-1]
            ref = special.expit(np.take_along_axis(np.broadcast_to(last[2][None], last[1].shape),
                                                   np.argmax(last[1], axis=2)[..., None], axis=2)[..., 0])
    R = 5 if moments else 1
    out = np.full((R, D, L, P), np.nan)

    def powers(lv, x):
        """(R, D, L, points): l_c and l_c × (φ − ref)^r."""
        stack = np.empty((R,) + lv.shape)
        stack[0] = lv
        if moments:
            dev = special.expit(x)[None] - ref[:, :, None]
            for r in range(1, R):
                stack[r] = stack[r - 1] * dev
        return stack

    for cols, ll, pts, weights in parts:
        v = powers(np.exp(ll - M[:, :, None]), pts)
        out[:, :, :, cols] = v.reshape(R, D, L, cols.size, weights.size) @ weights
    if tabs is not None:
        _lattice_sums(lat, tabs, powers, M, E, T, on_grid, out)
    sums = out[0]
    with np.errstate(divide="ignore", invalid="ignore"):
        log_i = np.log(sums) + M[:, :, None]
    if not moments:
        return log_i, None, None
    with np.errstate(invalid="ignore", divide="ignore"):  # nodes of no mass (sum 0): not used
        raw = out[1:] / sums[None]
    return log_i, raw, ref


def _lattice_sums(lat: _Lattice, tabs, powers, M, E, T, cols, out):
    """The trapezoid sums of :func:`_integrals` on the lattices ``tabs`` (per
    κ_q: first index, log l (D, N), the table's level, the κ_q's own level) for
    the columns ``cols``, written into ``out`` (R, D, L, columns).

    Every line (τ, κ_q) is on level min(the κ_q's own, the one with steps
    ≤ τ / ``TAU_STEPS``) (never finer than its table).  The lines of one κ_q
    and level take the nodes within η ± 9τ of any of their columns (one step
    more on each side) and go through one matrix product, values × normal
    weights of all their columns; when the η nodes are the same for every
    κ_q (``E`` has one column) the κ_q nodes of one level share the normal
    weights too.  Beyond a lattice's ends l_c is constant (the normal's mass
    there goes on the end node)."""
    L = len(tabs)
    D = tabs[0][1].shape[0]
    n = np.array([t[1].shape[1] for t in tabs])
    j0 = np.array([t[0] for t in tabs])
    base = np.array([t[2] for t in tabs])  # level of each table
    own = np.array([t[3] for t in tabs])  # the coarsest level each κ_q allows
    N = int(n.max())
    logs = np.full((D, L, N), -np.inf)
    for l, t in enumerate(tabs):
        logs[:, l, :n[l]] = t[1]
    xs = lat.x((j0[:, None] + np.arange(N)[None, :]) * 2 ** base[:, None])  # (L, N)
    stack = powers(np.exp(logs - M[:, :, None]), xs)  # (R, D, L, N)
    R = stack.shape[0]
    RD = R * D
    flat = stack.transpose(2, 0, 1, 3).reshape(L, RD, N)
    # the columns of every τ, padded to the same count
    taus, inv = np.unique(T[cols], return_inverse=True)
    inv = inv.ravel()
    order = np.argsort(inv, kind="stable")
    per = np.bincount(inv, minlength=taus.size)
    C = int(per.max())
    slot = np.arange(cols.size) - np.concatenate([[0], np.cumsum(per)[:-1]])[inv[order]]
    colmat = np.full((taus.size, C), -1)
    colmat[inv[order], slot] = cols[order]
    used = colmat >= 0
    Ecol = E[np.where(used, colmat, cols[0])]  # (τ, C, L or 1)
    lo = np.where(used[:, :, None], Ecol, np.inf).min(axis=1) - 9 * taus[:, None]  # (τ, L or 1)
    hi = np.where(used[:, :, None], Ecol, -np.inf).max(axis=1) + 9 * taus[:, None]
    with np.errstate(divide="ignore"):
        m_tau = np.maximum(0, np.floor(np.log2(taus / (TAU_STEPS * lat.h0)) + 1e-9)).astype(int)
    level = np.maximum(np.minimum(own[None, :], m_tau[:, None]), base[None, :])  # (τ, L)
    res = np.zeros((taus.size, L, RD, C))
    scale = 1 / np.sqrt(2 * np.pi)
    if E.shape[1] == 1:
        _shared_levels(lat, flat, n, j0, base, level, taus, lo[:, 0], hi[:, 0], Ecol[:, :, 0], res)
    else:
        for l in range(L):
            for m in np.unique(level[:, l]):
                ti = np.flatnonzero(level[:, l] == m)
                k = 2 ** (m - base[l])  # stride in table nodes
                unit = lat.h0 * 2.0 ** base[l]
                p_lo = int(np.clip(np.ceil((lo[ti, l].min() + X_LIMIT) / unit - j0[l] - 1e-9) - k, 0, n[l] - 1))
                p_hi = int(np.clip(np.floor((hi[ti, l].max() + X_LIMIT) / unit - j0[l] + 1e-9) + k, 0, n[l] - 1))
                first = p_lo + (-(j0[l] + p_lo)) % k  # level-m nodes: table indices j0 + p divisible by k
                last = p_hi - (j0[l] + p_hi) % k
                if last < first:
                    continue
                idx = np.arange(first, last + 1, k)
                tau = np.repeat(taus[ti], C)
                d = np.subtract.outer(xs[l, idx], Ecol[ti, :, l].ravel())  # (nodes, lines × C)
                d *= 1 / tau
                w = _gauss(d)
                weight = lat.h0 * 2.0 ** m * scale / tau  # per column
                if first - k < 0:  # beyond the lattice's ends l_c is constant: the normal's mass there
                    w[0] = w[0] / 2 + special.ndtr(d[0]) / weight
                if last + k > n[l] - 1:
                    w[-1] = w[-1] / 2 + special.ndtr(-d[-1]) / weight
                part = (flat[l][:, idx] @ w) * weight  # (R·D, lines × C)
                res[ti, l] = part.reshape(RD, ti.size, C).transpose(1, 0, 2)
    tv, cv = np.nonzero(used)
    vals = res[tv, :, :, cv]  # (pairs, L, R·D)
    out[:, :, :, colmat[tv, cv]] = vals.reshape(tv.size, L, R, D).transpose(2, 3, 1, 0)


def _gauss(d):
    """exp(−d²/2), without temporaries of the size of ``d``."""
    w = np.square(d)
    w *= -0.5
    return np.exp(w, out=w)


def _shared_levels(lat, flat, n, j0, base, level, taus, lo, hi, Ecol, res):
    """:func:`_lattice_sums` for η nodes shared by every κ_q: per level, one
    run of nodes covering every table of that level (each κ_q's values zero
    outside its own table), the normal weights of all the level's columns
    computed once, and one matrix product; the constant tails beyond each
    table's ends are added to its sums."""
    # size: the model's sufficient statistics passed as arrays, no object between calls
    RD = flat.shape[1]
    C = Ecol.shape[1]
    scale = 1 / np.sqrt(2 * np.pi)
    for m in np.unique(level):
        ti = np.flatnonzero((level == m).any(axis=1))
        ls = np.flatnonzero((level[ti] == m).any(axis=0))
        k = 2 ** (m - base[ls])
        # level-m indices of each table's first and last level-m node, and of the columns' reach
        a = -(-j0[ls] // k)
        b = (j0[ls] + n[ls] - 1) // k
        step = lat.h0 * 2.0 ** m
        J_lo = max(int(a.min()), int(np.floor((lo[ti].min() + X_LIMIT) / step - 1e-9)) - 1)
        J_hi = min(int(b.max()), int(np.ceil((hi[ti].max() + X_LIMIT) / step + 1e-9)) + 1)
        if J_hi < J_lo:
            continue
        J = np.arange(J_lo, J_hi + 1)
        valid = (J[None, :] >= a[:, None]) & (J[None, :] <= b[:, None])  # (κ, nodes)
        pos = np.where(valid, J[None, :] * k[:, None] - j0[ls][:, None], 0)
        values = flat[ls[:, None], :, pos] * valid[:, :, None]  # (κ, nodes, R·D)
        tau = np.repeat(taus[ti], C)
        d = np.subtract.outer(lat.x(J * 2 ** m), Ecol[ti].ravel())  # (nodes, τ × C)
        d *= 1 / tau
        w = _gauss(d)
        weight = step * scale / tau
        part = values.transpose(0, 2, 1).reshape(ls.size * RD, J.size) @ w  # (κ × R·D, τ × C)
        part = part.reshape(ls.size, RD, ti.size, C)
        for at, sign, inside in ((a, 1.0, J_lo <= a), (b, -1.0, b <= J_hi)):
            for e in np.flatnonzero(inside):  # the end node: half its weight, plus the normal's mass beyond
                i = int(at[e] - J_lo)
                extra = (special.ndtr(sign * d[i]) / weight - w[i] / 2).reshape(ti.size, C)
                part[e] += values[e, i][:, None, None] * extra[None]
        part = part * weight.reshape(ti.size, C)[None, None]
        need = level[np.ix_(ti, ls)] == m  # the (τ, κ_q) lines of this level
        tt, ll = np.nonzero(need)
        res[ti[tt], ls[ll]] = part[ll, :, tt]


def _log_density(data: _Data, eta, tau, lk, prior: ThreeLevelPrior, moments: bool = False, live=None):
    """Log posterior density of (η, τ, log κ_q) at the nodes ``eta`` (n, len(tau),
    len(lk)) — or (n, len(tau), 1) when the η nodes are the same for every κ_q —
    × ``tau`` × ``lk``: shape (n, len(tau), len(lk)).  With ``moments`` the
    first four conditional cumulants of W = Σ_c share_c φ_c at the nodes
    ``live`` (n, len(tau), len(lk)) are returned instead (NaN elsewhere)."""
    eta, tau, lk = np.asarray(eta, float), np.asarray(tau, float), np.asarray(lk, float)
    n, m = eta.shape[0], tau.size
    T = np.broadcast_to(tau[None, :], (n, m)).ravel()
    E = eta.reshape(n * m, eta.shape[2])
    if not moments:
        log_i, _, _ = _integrals(data, E, T, lk)
        return _sum_log_density(data, log_i, eta, tau, lk, prior)
    _, raw, ref = _integrals(data, E, T, lk, moments=True, live=live.any(axis=2).ravel())
    return _w_cumulants(data, raw, ref, n, m)


def _sum_log_density(data: _Data, log_i, eta, tau, lk, prior):
    """The log density (n, len(tau), len(lk)) from the patterns' log integrals (D, L, n × len(tau))."""
    n, m, L, D = eta.shape[0], tau.size, lk.size, data.k.shape[0]
    lp = (data.mult @ log_i.reshape(D, -1)).reshape(L, n, m).transpose(1, 2, 0)
    return lp + prior.log_density(eta, tau[None, :, None], lk[None, None, :])


def _w_cumulants(data: _Data, raw, ref, n: int, m: int) -> list:
    """W's first four conditional cumulants, each (n, m, L), from the patterns'
    raw moments of φ_c about ``ref`` (:func:`_integrals`)."""
    D, L = ref.shape
    r1, r2, r3, r4 = raw
    s1 = r1 * r1
    m2 = r2 - s1
    m3 = r3 - (3 * r2 - 2 * s1) * r1
    m4 = r4 - 4 * r3 * r1 + (6 * r2 - 3 * s1) * s1
    # at τ = 0, φ_c = expit(η) exactly: a point mass, kept as a law of SD 1e-9
    per_cluster = [ref[:, :, None] + r1, np.maximum(m2, 1e-18), m3, m4 - 3 * m2 * m2]
    coef = np.stack([data.mult * data.share ** (j + 1) for j in range(4)])  # (4, D)
    stacked = np.stack([c.reshape(D, -1) for c in per_cluster])  # (4, D, L × columns)
    out = np.einsum("jd,jdp->jp", coef, stacked)
    return [o.reshape(L, n, m).transpose(1, 2, 0) for o in out]


#: up to this many patterns, W's conditional cumulants are integrated with every fine grid's
#: log density (the same normal weights serve both, so they cost little more); with more, the
#: products over patterns dominate and they are integrated once, on the final grid's live nodes
MOMENT_PATTERNS = 16


class _SlabCache:
    """Results per τ line of the passes of one fit, kept for the later passes.

    The fine grid's lines (τ_j, κ_l) are computed one τ at a time over every
    κ_q: a line's values depend on τ_j, the κ_q nodes and its own η nodes
    only, so when a refinement halves the τ step (keeping the old nodes) or
    a line's η range is unchanged, its log density, W's cumulants and the
    rates are those of the earlier pass, not computed again."""

    def __init__(self):
        self.store = {}

    def get(self, keys, compute, need=None):
        """``[value for key in keys]``, calling ``compute(missing indices)`` (a list
        of values, in that order) for the keys not stored (or whose stored
        value fails ``need``)."""
        missing = [j for j, key in enumerate(keys) if key not in self.store
                   or (need is not None and not need(self.store[key]))]
        if missing:
            for j, value in zip(missing, compute(np.array(missing))):
                self.store[keys[j]] = value
        return [self.store[key] for key in keys]


def _trapezoid(n: int) -> np.ndarray:
    w = np.ones(n)
    w[0] = w[-1] = 0.5
    return w


def _mass_box(logp, axes, bounds):
    """The box of nodes above ``MASS_THRESHOLD`` of the maximum (one step wider,
    within ``bounds``); whether it spans ``RESOLVED_STEPS`` steps on every axis;
    whether the mass reaches an edge of the grid that is not a prior bound
    (the box is then widened on that side by half its width)."""
    above = logp > logp.max() + np.log(MASS_THRESHOLD)
    box = np.empty((3, 2))
    resolved, open_edge = True, False
    for ax, grid in enumerate(axes):
        hit = above.any(axis=tuple(a for a in range(3) if a != ax))
        first, last = int(np.argmax(hit)), int(grid.size - 1 - np.argmax(hit[::-1]))
        step = grid[1] - grid[0]
        grow = max(step, (grid[last] - grid[first]) / 2)
        low = first == 0 and grid[0] > bounds[ax, 0] + 1e-9
        high = last == grid.size - 1 and grid[-1] < bounds[ax, 1] - 1e-9
        box[ax, 0] = max(grid[first] - (grow if low else step), bounds[ax, 0])
        box[ax, 1] = min(grid[last] + (grow if high else step), bounds[ax, 1])
        resolved &= last - first >= RESOLVED_STEPS
        open_edge |= low or high
    return box, resolved and not open_edge, open_edge


def _box_density(data, axes, prior):
    """Log density of (ν, τ, log κ_q) on a box grid, η = ν s(τ)."""
    nu, tau, lk = axes
    s = _spread(tau)
    return _log_density(data, (nu[:, None] * s[None, :])[:, :, None], tau, lk, prior) \
        + np.log(s)[None, :, None]


def _line_ranges(data, prior, nu_box, tau, lk, points: int = EXPLORE, cache=None):
    """For every line (τ_j, κ_l), a range of η holding its mass: (lo, hi), each
    (len(tau), len(lk)).  One pass explores ν_box × s(τ_j) with ``points``
    nodes (the same for every κ_q); a line is given the nodes above
    ``MASS_THRESHOLD`` of its maximum, one node wider — or, when those span
    fewer than ``2 RESOLVED_STEPS`` nodes (η's conditional spread shrinks as
    τ → 0), its peak ± 9 SDs of the parabola through the log density at the
    three nodes around the peak.  :func:`_grid_posterior` widens lines whose
    ends still hold mass."""
    e = np.linspace(0.0, 1.0, points)[:, None]
    s = _spread(tau)[None, :]
    eta = nu_box[0] * s + (nu_box[1] - nu_box[0]) * s * e  # (points, len(tau))
    if cache is None:
        logp = _log_density(data, eta[:, :, None], tau, lk, prior)
    else:  # per τ line: the explored nodes depend on τ_j, the ν box and the κ_q nodes only
        keys = [("explore", float(t), lk.tobytes(), np.asarray(nu_box, float).tobytes(), points) for t in tau]
        slabs = cache.get(keys, lambda js: np.moveaxis(
            _log_density(data, eta[:, js, None], tau[js], lk, prior), 1, 0))
        logp = np.stack(slabs, axis=1)
    grid = np.broadcast_to(eta[:, :, None], logp.shape)
    # a line's own threshold, but nothing below 1e-3 × MASS_THRESHOLD of the largest density
    floor = np.maximum(logp.max(axis=0, keepdims=True) + np.log(MASS_THRESHOLD),
                       logp.max() + np.log(1e-3 * MASS_THRESHOLD))
    above = logp > floor
    first = np.argmax(above, axis=0)
    last = points - 1 - np.argmax(above[::-1], axis=0)

    def take(a, idx):
        return np.take_along_axis(a, idx[None], axis=0)[0]

    lo, hi = take(grid, np.maximum(first - 1, 0)), take(grid, np.minimum(last + 1, points - 1))
    top = np.clip(np.argmax(logp, axis=0), 1, points - 2)
    f0, f1, f2 = take(logp, top - 1), take(logp, top), take(logp, top + 1)
    step = take(grid, top + 1) - take(grid, top)
    curv = (f0 - 2 * f1 + f2) / step ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        peak = take(grid, top) + step * (f0 - f2) / (2 * (f0 - 2 * f1 + f2))
        sd = 1 / np.sqrt(-curv)
    narrow = (last - first < 2 * RESOLVED_STEPS) & (curv < 0) & np.isfinite(sd)
    lo = np.where(narrow, np.maximum(lo, peak - 9 * sd), lo)
    hi = np.where(narrow, np.minimum(hi, peak + 9 * sd), hi)
    return lo, hi


# ----------------------------------------------------------------- μ from the grid
def _rates(eta, tau):
    """E[expit(η + τZ)], E[expit(−η − τZ)] and E[expit′(η + τZ)] at the nodes
    ``eta`` (n, len(tau), ...): trapezoid in z with step min(0.9, 0.95/τ) on
    [−9, 9] (error below exp(−2π²/(τ step)) < 1e-9: expit's poles lie π/τ off
    the real z axis).  expit(x) and expit(−x) from one exponential, e^−|x|."""
    g, r, slope = (np.empty(eta.shape) for _ in range(3))
    for j, t in enumerate(tau):
        h = min(0.9, 0.95 / t) if t > 0 else 1.0
        z = np.arange(-int(9 / h), int(9 / h) + 1) * h if t > 0 else np.zeros(1)
        w = np.exp(-z * z / 2)
        w /= w.sum()
        x = eta[:, j][..., None] + t * z
        e = np.exp(-np.abs(x))
        big = 1 / (1 + e)  # expit(|x|)
        small = e * big  # expit(−|x|)
        pos = x >= 0
        p, q = np.where(pos, big, small), np.where(pos, small, big)
        g[:, j], r[:, j], slope[:, j] = p @ w, q @ w, (big * small) @ w
    return g, r, slope


def _mu_summaries(eta, h, f, rates, q) -> np.ndarray:
    """Quantiles ``q`` of μ and its mean from lines of η nodes ``eta`` (n × lines,
    uniform with steps ``h`` per line), their densities ``f`` (line weights
    included) and ``rates`` = :func:`_rates` at the nodes.

    μ is increasing in η on every line (τ, κ_q fixed), so its CDF is
    ``Σ_lines P(line, η ≤ η_line(μ))``: per line, the cumulative integral in
    η by the corrected trapezoid rule (the integral of the cubic Hermite
    interpolant, fourth order), interpolated in u = logit μ by cubic Hermite
    with slopes f / (du/dη); the quantiles by safeguarded Newton steps."""
    return _mu_summaries_many([(eta, h, f, rates)], q)[0]


def _mu_summaries_many(problems, q) -> np.ndarray:
    """:func:`_mu_summaries` of several sets of lines ``problems`` = [(eta, h,
    f, rates), …] (e.g. a grid and its coarser subgrids) solved together, one
    Newton iteration for all: (len(problems), len(q) + 1)."""
    q = np.asarray(q, float)
    P, Q = len(problems), q.size
    us, Fs, dFs, lens, owner, t0, bounds, means = [], [], [], [], [], [], [], []
    for p, (eta, h, f, (g, one_minus, slope)) in enumerate(problems):
        u = np.log(g) - np.log(one_minus)
        du = slope / (g * one_minus)
        d = np.empty_like(f)
        d[1:-1] = (f[2:] - f[:-2]) / (2 * h)
        d[0], d[-1] = (f[1] - f[0]) / h, (f[-1] - f[-2]) / h
        cell = np.maximum(h / 2 * (f[:-1] + f[1:]) + h * h / 12 * (d[:-1] - d[1:]), 0.0)
        F = np.concatenate([np.zeros((1, f.shape[1])), np.cumsum(cell, axis=0)])
        total = F[-1].sum()
        n, m = u.shape
        us.append(u.T.ravel())
        Fs.append((F / total).T.ravel())
        dFs.append((f / du / total).T.ravel())
        lens.append(np.full(m, n))
        owner.append(np.full(m, p))
        mass = f * h / (f * h).sum()
        mean_u = float((mass * u).sum())
        sd_u = float(np.sqrt(max((mass * u * u).sum() - mean_u ** 2, 1e-24)))
        bounds.append((u.min(), u.max()))
        t0.append(np.clip(mean_u + sd_u * special.ndtri(q), u.min(), u.max()))  # normal start
        means.append(float((f * g * h).sum() / (f * h).sum()))
    U, F, dF = np.concatenate(us), np.concatenate(Fs), np.concatenate(dFs)
    lens, owner = np.concatenate(lens), np.concatenate(owner)
    start = np.concatenate([[0], np.cumsum(lens)[:-1]])
    lines = lens.size
    lo_all = min(b[0] for b in bounds)
    span = max(b[1] for b in bounds) - lo_all + 1.0
    offsets = np.arange(lines) * span
    flat = U + np.repeat(offsets, lens)  # every line sorted, lines one after another
    last_F = F[start + lens - 1]
    member = np.zeros((lines, P))
    member[np.arange(lines), owner] = 1.0

    def cdf(t):
        """CDF and density of every problem at its points ``t`` (P, Q)."""
        tl = t[owner].T  # (Q, lines)
        idx = np.searchsorted(flat, tl + offsets[None, :], side="right") - start[None, :] - 1
        gi = start[None, :] + np.minimum(np.maximum(idx, 0), lens[None, :] - 2)
        u0 = U[gi]
        width = U[gi + 1] - u0
        th = np.minimum(np.maximum((tl - u0) / width, 0.0), 1.0)
        th2, th3 = th * th, th * th * th
        F0, F1 = F[gi], F[gi + 1]
        s0, s1 = width * dF[gi], width * dF[gi + 1]
        val = ((2 * th3 - 3 * th2 + 1) * F0 + (th3 - 2 * th2 + th) * s0
               + (3 * th2 - 2 * th3) * F1 + (th3 - th2) * s1)
        dens = ((6 * th2 - 6 * th) * F0 + (3 * th2 - 4 * th + 1) * s0
                + (6 * th - 6 * th2) * F1 + (3 * th2 - 2 * th) * s1) / width
        inside = (idx >= 0) & (idx < lens[None, :] - 1)
        val = np.where(idx < 0, 0.0, np.where(idx >= lens[None, :] - 1, last_F[None, :], val))
        return (val @ member).T, (np.where(inside, dens, 0.0) @ member).T

    lo = np.array([b[0] for b in bounds])[:, None] + np.zeros((1, Q))
    hi = np.array([b[1] for b in bounds])[:, None] + np.zeros((1, Q))
    t = np.array(t0).reshape(P, Q)
    for _ in range(100):
        val, dens = cdf(t)
        if np.all(np.abs(val - q) < 1e-13):
            break
        below = val < q
        lo, hi = np.where(below, t, lo), np.where(below, hi, t)
        with np.errstate(divide="ignore", invalid="ignore"):
            new = t - (val - q) / dens
        new = np.where((new >= lo) & (new <= hi), new, (lo + hi) / 2)
        if np.all(np.abs(new - t) < 1e-12):
            t = new
            break
        t = new
    return np.concatenate([special.expit(t), np.array(means)[:, None]], axis=1)


class _Grid:
    """The fine grid: lines (τ_j, κ_l) of uniform η nodes, their densities.

    With a :class:`_SlabCache` the lines already computed by an earlier pass
    of the same fit are reused; with ``moments`` W's conditional cumulants
    are integrated with the density (``node_cumulants``, every node)."""

    def __init__(self, data, prior, lo, hi, tau, lk, n, cache=None, moments=False):
        self.tau, self.lk, self.lo, self.hi = tau, lk, lo, hi
        self.h = (hi - lo) / (n - 1)  # (len(tau), len(lk))
        self.eta = lo[None] + self.h[None] * np.arange(n)[:, None, None]
        self.node_cumulants = None
        if cache is None and not moments:
            self.logp = _log_density(data, self.eta, tau, lk, prior)
            self._rates = None
        else:
            cache = _SlabCache() if cache is None else cache
            keys = [("line", float(t), lk.tobytes(), lo[j].tobytes(), hi[j].tobytes(), n)
                    for j, t in enumerate(tau)]

            def compute(js):
                eta = self.eta[:, js]
                if moments:
                    E = eta.reshape(-1, lk.size)
                    log_i, raw, ref = _integrals(data, E, np.repeat(tau[js][None], n, 0).ravel(), lk,
                                                 moments=True)
                    lp = _sum_log_density(data, log_i, eta, tau[js], lk, prior)
                    cum = _w_cumulants(data, raw, ref, n, js.size)
                else:
                    lp, cum = _log_density(data, eta, tau[js], lk, prior), None
                rates = _rates(eta, tau[js])
                return [(lp[:, i], None if cum is None else [c[:, i] for c in cum], [r[:, i] for r in rates])
                        for i in range(js.size)]

            slabs = cache.get(keys, compute, need=(lambda v: v[1] is not None) if moments else None)
            self.logp = np.stack([s[0] for s in slabs], axis=1)
            if moments:
                self.node_cumulants = [np.stack([s[1][r] for s in slabs], axis=1) for r in range(4)]
            self._rates = tuple(np.stack([s[2][r] for s in slabs], axis=1) for r in range(3))
        dens = np.exp(self.logp - self.logp.max())
        self.line_w = _trapezoid(tau.size)[:, None] * _trapezoid(lk.size)[None, :]
        mass = dens * (self.h * self.line_w)[None] * _trapezoid(n)[:, None, None]
        self.total = mass.sum()
        self.weights = mass / self.total
        self.density = dens * self.line_w[None] / self.total  # per unit η, line weights included

    @property
    def rates(self):
        if self._rates is None:
            self._rates = _rates(self.eta, self.tau)
        return self._rates

    def mu(self, q, every=(1, 1, 1)) -> np.ndarray:
        """μ's quantiles and mean, from every ``every``-th node on each axis."""
        return self.mu_many(q, [every])[0]

    def _lines(self, every):
        a, b, c = every
        sel = (slice(None, None, a), slice(None, None, b), slice(None, None, c))
        f = self.density[sel]
        # coarser τ, κ_q grids: their own trapezoid weights
        f = f * (_trapezoid(f.shape[1])[:, None] * _trapezoid(f.shape[2])[None, :]
                 / self.line_w[sel[1:]])[None]
        h = self.h[sel[1:]] * a
        n = f.shape[0]
        rates = tuple(r[sel].reshape(n, -1) for r in self.rates)
        return self.eta[sel].reshape(n, -1), h.ravel()[None, :], f.reshape(n, -1), rates

    def mu_many(self, q, everies) -> np.ndarray:
        """:meth:`mu` of several subgrids ``everies``, solved together: (len(everies), len(q) + 1)."""
        return _mu_summaries_many([self._lines(e) for e in everies], q)

    def refine(self, q) -> np.ndarray:
        """Factors by which each axis's node count must grow: the η step's
        error is estimated as |S(h) − S(2h)| / 15 (fourth order) for μ's
        quantiles and mean; τ and log κ_q (trapezoid sums of smooth functions)
        are refined when dropping every other node moves them by more than
        ``HALF_TOLERANCE``."""
        everies = [(1, 1, 1), (2, 1, 1)] + ([(1, 2, 1)] if self.tau.size >= 5 else []) \
            + ([(1, 1, 2)] if self.lk.size >= 5 else [])
        got = dict(zip(everies, self.mu_many(q, everies)))
        full = got[(1, 1, 1)]
        factor = np.ones(3, int)
        if np.abs(full - got[(2, 1, 1)]).max() / 15 > TOLERANCE:
            factor[0] = 2
        if (1, 2, 1) in got and np.abs(full - got[(1, 2, 1)]).max() > HALF_TOLERANCE:
            factor[1] = 2
        if (1, 1, 2) in got and np.abs(full - got[(1, 1, 2)]).max() > HALF_TOLERANCE:
            factor[2] = 2
        return factor

    def open_lines(self):
        """Lines whose first or last η node holds more than 1e-7 of the line's
        largest density (and more than 1e-9 of the grid's): (low side, high
        side), each (len(tau), len(lk))."""
        floor = np.maximum(self.logp.max(axis=0) + np.log(1e-7), self.logp.max() + np.log(1e-9))
        return self.logp[0] > floor, self.logp[-1] > floor

    def edge(self) -> np.ndarray:
        """Whether the outermost τ or log κ_q plane (low, high) holds more than
        1e-7 of the largest plane's mass: (2 axes × 2 sides)."""
        out = np.zeros((2, 2), bool)
        for ax in (1, 2):
            plane = self.weights.sum(axis=tuple(a for a in range(3) if a != ax))
            out[ax - 1] = plane[0] > 1e-7 * plane.max(), plane[-1] > 1e-7 * plane.max()
        return out


def _grid_posterior(data: _Data, prior: ThreeLevelPrior, quantiles=(), coarse=COARSE, fine=FINE):
    """The fine grid and W's conditional cumulants on it.

    1. coarse pass over the prior box of (ν, τ, log κ_q), η = ν s(τ);
    2. zoom passes onto the region above ``MASS_THRESHOLD`` of the largest
       density until it spans ``RESOLVED_STEPS`` steps per axis;
    3. fine pass: τ and log κ_q uniform over that box; on every line
       (τ_j, κ_l) uniform η nodes over that line's own mass range
       (:func:`_line_ranges`) — the conditional spread of η shrinks as τ → 0;
       a box edge holding mass is widened, and axes are refined where
       :meth:`_Grid.refine` asks;
    4. W's conditional cumulants on the nodes with mass.
    """
    if data.lattice is None:  # one set of x lattices for every pass of this fit
        data = replace(data, lattice=_Lattice(data))
    bounds = prior.box()
    q = np.union1d(CHECK_QUANTILES, quantiles)
    axes = [np.linspace(*bounds[a], coarse[a]) for a in range(3)]
    for _ in range(12):
        logp = _box_density(data, axes, prior)
        box, resolved, _open = _mass_box(logp, axes, bounds)
        if resolved:
            break
        axes = [np.linspace(*box[a], ZOOM[a]) for a in range(3)]
    shape = np.array(fine, int)
    ranges = None
    cache = _SlabCache()
    moments = data.k.shape[0] <= MOMENT_PATTERNS
    for round_ in range(8):
        tau, lk = np.linspace(*box[1], shape[1]), np.linspace(*box[2], shape[2])
        if ranges is None:
            ranges = _line_ranges(data, prior, box[0], tau, lk, cache=cache)
        grid = _Grid(data, prior, *ranges, tau, lk, shape[0], cache=cache, moments=moments)
        if round_ == 7:
            break
        low, high = grid.open_lines()
        if low.any() or high.any():  # a line's mass reaches its end: widen it by half
            width = grid.hi - grid.lo
            ranges = (grid.lo - np.where(low, width / 2, 0.0), grid.hi + np.where(high, width / 2, 0.0))
            continue
        edge = grid.edge()
        widen = False
        for ax in (1, 2):
            width = box[ax, 1] - box[ax, 0]
            if edge[ax - 1, 0] and box[ax, 0] > bounds[ax, 0] + 1e-9:
                box[ax, 0], widen = max(bounds[ax, 0], box[ax, 0] - width / 2), True
            if edge[ax - 1, 1] and box[ax, 1] < bounds[ax, 1] - 1e-9:
                box[ax, 1], widen = min(bounds[ax, 1], box[ax, 1] + width / 2), True
        if widen:
            ranges = None
            continue
        new = np.minimum((shape - 1) * grid.refine(q) + 1, MAX_POINTS)
        if (new <= shape).all():
            break
        if (new[1:] > shape[1:]).any():
            ranges = None
        shape = new
    live = grid.weights > 1e-14 * grid.weights.max()
    if grid.node_cumulants is not None:  # integrated with the density: kept where a κ_q node has mass
        kept = live.any(axis=2)[:, :, None]
        grid.cumulants = [np.where(kept, c, np.nan) for c in grid.node_cumulants]
    else:
        grid.cumulants = _log_density(data, grid.eta, grid.tau, grid.lk, prior, moments=True, live=live)
    return grid


#: W's mixture is formed on a grid this many times finer per axis (η, τ, log κ_q), interpolated
W_REFINE = (2, 1, 1)


def _finer(values: np.ndarray, factor: int, axis: int, even: bool = False) -> np.ndarray:
    """Catmull–Rom (cubic) interpolation along ``axis`` onto a grid ``factor``
    times finer, the original nodes kept.  Ends: linear extrapolation, or, with
    ``even``, reflection at the first node (a function even about it, as of τ)."""
    if factor == 1 or values.shape[axis] < 2:
        return values
    v = np.moveaxis(values, axis, 0)
    n = v.shape[0]
    first = v[1:2] if even else 2 * v[:1] - v[1:2]
    pad = np.concatenate([first, v, 2 * v[-1:] - v[-2:-1]])
    t = (np.arange(factor) / factor).reshape((-1,) + (1,) * v.ndim)
    p0, p1, p2, p3 = (pad[i:i + n - 1][None] for i in range(4))
    out = 0.5 * (2 * p1 + (p2 - p0) * t + (2 * p0 - 5 * p1 + 4 * p2 - p3) * t * t
                 + (3 * p1 - p0 - 3 * p2 + p3) * t ** 3)  # (factor, n − 1, ...)
    out = np.moveaxis(out, 0, 1).reshape(((n - 1) * factor,) + v.shape[1:])
    return np.moveaxis(np.concatenate([out, v[-1:]]), 0, axis)


def w_mixture(weights, cumulants, tau, factor=None):
    """Masses and cumulants of the mixture that gives W's law.

    A node of the product trapezoid rule stands for its cell, and where W's
    conditional law is narrow (small τ: every φ_c → expit(η)) or moves fast
    between nodes, the nodes alone would make a comb of spikes.  So (1) the
    log node densities and the four cumulants are interpolated (cubic, in the
    grid's index coordinates) onto a grid ``factor`` times finer per axis —
    the mean as a logit, the variance as a log, the third and fourth cumulants
    standardized, so that none leaves its range — and (2) each node's law is
    convolved with the uniform laws of width ``|Δm|`` (m is W's conditional
    mean, Δm its change per node along each axis), adding Δm²/12 to the
    variance and −Δm⁴/120 to the fourth cumulant: the mixture's CDF then
    interpolates linearly between nodes.  On the τ = 0 plane (half a cell; m
    is even in τ) the τ width is ``|m(τ₁) − m(0)| / 4``."""
    factor = W_REFINE if factor is None else factor
    live = weights > 1e-14 * weights.max()
    trap = [_trapezoid(n) for n in weights.shape]
    dens = weights / (trap[0][:, None, None] * trap[1][None, :, None] * trap[2][None, None, :])
    with np.errstate(divide="ignore"):
        logw = np.log(np.where(live, dens, dens.max() * 1e-30))
    peak = np.unravel_index(np.argmax(weights), weights.shape)
    filled = [np.where(live, np.nan_to_num(c), c[peak]) for c in cumulants]
    m0 = np.clip(filled[0], 1e-12, 1 - 1e-12)
    v0 = np.maximum(filled[1], 1e-18)
    point = v0 <= 1e-16  # τ = 0: a point mass, no shape
    g1 = np.where(point, 0.0, np.clip(filled[2] / v0 ** 1.5, -20, 20))
    g2 = np.where(point, 0.0, np.clip(filled[3] / v0 ** 2, -2, 400))
    fields = [logw, special.logit(m0), np.log(v0), g1, g2]
    even = tau[0] == 0.0
    for ax in range(3):
        fields = [_finer(f, factor[ax], ax, even=even and ax == 1) for f in fields]
    logw, lm, lv, g1, g2 = fields
    m, v = special.expit(lm), np.exp(lv)
    k3, k4 = g1 * v ** 1.5, g2 * v * v
    trap = [_trapezoid(n) for n in logw.shape]
    w = np.exp(logw - logw.max()) * trap[0][:, None, None] * trap[1][None, :, None] * trap[2][None, None, :]
    width = np.abs(np.gradient(m, axis=0))
    v = v + width ** 2 / 12
    k4 = k4 - width ** 4 / 120
    return w / w.sum(), (m, v, k3, k4)


# ----------------------------------------------------------------- the posterior object
@dataclass(frozen=True)
class ThreeLevelPosterior:
    """Grid posterior of (η, τ, log κ_q) with W's conditional cumulants.

    The nodes are lines (τ_j, log κ_l) of uniform η nodes ``eta[:, j, l]``
    (step ``h[j, l]``); ``weights`` are the normalized node masses (trapezoid
    weights included); ``cumulants`` the first four cumulants of
    W = Σ_c m_c φ_c / Σ_c m_c given each node and the data (NaN where the
    node has no mass).
    """

    eta: np.ndarray  #: (nodes per line, len(tau), len(log_kappa))
    h: np.ndarray
    tau: np.ndarray
    log_kappa: np.ndarray
    weights: np.ndarray
    cumulants: tuple
    n_clusters: int
    n_questions: int
    n_answers: int
    _grid: object = None

    def _mu(self, q) -> np.ndarray:
        return self._grid.mu(np.asarray(q, float))

    @property
    def mean(self) -> float:
        """Posterior mean of μ."""
        return float((self.weights * self._grid.rates[0]).sum())

    @property
    def sd(self) -> float:
        g = self._grid.rates[0]
        return float(np.sqrt(max((self.weights * g * g).sum() - self.mean ** 2, 0.0)))

    def quantiles(self, q) -> np.ndarray:
        """Quantiles of μ, the mean accuracy of a new cluster."""
        return self._mu(np.atleast_1d(q))[:-1]

    def interval(self, level: float = 0.95) -> np.ndarray:
        """Equal-tailed interval of μ."""
        return self.quantiles([(1 - level) / 2, (1 + level) / 2])

    def weighted_mean_moments(self) -> tuple[float, float]:
        """Posterior mean and SD of W = Σ_c m_c φ_c / Σ_c m_c."""
        w = self.weights.ravel()
        m, v = (np.nan_to_num(c.ravel()) for c in self.cumulants[:2])  # NaN: no mass there
        mean = float(w @ m)
        return mean, float(np.sqrt(max(w @ (v + m * m) - mean * mean, 0.0)))

    def weighted_mean_quantiles(self, q) -> np.ndarray:
        """Quantiles of W = Σ_c m_c φ_c / Σ_c m_c (the score's estimand): the
        grid mixture of four-cumulant laws (``hierarchical._mixture_quantiles``)."""
        w, cum = w_mixture(self.weights, self.cumulants, self.tau)
        pi = w.ravel()
        keep = (pi > 1e-13 * pi.max()) & np.isfinite(cum[1].ravel())
        cum = [c.ravel()[keep] for c in cum]
        return _h._mixture_quantiles(pi[keep] / pi[keep].sum(), cum, np.atleast_1d(q))

    def weighted_mean_interval(self, level: float = 0.95) -> np.ndarray:
        """Equal-tailed interval of W = Σ_c m_c φ_c / Σ_c m_c."""
        return self.weighted_mean_quantiles([(1 - level) / 2, (1 + level) / 2])

    def sample(self, draws: int = 4000, seed: int = 0) -> dict:
        """Draws of (η, τ, κ_q) — nodes by mass, jittered within their cell — and μ."""
        rng = np.random.default_rng(seed)
        flat = rng.choice(self.weights.size, size=draws, p=self.weights.ravel())
        i, j, l = np.unravel_index(flat, self.weights.shape)
        h = self.h[j, l]
        eta = self.eta[i, j, l] + rng.uniform(-0.5, 0.5, draws) * h
        dt = self.tau[1] - self.tau[0] if self.tau.size > 1 else 0.0
        dk = self.log_kappa[1] - self.log_kappa[0] if self.log_kappa.size > 1 else 0.0
        tau = np.abs(self.tau[j] + rng.uniform(-0.5, 0.5, draws) * dt)
        lk = self.log_kappa[l] + rng.uniform(-0.5, 0.5, draws) * dk
        return {"eta": eta, "tau": tau, "kappa_question": np.exp(lk), "mu": mean_rate(eta, tau)}

    def to_inference_data(self, draws: int = 4000, seed: int = 0):
        from bayeserr.models import compat
        d = self.sample(draws, seed)
        return compat.from_dict({k: v[None] for k, v in d.items()},
                                attrs={"model": "three_level_beta_binomial", "method": "exact grid"})


def one_thread():
    """BLAS limited to one thread: the products here are many and small, and
    OpenBLAS's threads cost more than they give (several-fold on a busy machine)."""
    try:
        from threadpoolctl import threadpool_limits  # installed with PyMC
    except ImportError:  # pragma: no cover
        import contextlib
        return contextlib.nullcontext()
    return threadpool_limits(1, user_api="blas")


def fit_exact(k, n, cluster_codes, prior: ThreeLevelPrior = ThreeLevelPrior(), *, weights=None,
              quantiles=(), coarse=COARSE, fine=FINE) -> ThreeLevelPosterior:
    """Posterior of the three-level model by deterministic quadrature (no sampler).

    ``k``, ``n``: right answers and answers per question; ``cluster_codes``:
    each question's cluster (any labels).  Questions with ``n = 0`` are
    ignored.  ``weights`` (one per cluster with answers, in sorted label
    order; default: its answered questions) define W.  ``quantiles`` are
    added to the ones the grid refinement checks.
    """
    data = _prepare(k, n, cluster_codes, weights)
    with one_thread():
        return _fit_prepared(data, prior, quantiles, coarse, fine)


def _fit_prepared(data: _Data, prior, quantiles, coarse, fine) -> ThreeLevelPosterior:
    grid = _grid_posterior(data, prior, quantiles, coarse, fine)
    grid.rates  # noqa: B018 - computed here (inside the caller's thread limit)
    return ThreeLevelPosterior(grid.eta, grid.h, grid.tau, grid.lk, grid.weights, tuple(grid.cumulants),
                               data.n_clusters, data.n_questions, data.n_answers, grid)


def fit_many(rows, prior: ThreeLevelPrior = ThreeLevelPrior(), *, quantiles=(),
             workers: int | None = None) -> list[ThreeLevelPosterior]:
    """:func:`fit_exact` of several data sets ``rows`` = [(k, n, cluster_codes), …],
    in that order, on ``workers`` threads (default: the usable cores).  The
    grid's work is NumPy/SciPy array code that releases the GIL, so the data
    sets fit side by side; BLAS keeps one thread each."""
    import os
    from concurrent.futures import ThreadPoolExecutor
    prepared = [_prepare(k, n, codes) for k, n, codes in rows]
    workers = workers or max(1, min(len(prepared), len(os.sched_getaffinity(0))))
    with one_thread():  # set once for all threads (threadpoolctl's limit is process-wide)
        if workers == 1:
            return [_fit_prepared(d, prior, quantiles, COARSE, FINE) for d in prepared]
        with ThreadPoolExecutor(workers) as pool:
            return list(pool.map(lambda d: _fit_prepared(d, prior, quantiles, COARSE, FINE), prepared))


def intervals(rows, level: float = 0.95, prior: ThreeLevelPrior = ThreeLevelPrior()):
    """``(W intervals, μ intervals)`` — two (len(rows) × 2) arrays — for many
    data sets ``rows`` = [(k, n, cluster_codes), …]."""
    q = [(1 - level) / 2, (1 + level) / 2]
    posts = fit_many(rows, prior, quantiles=q)
    return (np.array([p.weighted_mean_interval(level) for p in posts]).reshape(-1, 2),
            np.array([p.interval(level) for p in posts]).reshape(-1, 2))


# ----------------------------------------------------------------- NUTS
def build_pymc_model(k, n, cluster_codes, prior: ThreeLevelPrior = ThreeLevelPrior()):
    """The same model in PyMC, non-centred (``logit φ_c = η + τ z_c``)."""
    return build_pymc_models([(k, n, cluster_codes)], prior)


def build_pymc_models(data, prior: ThreeLevelPrior = ThreeLevelPrior()):
    """Independent three-level models for several data sets ``[(k, n, codes), …]``
    in one PyMC model with a ``model`` dimension (one graph, compiled once):
    every data set's clusters and questions are stacked, each pointing at its
    model's η, τ and κ_q."""
    from bayeserr.models import compat
    pm = compat.import_pymc()
    codes = [np.asarray(c, int) for _, _, c in data]
    n_clusters = [int(c.max()) + 1 for c in codes]
    offset = np.concatenate([[0], np.cumsum(n_clusters)[:-1]])
    cluster_of = np.concatenate([c + o for c, o in zip(codes, offset)])   # stacked cluster per question
    owner = np.repeat(np.arange(len(data)), n_clusters)                  # model of each stacked cluster
    k = np.concatenate([np.asarray(kk, float) for kk, _, _ in data]).astype(int)
    n = np.concatenate([np.asarray(nn, float) for _, nn, _ in data]).astype(int)
    coords = {"model": list(range(len(data))), "cluster_unit": list(range(int(sum(n_clusters)))),
              "question_unit": list(range(len(k)))}
    with pm.Model(coords=coords) as model:
        eta = pm.Normal("eta", prior.eta_mean, prior.eta_sd, dims="model")
        tau = pm.HalfNormal("tau", prior.tau_sd, dims="model")
        z = pm.Normal("z", 0.0, 1.0, dims="cluster_unit")
        log_kq = pm.Normal("log_kappa_question", prior.log_kappa_mean, prior.log_kappa_sd, dims="model")
        pm.Deterministic("kappa_question", pm.math.exp(log_kq), dims="model")
        logit_phi = eta[owner] + tau[owner] * z
        pm.Deterministic("phi", pm.math.invlogit(logit_phi), dims="cluster_unit")
        nodes = eta[:, None] + tau[:, None] * Z_NODES[None, :]
        pm.Deterministic("mu", pm.math.sum(pm.math.invlogit(nodes) * Z_WEIGHTS[None, :], axis=1), dims="model")
        # expit(−x) rather than 1 − expit(x): β stays positive where φ rounds to 1; |x| ≤ 30
        # (φ within 1e-13 of 0 or 1, as in the grid path) keeps α, β from underflowing to 0
        # on the sampler's far excursions (a NaN log density)
        x = pm.math.clip(logit_phi[cluster_of], -30.0, 30.0)
        q_owner = owner[cluster_of]
        # the likelihood's κ_q is capped at e^20 (where the Beta–Binomial is the binomial and
        # PyMC's betaln differences still hold their digits); kappa_question above is not
        kq_lik = compat.capped_kappa(log_kq)[q_owner]
        pm.BetaBinomial("k", n=n, alpha=pm.math.invlogit(x) * kq_lik,
                        beta=pm.math.invlogit(-x) * kq_lik, observed=k, dims="question_unit")
    model.cluster_slices = [slice(int(o), int(o) + c) for o, c in zip(offset, n_clusters)]
    return model


def fit_mcmc(k, n, cluster_codes, prior: ThreeLevelPrior = ThreeLevelPrior(), *,
             draws: int = 1000, tune: int = 1000, chains: int = 2, seed: int = 0,
             target_accept: float = 0.95, progressbar: bool = False, cores: int | None = None):
    """NUTS fit; returns the posterior of ``mu``, ``phi``, ``eta``, ``tau``,
    ``kappa_question`` … (``arviz.InferenceData``, or ``xarray.DataTree`` under
    ArviZ 1: :mod:`~bayeserr.models.compat`; ``attrs["target_accept"]``)."""
    # size: the sampler's settings, as fit_grid takes them
    return fit_mcmc_many([(k, n, cluster_codes)], prior, draws=draws, tune=tune, chains=chains,
                         seed=seed, target_accept=target_accept, progressbar=progressbar, cores=cores)[0]


def fit_mcmc_many(data, prior: ThreeLevelPrior = ThreeLevelPrior(), *, draws: int = 1000,
                  tune: int = 1000, chains: int = 2, seed: int = 0, target_accept: float = 0.95,
                  progressbar: bool = False, cores: int | None = None) -> list:
    """NUTS fits of several data sets ``[(k, n, codes), …]`` from one sampler
    run (:func:`build_pymc_models`: one compilation); one posterior
    per data set as :func:`fit_mcmc` returns it (sampler statistics are the
    joint run's)."""
    import warnings

    from bayeserr.models import compat, nuts
    model = build_pymc_models(data, prior)
    with model, warnings.catch_warnings():
        # a leapfrog step far out during tuning can reach a NaN energy; NUTS rejects it
        # (and counts it as divergent after tuning), so PyMC's RuntimeWarning adds nothing
        warnings.filterwarnings("ignore", "invalid value encountered in subtract", RuntimeWarning)
        joint = nuts.sample(draws=draws, tune=tune, chains=chains, random_seed=seed,
                          progressbar=progressbar, compute_convergence_checks=False, cores=cores,
                          target_accept=target_accept)
    out, joint_post, stats = [], compat.posterior_dataset(joint), compat.group(joint, "sample_stats")
    for m, clusters in enumerate(model.cluster_slices):
        post = joint_post[["eta", "tau", "log_kappa_question", "kappa_question", "mu"]].isel(model=m, drop=True)
        for name in ("z", "phi"):
            post[name] = (("chain", "draw", "cluster"), joint_post[name].isel(cluster_unit=clusters).values)
        out.append(compat.from_datasets(post, stats, attrs={"target_accept": float(target_accept)}))
    return out
