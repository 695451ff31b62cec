"""One-sided score test of a paired difference of two proportions against a margin
(``docs/methods.md`` §3.11, equations (G1)–(G5)): the release gate's test for 0/1
answers without clusters.

n questions, each answered once by A and once by B (0/1).  ``b`` questions only A got
right, ``c`` only B; Δ = A − B = p₁₀ − p₀₁ (the chance that only A is right, minus the
chance that only B is).  The test of ``H0: Δ ≤ δ₀`` against ``H1: Δ > δ₀``:

(G1) the restricted MLE under Δ = δ₀ (Nam 1997, Biometrics 53:1422; Tango 1998, Stat
     Med 17:891, whose ``p̃₂₁`` it is): the multinomial log-likelihood
     ``b log(q + δ₀) + c log q + (n − b − c) log(1 − 2q − δ₀)`` is largest at the
     positive root of ``A q² + B q + C = 0``::

         A = 2n,  B = −b − c + (2n − b + c) δ₀,  C = −c δ₀ (1 − δ₀)
         p̃₀₁ = (−B + √(B² − 4AC)) / (2A),   p̃₁₀ = p̃₀₁ + δ₀

(G2) Nam's and Tango's score statistic::

         Z = (b − c − n δ₀) / √(n (2 p̃₀₁ + δ₀ (1 − δ₀)))

     (at δ₀ = 0 McNemar's score statistic ``(b − c)/√(b + c)``);

(G3) with a continuity correction of ½ (half the unit step of ``b − c − n δ₀``)::

         Z_c = (T − ½ sign T) / σ̃,  T = b − c − n δ₀,  σ̃² = n (p̃₁₀ + p̃₀₁ − δ₀²)
         (Z_c = 0 when |T| ≤ ½)

(G4) and the skewness of ``T`` at the restricted MLE, γ = μ̃₃ / (√n σ̃₁³) with the
     per-question third central moment
     ``μ̃₃ = p̃₁₀ (1 − δ₀)³ − p̃₀₁ (1 + δ₀)³ − (1 − p̃₁₀ − p̃₀₁) δ₀³`` and
     ``σ̃₁² = σ̃²/n``, removed by the Cornish–Fisher correction of score statistics for
     binomial parameters (Gart & Nam 1988, Biometrics 44:323) in the form of Laud's
     skewness-corrected score (Laud 2017, Pharm Stat 16:334): the statistic S solves
     ``Z_c = S + (γ/6)(S² − 1)``, i.e.::

         S = 2 (Z_c + g) / (1 + √(1 + 4 g (Z_c + g))),   g = γ/6   (S = 0 where Z_c = 0)

(G5) p = 1 − Φ(S); the one-sided bounds at level L invert the test: ``lower`` is
     where S(δ₀) = z_L and ``upper`` where S(δ₀) = −z_L (S decreases in δ₀; found by
     bisection on [−1, 1]), so that ``p < 1 − L ⇔ lower > δ₀``.

Why not the paired z: with 0/1 answers the one-sided normal reference ignores the
skewness of the difference and the discreteness of the counts, and the paired z test
passed 5.2%–5.5% at the margin at n = 100 in the lab (``docs/methods.md`` §3.11).  The
corrected score test (G5) never exceeded its level in an exact enumeration of every
table for n = 2–500 (same section), where the uncorrected statistic
(:func:`score_statistic`, Nam's and Tango's) reached 1.8 α.
Everything here is vectorized over rows (``b``, ``c``, ``n``, ``null`` broadcast).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

#: the continuity correction on ``b − c − n δ₀`` (G3): half its unit step
CONTINUITY = 0.5
#: bisection steps for the bounds: [−1, 1] halved to below the spacing of floats
BISECTION_STEPS = 64


def _arrays(b, c, n, null):
    b, c, n, null = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (b, c, n, null)))
    return b, c, n, null


def restricted_mle(b, c, n, null):
    """(G1): the MLE of ``(p₁₀, p₀₁)`` (only A right, only B right) under ``Δ = null``.

    The numerically stable root of the quadratic (``−2C/(B + √D)`` where B > 0), kept
    inside the feasible set ``max(0, −δ₀) ≤ p₀₁ ≤ (1 − δ₀)/2``."""
    b, c, n, d0 = _arrays(b, c, n, null)
    A = 2.0 * n
    B = -b - c + (2.0 * n - b + c) * d0
    C = -c * d0 * (1.0 - d0)
    root = np.sqrt(np.maximum(B * B - 4.0 * A * C, 0.0))
    with np.errstate(invalid="ignore", divide="ignore"):
        q = np.where(B > 0, -2.0 * C / np.where(B > 0, B + root, 1.0), (root - B) / (2.0 * A))
    q = np.clip(q, np.maximum(0.0, -d0), (1.0 - d0) / 2.0)
    return q + d0, q


def score_statistic(b, c, n, null):
    """(G2): Nam's and Tango's score statistic ``(b − c − n δ₀)/√(n (2 p̃₀₁ + δ₀ (1 − δ₀)))``,
    without corrections (0 where numerator and variance are both 0: no discordant
    question at δ₀ = 0)."""
    b, c, n, d0 = _arrays(b, c, n, null)
    _, q = restricted_mle(b, c, n, d0)
    num = b - c - n * d0
    var = n * np.maximum(2.0 * q + d0 * (1.0 - d0), 0.0)
    return _ratio(num, var)


def _ratio(num, var):
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(var > 0, num / np.sqrt(np.where(var > 0, var, 1.0)),
                        np.where(num == 0, 0.0, np.sign(num) * np.inf))


def skewness(b, c, n, null):
    """(G4): the skewness γ of ``b − c`` at the restricted MLE (0 where its variance is 0)."""
    b, c, n, d0 = _arrays(b, c, n, null)
    p10, p01 = restricted_mle(b, c, n, d0)
    var1 = np.maximum(p10 + p01 - d0 * d0, 0.0)
    mu3 = p10 * (1.0 - d0) ** 3 - p01 * (1.0 + d0) ** 3 - (1.0 - p10 - p01) * d0 ** 3
    with np.errstate(invalid="ignore", divide="ignore"):
        g = np.where(var1 > 0, mu3 / (np.sqrt(n) * np.where(var1 > 0, var1, 1.0) ** 1.5), 0.0)
    return g


def corrected_statistic(b, c, n, null, *, continuity: float = CONTINUITY, skew: bool = True):
    """(G3)–(G4): the score statistic with the continuity correction ``continuity`` (½ by
    default, 0 for none) and, with ``skew``, the skewness correction; its upper normal tail
    is the one-sided p-value (G5)."""
    b, c, n, d0 = _arrays(b, c, n, null)
    p10, p01 = restricted_mle(b, c, n, d0)
    T = b - c - n * d0
    Tc = np.where(np.abs(T) <= continuity, 0.0, T - continuity * np.sign(T))
    zc = _ratio(Tc, n * np.maximum(p10 + p01 - d0 * d0, 0.0))
    if not skew:
        return zc
    g = skewness(b, c, n, d0) / 6.0
    with np.errstate(invalid="ignore", over="ignore"):
        disc = np.maximum(1.0 + 4.0 * g * (zc + g), 0.0)
        s = 2.0 * (zc + g) / (1.0 + np.sqrt(disc))
    return np.where(np.isfinite(zc) & (Tc != 0), s, zc)


@dataclass(frozen=True)
class ScoreTest:
    """The one-sided test (G5) of ``H1: Δ > null`` for rows of arrays."""

    statistic: np.ndarray  #: S, the corrected score statistic at ``null``
    p_value: np.ndarray  #: 1 − Φ(S)
    lower: np.ndarray  #: one-sided lower bound at the level: S(lower) = z_L
    upper: np.ndarray  #: one-sided upper bound at the level: S(upper) = −z_L


def bound(b, c, n, crit, *, continuity: float = CONTINUITY, skew: bool = True):
    """The δ₀ in [−1, 1] where the corrected statistic crosses ``crit`` (S decreases in δ₀:
    above ``crit`` left of it), by bisection on every row at once."""
    b, c, n, crit = _arrays(b, c, n, crit)
    lo, hi = np.full(b.shape, -1.0), np.full(b.shape, 1.0)
    for _ in range(BISECTION_STEPS):
        mid = 0.5 * (lo + hi)
        above = corrected_statistic(b, c, n, mid, continuity=continuity, skew=skew) > crit
        lo, hi = np.where(above, mid, lo), np.where(above, hi, mid)
    return hi


def score_test(b, c, n, null, level: float, *, continuity: float = CONTINUITY,
               skew: bool = True) -> ScoreTest:
    """(G5): the one-sided p-value of ``H0: Δ ≤ null`` from ``b`` (only A right), ``c``
    (only B right) of ``n`` questions, and the one-sided bounds at ``level`` (> ½)."""
    b, c, n, d0 = _arrays(b, c, n, null)
    s = corrected_statistic(b, c, n, d0, continuity=continuity, skew=skew)
    z = float(-special.ndtri(1.0 - level))
    lower = bound(b, c, n, z, continuity=continuity, skew=skew)
    upper = bound(b, c, n, -z, continuity=continuity, skew=skew)
    return ScoreTest(s, special.ndtr(-s), lower, upper)


def counts_from_moments(diff, se, n, *, tol: float = 1e-6):
    """The discordant counts ``(b, c)`` behind a mean ``diff`` and paired SE ``se`` (M7:
    sample sd with ddof 1 over √n) of ``n`` differences, if they are those of 0/1 answers:
    then ``b − c = n Δ̂`` and ``b + c = Σ d² = n (n − 1) SE² + n Δ̂²``.  Rows where these are
    not whole counts in [0, n] (within ``tol``) are NaN.  The numbers cannot tell 0/1
    answers from fractional ones that happen to give whole counts: give the counts
    themselves where the answers are known."""
    diff, se, n = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (diff, se, n)))
    with np.errstate(invalid="ignore", over="ignore"):
        s1 = n * diff
        s2 = n * (n - 1.0) * se * se + n * diff * diff
        b, c = (s2 + s1) / 2.0, (s2 - s1) / 2.0
        rb, rc = np.round(b), np.round(c)
        ok = ((np.abs(b - rb) <= tol) & (np.abs(c - rc) <= tol) & (rb >= 0) & (rc >= 0)
              & (rb + rc <= n) & (n >= 2) & (n == np.round(n)))
    return np.where(ok, rb, np.nan), np.where(ok, rc, np.nan)
