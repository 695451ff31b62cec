"""Judge-scored evals: prediction-powered inference for the human-scored mean
(``docs/methods.md`` §3.14).

An LLM judge scores every question (``f_i``); people score a uniformly random
subset (``Y_i``).  The estimand is the mean *human* score of the population
the questions sample from.  Every function here takes the two columns side
by side, one entry per question: ``human`` with NaN where the question was not
labelled, ``judge`` finite everywhere.

Notation: the labelled set L (``n`` questions: ``Y_i``, ``f_i``) and the
unlabelled set U (the other ``N`` questions: ``f̃_j``).  The unlabelled set is
the *rest* of the questions, not all of them: PPI's theory needs the two sets
to be independent samples, and with all questions in U the estimator is the
same one with λ rescaled by ``N/(N + n)`` (so nothing is lost).  Sample
variances and covariances have ddof 1.

* (J1) PPI++ for a mean (Angelopoulos, Duchi & Zrnic 2023, §2; λ = 1 is the
  PPI estimator of Angelopoulos et al., Science 2023; λ = 0 is the classical
  mean)::

      θ̂_λ = λ·mean_U(f̃) + mean_L(Y − λ f)

* (J2) the power-tuned λ (PPI++ §2, its mean-estimation example; what
  ``ppi_py.ppi_mean_ci`` computes), clipped to [0, 1] by default as there::

      λ̂ = Ĉov_L(Y, f) / ((1 + n/N) · V̂ar_{L∪U}(f))

  ``lam_fit="plugin"`` applies this one λ̂ to the labels it was fitted on.
* (J2x) the default, ``lam_fit="crossfit"``: leave-one-out cross-fitting
  (cross-prediction-powered inference, Zrnic & Candès, PNAS 2024, with
  K = n folds of one labelled question each; §3.14.1).  Labelled question i
  gets the λ of (J2) fitted without it, ``λ_{−i} = Ĉov_{L∖i}(Y, f) /
  ((1 + n/N) V̂ar_{L∪U}(f))`` (clipped), in closed form
  ``Ĉov_{L∖i} = (Σ_L e g − n e_i g_i/(n − 1))/(n − 2)``, and::

      θ̂ = λ̄ mean_U(f̃) + mean_L(Y_i − λ_{−i} f_i),   λ̄ = mean_L(λ_{−i})

  (= mean_L[Y_i + λ_{−i}(mean_U(f̃) − f_i)]).  λ_{−i} does not depend on
  (Y_i, f_i) except through the pooled variance of f, so θ̂ is unbiased up to
  that O(1/(n + N)) dependence; the plug-in θ̂ has an O(1/n) bias.  No folds
  to draw: the result does not depend on the order of the questions and uses
  no random numbers.  The variances below take ``λ = λ̄`` on U and, on L,
  the terms θ̂ averages, ``ψ_i = Y_i + λ_{−i}(mean_U(f̃) − f_i)`` (centred at
  mean_U(f̃) so that they do not depend on the judge's location; for a fixed
  λ or the plug-in, ``λ_{−i} = λ`` and ``s²_L(ψ) = s²_L(Y − λf)``).
* (J3) ``V̂ = V_U + V_L``, ``V_U = λ̄² s²_U(f̃)/N``, ``V_L = s²_L(ψ)/n``;
  interval ``θ̂ ± t_ν √V̂`` on the Welch–Satterthwaite df
  ``ν = V̂² / (V_U²/(N − 1) + V_L²/(n − 1))`` (``reference="t"``, the default;
  it is (J7) with every question its own cluster), or ``θ̂ ± z √V̂``
  (``reference="z"``: the paper and ppi-python).
* (J4) beside it: the classical interval ``mean_L(Y) ± t_{n−1} s_L(Y)/√n``;
  the judge-only interval ``mean_{L∪U}(f) ± t s(f)/√(n + N)``, which
  estimates the mean *judge* score and does not cover the human mean when the
  judge is biased; the bias ``mean_L(f − Y) ± t_{n−1} s_L(f − Y)/√n``; and the
  effective number of labels ``n_eff = n · V̂_classical / V̂_ppi`` (the labels
  the classical interval would need to be as narrow).  (z throughout with
  ``reference="z"``.)
* (J5) a paired difference A − B: (J1)–(J4) applied to ``d_Y = Y_A − Y_B`` and
  ``d_f = f_A − f_B``; labelled where both models' answers are labelled.
* (J6) clustered (questions in clusters c; labelled and unlabelled questions
  share the clusters).  θ̂_λ − θ = Σ_c T_c is a sum of independent cluster
  totals; with residuals ``u_j = f̃_j − mean_U(f̃)``, ``e_i = Y_i − mean_L(Y)``,
  ``g_i = f_i − mean_L(f)``, ``ρ_i = ψ_i − mean_L(ψ)``, their cluster sums
  ``S^U_c, S^Y_c, S^F_c, S^R_c``, the sizes ``m_c`` (unlabelled) and ``n_c``
  (labelled), and the CR2 factors ``q^U_c = 1/(1 − m_c/N)``,
  ``q^L_c = 1/(1 − n_c/n)``::

      a_c = √q^L_c S^Y_c / n,   b_c = √q^U_c S^U_c / N − √q^L_c S^F_c / n
      V̂_CR2(λ) = Σ_c (a_c + λ b_c)²

  for one λ on every question (``S^R_c = S^Y_c − λ S^F_c``); with the
  cross-fitted λ_{−i} of (J2x), ``V̂_CR2 = Σ_c (√q^L_c S^R_c/n + λ̄ √q^U_c S^U_c/N)²``
  (the same formula; the code computes this form for both).

  (the CR2 variance of the contrast ``(λ, 1)·β`` in the stacked regression of
  ``f̃`` (U rows) and ``Y − λf`` (L rows) on the two set indicators).  λ = 0
  gives the CR2 variance of the labelled mean (M4b).  λ is still (J2) or
  (J2x), from question-level moments, left out one *question* at a time (not one
  cluster: with SWE-bench's 12 clusters leaving out the 46% cluster moves λ too
  far, and that interval covered 93.2%; ``docs/methods.md`` §3.14.3): the λ
  that minimises V̂_CR2(λ) itself
  (``−Σ a_c b_c / Σ b_c²``) is fitted to the same ~C cluster totals the
  variance is estimated from and makes V̂ too small (simulated coverage
  0.938 instead of 0.946–0.948 with 40 clusters; ``docs/methods.md`` §3.14).
* (J7) its degrees of freedom: the Satterthwaite approximation (Bell &
  McCaffrey 2002; Pustejovsky & Tipton 2018) under the working model of
  independent errors with variance ``σ²_U = s²_U(f̃)`` on U and
  ``σ²_L = s²_L(ψ)`` on L (under which V̂_CR2 is exactly unbiased)::

      M = Σ_t σ²_t (D_t − r_t r_tᵀ),  D_t = diag(w_t² q_ct n_ct / n_t²),
      r_tc = w_t √q_ct n_ct / n_t^{3/2},  (w_U, w_L) = (λ̄, 1),  (n_U, n_L) = (N, n)
      df = (tr M)² / ‖M‖_F²

  With λ = 0 it is the Bell–McCaffrey df of the labelled mean (M4b).
* (J13) planning: labels for a target half-width (:func:`labels_for_half_width`).

The Rogan–Gladen correction for 0/1 judges ((J8), (J9)) is
:func:`rogan_gladen`; agreement (κ, α) is in :mod:`bayeserr.stats.agreement`.

Assumption throughout: the labelled questions are a uniformly random sample
of the questions (of each model's answered questions).  Labels chosen by
hand or on the kind of question break the unbiasedness of ``mean_L(Y − λf)``
for ``E[Y − λf]``, and no variance formula repairs that; labels concentrated
in a few clusters carry only those clusters' information about the judge's
bias (the clustered interval is then honest but wide, an unclustered one
overconfident).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

from bayeserr.base.errors import InputError, describe
from bayeserr.base.jsonable import as_float
from bayeserr.base.registry import check_level, check_range
from bayeserr.stats.distributions import norm_ppf, t_ppf
from bayeserr.stats.estimators import cluster_sums
from bayeserr.stats.fewclusters import bm_df, cr2_mean, effective_clusters

#: Rogan–Gladen is declared unusable when Youden's J = Se + Sp − 1 is at most this.
MIN_YOUDEN = 0.1


# --------------------------------------------------------------------------- #
# results
# --------------------------------------------------------------------------- #
@dataclass(frozen=True)
class Interval:
    """One estimate with its standard error and interval.

    ``df`` is the t reference's degrees of freedom, ``inf`` for a normal
    quantile (``None`` in ``to_dict()``).
    """

    estimate: float
    se: float
    df: float
    lower: float
    upper: float

    def to_dict(self) -> dict:
        return {"estimate": as_float(self.estimate), "se": as_float(self.se), "df": as_float(self.df),
                "lower": as_float(self.lower), "upper": as_float(self.upper)}


def _interval(est, se, df, level) -> Interval:
    est, se, df = float(est), float(se), float(df)
    crit = float(norm_ppf(0.5 + level / 2)) if math.isinf(df) else float(t_ppf(0.5 + level / 2, df))
    half = crit * se if se > 0 else (0.0 if se == 0 else math.nan)
    return Interval(est, se, df, est - half, est + half)


@dataclass(frozen=True)
class PPIMean:
    """Result of :func:`ppi_mean` and :func:`ppi_paired` (``docs/methods.md`` §3.14).

    ``ppi`` is the judge-corrected interval for the human-scored mean (or
    difference), ``classical`` the labelled subset alone, ``judge_only`` the
    judge's own mean over every question (an interval for the *judge*-scored
    mean: it does not cover the human mean when the judge is biased), ``bias``
    the judge's bias ``mean(f − Y)`` on the labelled set.
    """

    ppi: Interval
    classical: Interval
    judge_only: Interval
    bias: Interval
    lam: float                 #: λ used on the unlabelled mean (after clipping; cross-fitted: the mean λ̄ of the λ_{−i})
    lam_raw: float             #: the same before clipping (the given λ if fixed)
    lam_tuned: bool            #: False when λ was given
    n_labelled: int
    n_unlabelled: int
    effective_labels: float    #: n · V_classical / V_ppi (J4)
    correlation: float         #: corr(Y, f) on the labelled set (NaN if either is constant)
    level: float
    variance: str              #: "iid" or "cr2" (CR2, t on the df of (J7))
    reference: str             #: "t" or "z" (z only without clusters)
    estimand: str              #: "mean" or "difference"
    n_clusters: int | None = None               #: clusters with a question
    n_clusters_labelled: int | None = None      #: clusters with a labelled question
    effective_clusters_labelled: float | None = None  #: n² / Σ n_c² over the labelled set
    lam_fit: str = "crossfit"  #: how a tuned λ was fitted: "crossfit" (J2x) or "plugin" (J2); "fixed" when given

    def to_dict(self) -> dict:
        out = {k: getattr(self, k).to_dict() for k in ("ppi", "classical", "judge_only", "bias")}
        out.update(lam=as_float(self.lam), lam_raw=as_float(self.lam_raw), lam_tuned=self.lam_tuned,
                   n_labelled=self.n_labelled, n_unlabelled=self.n_unlabelled,
                   effective_labels=as_float(self.effective_labels), correlation=as_float(self.correlation),
                   level=self.level, variance=self.variance, reference=self.reference,
                   estimand=self.estimand, lam_fit=self.lam_fit,
                   n_clusters=self.n_clusters, n_clusters_labelled=self.n_clusters_labelled,
                   effective_clusters_labelled=(None if self.effective_clusters_labelled is None
                                                else as_float(self.effective_clusters_labelled)))
        return out

    def to_frame(self):
        """One row per interval (``ppi``, ``classical``, ``judge_only``, ``bias``):
        ``estimate, se, df, lower, upper``; the rest in ``DataFrame.attrs``."""
        import pandas as pd

        rows = {k: getattr(self, k) for k in ("ppi", "classical", "judge_only", "bias")}
        frame = pd.DataFrame({k: [getattr(v, k) for v in rows.values()]
                              for k in ("estimate", "se", "df", "lower", "upper")},
                             index=pd.Index(list(rows), name="interval"))
        frame.attrs.update({k: v for k, v in self.to_dict().items() if k not in rows})
        return frame


@dataclass(frozen=True)
class PPIArrays:
    """Result of :func:`ppi_arrays`: arrays over the leading axes."""

    estimate: np.ndarray       #: θ̂_λ (J1)
    se: np.ndarray             #: √V̂ (J3) or √V̂_CR2 (J6)
    df: np.ndarray             #: Welch–Satterthwaite df of (J3), or the df of (J7) with clusters
    lam: np.ndarray            #: λ used
    lam_raw: np.ndarray        #: λ̂ before clipping
    classical_mean: np.ndarray  #: mean_L(Y)
    classical_se: np.ndarray   #: s_L(Y)/√n or the CR2 SE of the labelled mean
    classical_df: np.ndarray   #: n − 1, or the Bell–McCaffrey df of the labelled mean
    n: np.ndarray              #: labelled questions
    n_unlabelled: np.ndarray


# --------------------------------------------------------------------------- #
# the array core
# --------------------------------------------------------------------------- #
LAM_FITS = ("crossfit", "plugin")


def ppi_arrays(human, judge, codes=None, *, lam=None, clip=True, lam_fit="crossfit") -> PPIArrays:
    """PPI++ estimate, SE and df along the last axis, vectorized over leading axes
    ((J1)–(J3), (J2x), (J6), (J7); ``docs/methods.md`` §3.14.1, §3.14.3).

    ``human`` (..., Q): human scores, NaN where the question is unlabelled;
    ``judge`` (..., Q): judge scores, all finite; ``codes``: None (independent
    questions) or the (Q,) integer cluster code of each question (CR2, t
    reference on the df of (J7)).  ``lam``: None for the power-tuned λ, else
    a fixed λ (1: PPI; 0: classical).  ``lam_fit`` says how the tuned λ is
    fitted: ``"crossfit"`` (the default; (J2x): each labelled question's
    correction uses the λ of (J2) fitted without it — deterministic, no folds
    drawn, invariant to the order of the questions) or ``"plugin"`` (one λ̂ of
    (J2) fitted on, and applied to, every label: PPI++ as published).  ``clip``
    clips the tuned λ (each λ_{−i}) to [0, 1].  ``lam`` in the result is the
    mean λ̄ of the λ_{−i} (the weight of the judge's unlabelled mean),
    ``lam_raw`` the same before clipping.  ``df`` is the Welch–Satterthwaite
    df of (J3) without clusters (``n − 1`` for the classical mean), the df of
    (J7) with them.

    No input checks (the simulation lab calls this on many replicates): use
    :func:`ppi_mean` for validated input.  Rows with fewer than two labelled
    questions give NaN; rows with fewer than two unlabelled questions use
    λ = 0 (the classical mean; there is no judge-only information to add);
    with cross-fitting and two labels, λ_{−i} = 0 (a covariance needs two
    other labels).
    """
    y = np.asarray(human, dtype=float)
    f = np.asarray(judge, dtype=float)
    y, f = np.broadcast_arrays(y, f)
    lab = ~np.isnan(y)
    unl = ~lab
    Q = y.shape[-1]
    n = lab.sum(axis=-1)
    N = Q - n
    with np.errstate(invalid="ignore", divide="ignore"):
        nn, NN = n.astype(float), N.astype(float)
        ybar = np.where(lab, y, 0.0).sum(-1) / nn
        fl = np.where(lab, f, 0.0).sum(-1) / nn
        fu = np.where(unl, f, 0.0).sum(-1) / NN
        e = np.where(lab, y - ybar[..., None], 0.0)
        g = np.where(lab, f - fl[..., None], 0.0)
        u = np.where(unl, f - fu[..., None], 0.0)
        vy = (e * e).sum(-1) / (nn - 1)
        vu = (u * u).sum(-1) / (NN - 1)
        has_u = N >= 2
        lam_i, lam_raw = _fitted_lam(e, g, f, lab, nn, NN, lam, clip, lam_fit)  # per labelled question
        lam_i = np.where(lab & has_u[..., None], lam_i, 0.0)
        lbar = lam_i.sum(-1) / nn                                          # λ̄ (= λ for one λ)
        # ψ_i = Y_i + λ_{−i}(mean_U(f̃) − f_i), the per-question terms θ̂ averages (J2x)
        psi = np.where(lab, y - lam_i * (f - np.where(has_u, fu, 0.0)[..., None]), 0.0)
        est = psi.sum(-1) / nn                                              # (J1), (J2x)
        rho = np.where(lab, psi - est[..., None], 0.0)
        vl = (rho * rho).sum(-1) / (nn - 1)                                 # s²_L(ψ) = s²_L(Y − λf) for one λ
        if codes is None:
            v_u = np.where(has_u, lbar**2 * vu / NN, 0.0)
            v_l = vl / nn
            var = v_u + v_l                                               # (J3)
            var_c = vy / nn
            # Welch–Satterthwaite df of (J3): (J7) with every question its own cluster
            df = var**2 / (np.where(has_u, v_u**2 / (NN - 1), 0.0) + v_l**2 / (nn - 1))
            df_c = nn - 1
        else:
            codes = np.asarray(codes)
            sq_l, sq_u, nc, mc = _cr2_factors(lab, codes, nn, NN)
            SU = np.where(has_u[..., None], cluster_sums(u, codes), 0.0)
            T = sq_l * cluster_sums(rho, codes) / nn[..., None] + lbar[..., None] * sq_u * SU / NN[..., None]
            var = (T * T).sum(-1)                                         # (J6)
            a = sq_l * cluster_sums(e, codes) / nn[..., None]
            var_c = (a * a).sum(-1)
            df = _ppi_df(lbar, np.where(has_u, vu, 0.0), vl, nc, mc, nn, NN, sq_l, sq_u)
            df_c = bm_df(nc)
        ok = n >= 2
        nan = np.nan
    return PPIArrays(estimate=np.where(ok, est, nan), se=np.where(ok, np.sqrt(var), nan),
                     df=np.where(ok, df, nan), lam=np.where(ok, lbar, nan),
                     lam_raw=np.where(ok, lam_raw, nan), classical_mean=np.where(ok, ybar, nan),
                     classical_se=np.where(ok, np.sqrt(var_c), nan), classical_df=np.where(ok, df_c, nan),
                     n=n, n_unlabelled=N)


def _fitted_lam(e, g, f, lab, n, N, lam, clip, lam_fit):
    """λ for each labelled question (..., Q) and the reported λ before clipping (...):
    a fixed λ; the plug-in λ̂ of (J2); or the leave-one-out λ_{−i} of (J2x), whose
    mean before clipping is reported.  ``e``, ``g``: the labelled deviations from
    the labelled means (0 off the labelled set)."""
    shape = f.shape
    if lam is not None:
        lam = np.broadcast_to(np.asarray(lam, dtype=float), n.shape)
        return np.broadcast_to(lam[..., None], shape), lam
    den = (1.0 + n / N) * f.var(axis=-1, ddof=1)
    den = np.where(den > 0, den, np.nan)                                   # constant judge: λ = 0
    Sxy = (e * g).sum(-1)
    if lam_fit == "plugin":
        raw = Sxy / (n - 1) / den                                          # (J2)
        raw = np.where(np.isfinite(raw), raw, 0.0)
        each = np.broadcast_to(raw[..., None], shape)
    else:                                                                  # (J2x)
        nn = n[..., None]
        each = (Sxy[..., None] - nn / (nn - 1) * e * g) / (nn - 2) / den[..., None]
        each = np.where(np.isfinite(each), each, 0.0)                     # n = 2 or constant judge: 0
        raw = np.where(lab, each, 0.0).sum(-1) / n
    return (np.clip(each, 0.0, 1.0) if clip else each), raw


def _cr2_factors(lab, codes, n, N):
    """CR2 factors of (J6): √q^L_c, √q^U_c and the sizes n_c, m_c (..., C).

    A cluster holding every labelled (unlabelled) question has q = ∞: its
    factor is NaN, so the SE and df are NaN (no cluster-level inference).
    """
    nc = cluster_sums(lab.astype(float), codes)
    mc = cluster_sums((~lab).astype(float), codes)
    nn, NN = n[..., None], N[..., None]
    sq_l = np.where(nc > 0, np.sqrt(1.0 / np.where(nc < nn, 1.0 - nc / nn, np.nan)), 0.0)
    sq_u = np.where(mc > 0, np.sqrt(1.0 / np.where(mc < NN, 1.0 - mc / NN, np.nan)), 0.0)
    return sq_l, sq_u, nc, mc


def _ppi_df(lam, s2u, s2l, nc, mc, n, N, sq_l, sq_u):
    """Satterthwaite df of the clustered PPI variance (J7), vectorized: the sets U and L
    with weights λ and 1 (:func:`sets_df`)."""
    lam = np.asarray(lam, dtype=float)
    lam, s2u, s2l, n, N = np.broadcast_arrays(lam, s2u, s2l, n, N)
    return sets_df(np.stack([s2u, s2l], -1), np.stack([lam, np.ones_like(lam)], -1),
                   np.stack(np.broadcast_arrays(mc, nc), -2), np.stack([N, n], -1),
                   np.stack(np.broadcast_arrays(sq_u, sq_l), -2))


def sets_df(s2, w, counts, totals, sq):
    """Satterthwaite df of a CR2 variance of Σ_t w_t·mean_t over sets t of questions
    that share clusters, under the working model of independent questions with variance
    σ²_t in set t ((J7), ``docs/methods.md`` §3.14.3; §3.14.4 for Rogan–Gladen's three
    sets).  Vectorized over leading axes: ``s2``, ``w``, ``totals`` (..., T); ``counts``
    and ``sq`` (..., T, C): questions of set t in cluster c and √q_ct.  With
    D_t = diag(w_t² q_ct n_ct / n_t²), r_tc = w_t √q_ct n_ct / n_t^{3/2} and
    M = Σ_t σ²_t (D_t − r_t r_tᵀ), the df is (tr M)² / ‖M‖²_F, in closed form."""
    s2, w, tot = (np.asarray(x, dtype=float) for x in (s2, w, totals))
    counts, sq = np.asarray(counts, dtype=float), np.asarray(sq, dtype=float)
    D = (w / tot)[..., None] ** 2 * sq**2 * counts                       # (..., T, C)
    r = w[..., None] * sq * counts / tot[..., None] ** 1.5                  # (..., T, C)
    d = (s2[..., None] * D).sum(-2)                                        # diag of Σ σ²_t D_t
    rr = np.einsum("...tc,...sc->...ts", r, r)                             # r_t·r_s
    tr = d.sum(-1) - (s2 * np.einsum("...tt->...t", rr)).sum(-1)
    fro = ((d * d).sum(-1) - 2 * (s2 * np.einsum("...c,...tc->...t", d, r * r)).sum(-1)
           + np.einsum("...t,...s,...ts->...", s2, s2, rr * rr))
    return np.where(fro > 0, tr * tr / fro, np.nan)


# --------------------------------------------------------------------------- #
# input checks
# --------------------------------------------------------------------------- #
def as_column(x, name: str) -> np.ndarray:
    """``x`` as a 1-D float array of finite numbers or NaN; an InputError naming ``name`` otherwise."""
    try:
        arr = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be numbers, one per question (got {describe(x)}).") from None
    if arr.ndim != 1:
        raise InputError(f"{name} must be one-dimensional, one value per question (got shape {arr.shape}).")
    if np.isinf(arr).any():
        i = int(np.flatnonzero(np.isinf(arr))[0])
        raise InputError(f"{name} holds an infinite value at position {i}; scores must be finite numbers.")
    return arr


def _positions(mask) -> str:
    from bayeserr.base.formats import some
    return some((int(i) for i in np.flatnonzero(mask)), 5)


def _check_pair(human, judge, hname="human", jname="judge"):
    y, f = as_column(human, hname), as_column(judge, jname)
    if len(y) != len(f):
        raise InputError(f"{hname} and {jname} must have one entry per question each "
                         f"(got lengths {len(y)} and {len(f)}); align them on question_id first.")
    if np.isnan(f).any():
        raise InputError(f"{jname} is missing (NaN) at position(s) {_positions(np.isnan(f))}: every "
                         "question needs a judge score; drop the questions the judge did not score.")
    return y, f


def _check_codes(codes, q: int):
    if codes is None:
        return None
    arr = np.asarray(codes)
    if arr.ndim != 1 or len(arr) != q:
        raise InputError(f"codes must hold one cluster id per question ({q}), got shape {arr.shape}.")
    if arr.dtype.kind == "f" and np.isnan(arr).any():
        raise InputError(f"codes is missing (NaN) at position(s) {_positions(np.isnan(arr))}: give every "
                         "question a cluster id (its own id if it has no cluster).")
    try:
        _, inv = np.unique(arr, return_inverse=True)
    except TypeError:
        raise InputError("codes must be cluster ids of one sortable type (all numbers or all text).") from None
    return inv.reshape(-1).astype(np.int64)


def _check_labelled(y, f, codes, what="human"):
    lab = ~np.isnan(y)
    n = int(lab.sum())
    if n < 2:
        raise InputError(f"{what} labels are needed on at least 2 questions (got {n}); label a uniformly "
                         "random subset of the questions (the more, the narrower the interval).")
    if codes is not None:
        c_lab = np.unique(codes[lab])
        if len(c_lab) < 2:
            raise InputError("the labelled questions all lie in one cluster: no cluster-level inference is "
                             "possible, and labels from one cluster do not represent the others; label a "
                             "uniformly random subset of all the questions.")
        unl = ~lab
        if unl.sum() >= 2 and len(np.unique(codes[unl])) < 2:
            raise InputError("the unlabelled questions all lie in one cluster, so the judge's mean over them "
                             "has no cluster-level variance estimate; label a uniformly random subset of "
                             "the questions instead.")
    return lab


# --------------------------------------------------------------------------- #
# the validated entry points
# --------------------------------------------------------------------------- #
def check_lam(lam):
    if lam is None:
        return None
    if isinstance(lam, (bool, np.bool_)) or not isinstance(lam, numbers.Real) or not math.isfinite(lam):
        raise InputError(f"lam must be a finite number or None for the power-tuned λ (got {describe(lam)}); "
                         "1 gives PPI, 0 the classical mean.")
    return float(lam)


REFERENCES = ("t", "z")


def _result(y, f, codes, level, lam, clip, estimand, reference, lam_fit) -> PPIMean:
    if lam_fit not in LAM_FITS:
        raise InputError(f"lam_fit must be 'crossfit' (each label's correction uses λ fitted without it, the "
                         f"default) or 'plugin' (one λ fitted on every label, as in PPI++) (got {lam_fit!r}).")
    if reference not in REFERENCES:
        raise InputError(f"reference must be 't' (Welch–Satterthwaite t, the default) or 'z' (the paper's "
                         f"normal quantile) (got {reference!r}).")
    if reference == "z" and codes is not None:
        raise InputError("reference='z' is for independent questions only: with clusters the interval "
                         "uses CR2 and t on its Satterthwaite df; drop reference or codes.")
    lab = _check_labelled(y, f, codes, "human" if estimand == "mean" else "paired human")
    level = check_level(level, "level")
    lam = check_lam(lam)
    core = ppi_arrays(y, f, codes, lam=lam, clip=clip, lam_fit=lam_fit)
    n, N = int(core.n), int(core.n_unlabelled)
    d = np.where(lab, f - y, np.nan)
    if codes is None:
        z = reference == "z"
        j = (f.mean(), f.std(ddof=1) / math.sqrt(len(f)), math.inf if z else len(f) - 1)
        bias = (np.nanmean(d), np.nanstd(d, ddof=1) / math.sqrt(n), math.inf if z else n - 1)
        if z:
            core = PPIArrays(**{**core.__dict__, "df": np.float64(math.inf), "classical_df": np.float64(math.inf)})
        clusters = {}
    else:
        cj, cb = cr2_mean(f, codes), cr2_mean(d, codes)
        j = (cj.mean, cj.se, cj.df)
        bias = (cb.mean, cb.se, cb.df)
        nc = np.bincount(codes[lab], minlength=int(codes.max()) + 1)
        clusters = {"n_clusters": len(np.unique(codes)), "n_clusters_labelled": int(np.count_nonzero(nc)),
                    "effective_clusters_labelled": float(effective_clusters(nc.astype(float)))}
    with np.errstate(invalid="ignore", divide="ignore"):
        yl, fl = y[lab], f[lab]
        corr = (float(np.corrcoef(yl, fl)[0, 1]) if yl.std() > 0 and fl.std() > 0 else math.nan)
        n_eff = float(n * core.classical_se**2 / core.se**2) if core.se > 0 else math.nan
    return PPIMean(ppi=_interval(core.estimate, core.se, core.df, level),
                   classical=_interval(core.classical_mean, core.classical_se, core.classical_df, level),
                   judge_only=_interval(*j, level), bias=_interval(*bias, level),
                   lam=float(core.lam), lam_raw=float(core.lam_raw), lam_tuned=lam is None,
                   n_labelled=n, n_unlabelled=N, effective_labels=n_eff, correlation=corr, level=level,
                   variance="iid" if codes is None else "cr2", reference="t" if codes is not None else reference,
                   estimand=estimand, lam_fit="fixed" if lam is not None else lam_fit, **clusters)


def ppi_mean(human, judge, codes=None, *, level=0.95, lam=None, clip=True, reference="t",
             lam_fit="crossfit") -> PPIMean:
    """PPI++ interval for the human-scored mean from judge scores on every question
    and human labels on a random subset ((J1)–(J4), clustered (J6)–(J7);
    ``docs/methods.md`` §3.14).

    ``human``: one value per question, NaN where unlabelled; ``judge``: one
    finite value per question; ``codes``: None or one cluster id per question
    (any sortable labels).  Without clusters the intervals use t on the
    Welch–Satterthwaite df of (J3) (``n − 1`` for the classical and bias
    intervals, ``n + N − 1`` for the judge-only one), or z with
    ``reference="z"`` (as the paper and ppi-python do); with clusters, CR2
    standard errors and t on the df of (J7) (the Bell–McCaffrey df of (M4b)
    for the classical, judge-only and bias intervals).  ``lam``: None for the
    power-tuned λ (clipped to [0, 1] when ``clip``), or a fixed value.
    ``lam_fit``: ``"crossfit"`` (default; (J2x), §3.14.1: each labelled
    question's correction uses the λ of (J2) fitted without it, which removes
    the plug-in's O(1/n) bias and its too-short intervals at 50 labels;
    deterministic and independent of the questions' order) or ``"plugin"``
    (one λ̂ fitted on every label, PPI++ and ppi-python as published).

    The labelled questions must be a uniformly random sample of the
    questions; see ``docs/methods.md`` §3.14 for what breaks otherwise.
    """
    y, f = _check_pair(human, judge)
    return _result(y, f, _check_codes(codes, len(y)), level, lam, clip, "mean", reference, lam_fit)


def ppi_paired(human_a, judge_a, human_b, judge_b, codes=None, *, level=0.95, lam=None,
               clip=True, reference="t", lam_fit="crossfit") -> PPIMean:
    """PPI++ interval for the paired difference of human-scored means A − B (J5;
    ``docs/methods.md`` §3.14).

    All four columns have one entry per question (the questions both models
    answered, aligned).  (J1)–(J4) (clustered: (J6)–(J7)) are applied to the
    differences ``d_Y = Y_A − Y_B`` and ``d_f = f_A − f_B``; a question counts
    as labelled when both of its answers are labelled (labels on one side
    only contribute their judge difference, as unlabelled questions).
    ``lam``, ``clip``, ``reference`` and ``lam_fit`` as in :func:`ppi_mean`.
    """
    ya, fa = _check_pair(human_a, judge_a, "human_a", "judge_a")
    yb, fb = _check_pair(human_b, judge_b, "human_b", "judge_b")
    if len(ya) != len(yb):
        raise InputError(f"model A and model B must have one entry per shared question each (got "
                         f"{len(ya)} and {len(yb)}); keep the questions both answered, in the same order.")
    return _result(ya - yb, fa - fb, _check_codes(codes, len(ya)), level, lam, clip, "difference", reference,
                   lam_fit)


# --------------------------------------------------------------------------- #
# Rogan–Gladen for 0/1 judges
# --------------------------------------------------------------------------- #
@dataclass(frozen=True)
class RoganGladen:
    """Result of :func:`rogan_gladen` (J8, J9; ``docs/methods.md`` §3.14).

    ``usable`` is False (and the estimate, SE and interval NaN) when Youden's
    ``J = Se + Sp − 1 ≤ 0.1``, or when Se, Sp or the judge's rate cannot be
    estimated; ``reason`` says which.  ``clipped`` says the raw estimate left
    [0, 1].
    """

    estimate: float            #: θ̂ clipped to [0, 1]
    estimate_raw: float        #: (p̂ + Sp − 1)/(Se + Sp − 1) before clipping
    se: float                  #: delta-method SE (J9)
    lower: float               #: clipped to [0, 1]
    upper: float
    sensitivity: float         #: P̂(judge 1 | human 1) on the labelled set
    specificity: float         #: P̂(judge 0 | human 0)
    se_sensitivity: float
    se_specificity: float
    judge_rate: float          #: p̂, judge's share of 1s on the unlabelled questions
    se_judge_rate: float
    youden: float              #: J = Se + Sp − 1
    n_labelled: int
    n_positive: int            #: labelled questions with human 1
    n_negative: int
    n_unlabelled: int
    level: float
    usable: bool
    clipped: bool
    reason: str | None = None
    df: float = math.inf       #: ∞ (normal quantile) without clusters; (J7) over the three sets with them
    variance: str = "delta"    #: "delta" (J9) or "cr2" (J9c, clustered)
    n_clusters: int | None = None

    def to_dict(self) -> dict:
        return {k: (as_float(v) if isinstance(v, float) else v) for k, v in self.__dict__.items()}


def _binary(x, name, allow_nan):
    bad = ~np.isnan(x) & ((x < 0) | (x > 1))
    if bad.any():
        raise InputError(f"{name} must be 0/1 for Rogan–Gladen: values outside [0, 1] at position(s) "
                         f"{_positions(bad)}; rescale the scores to 0/1 first.")
    frac = ~np.isnan(x) & (x != 0) & (x != 1)
    if frac.any():
        raise InputError(f"{name} must be 0/1 for Rogan–Gladen: fractional values at position(s) "
                         f"{_positions(frac)}; threshold the judge's score into a verdict first, or use "
                         "ppi_mean, which takes fractional scores.")
    if not allow_nan and np.isnan(x).any():
        raise InputError(f"{name} is missing at position(s) {_positions(np.isnan(x))}.")


def rogan_gladen(human, judge, codes=None, *, level=0.95) -> RoganGladen:
    """Rogan–Gladen corrected share of human 1s from a 0/1 judge (J8) with its
    delta-method interval (J9) (Rogan & Gladen 1978; ``docs/methods.md`` §3.14).

    ``human``: 0/1 with NaN where unlabelled; ``judge``: 0/1 on every
    question.  Sensitivity ``Se = P̂(f = 1 | Y = 1)`` and specificity
    ``Sp = P̂(f = 0 | Y = 0)`` come from the labelled questions, the judge's
    rate ``p̂`` from the unlabelled ones (independent of Se and Sp, so the
    three variances add)::

        θ̂ = (p̂ + Sp − 1) / J,   J = Se + Sp − 1                         (J8)
        Var θ̂ ≈ [ p̂(1−p̂)/N + θ̂² Se(1−Se)/n₁ + (1−θ̂)² Sp(1−Sp)/n₀ ] / J²   (J9)

    interval ``θ̂ ± z SE``; the estimate and the interval are clipped to
    [0, 1].  Unusable (NaN, ``usable=False``) when ``J ≤ 0.1``: the judge
    barely separates the classes and the correction divides by almost 0.

    ``codes`` (one cluster id per question): the three means share clusters, so
    the variance is the CR2 variance of the linearised estimator over the sets
    U, L₁ (labelled 1s) and L₀ (J9c) and the interval is t on the Satterthwaite
    df of (J7) over the three sets (:func:`sets_df`).
    """
    y, f = _check_pair(human, judge)
    _binary(y, "human", True)
    _binary(f, "judge", False)
    level = check_level(level, "level")
    codes = _check_codes(codes, len(y))
    lab = ~np.isnan(y)
    n = int(lab.sum())
    if n < 2:
        raise InputError(f"human labels are needed on at least 2 questions (got {n}); label a uniformly "
                         "random subset of the questions.")
    yl, fl, fu = y[lab], f[lab], f[~lab]
    n1, n0, N = int((yl == 1).sum()), int((yl == 0).sum()), len(fu)
    nan = math.nan
    with np.errstate(invalid="ignore", divide="ignore"):
        se_ = float(fl[yl == 1].mean()) if n1 else nan
        sp_ = float(1 - fl[yl == 0].mean()) if n0 else nan
        p = float(fu.mean()) if N else nan
        v_se = se_ * (1 - se_) / n1 if n1 else nan
        v_sp = sp_ * (1 - sp_) / n0 if n0 else nan
        v_p = p * (1 - p) / N if N else nan
    J = se_ + sp_ - 1
    reason = None
    if not n1 or not n0:
        reason = ("no labelled question has human score " + ("1" if not n1 else "0")
                  + ": the judge's " + ("sensitivity" if not n1 else "specificity")
                  + " cannot be estimated; label more questions.")
    elif not N:
        reason = "every question is labelled: the human mean of the labels needs no correction."
    elif not J > MIN_YOUDEN:
        reason = (f"Se + Sp − 1 = {J:.3f} ≤ {MIN_YOUDEN}: the judge barely separates human 1s from 0s, "
                  "so the correction divides by almost zero; use ppi_mean or the labelled subset alone.")
    raw = (p + sp_ - 1) / J if reason is None else nan
    clustered = {} if codes is None else {"variance": "cr2", "n_clusters": int(np.unique(codes).size)}
    if reason is None and codes is None:
        var, df = (v_p + raw**2 * v_se + (1 - raw) ** 2 * v_sp) / J**2, math.inf     # (J9)
    elif reason is None:
        var, df, reason = _rogan_gladen_cr2(f, y, lab, codes, raw, J)                 # (J9c)
    if reason is not None:
        return RoganGladen(nan, nan, nan, nan, nan, se_, sp_, math.sqrt(v_se) if n1 else nan,
                           math.sqrt(v_sp) if n0 else nan, p, math.sqrt(v_p) if N else nan, J,
                           n, n1, n0, N, level, False, False, reason, **clustered)
    se = math.sqrt(var)
    q = float(norm_ppf(0.5 + level / 2)) if math.isinf(df) else float(t_ppf(0.5 + level / 2, df))
    est = min(max(raw, 0.0), 1.0)
    return RoganGladen(est, raw, se, min(max(raw - q * se, 0.0), 1.0), min(max(raw + q * se, 0.0), 1.0),
                       se_, sp_, math.sqrt(v_se), math.sqrt(v_sp), p, math.sqrt(v_p), J,
                       n, n1, n0, N, level, True, est != raw, None, df=df, **clustered)


def _rogan_gladen_cr2(f, y, lab, codes, theta, J):
    """CR2 variance and df of Rogan–Gladen with clusters (J9c), or the reason there is none.

    Linearised, θ̂ − θ ≈ Σ_t w_t·mean_t(f − μ_t) over the sets U (w = 1/J), L₁
    (w = −θ/J, through Se) and L₀ (w = −(1 − θ)/J, through Sp = 1 − mean_{L₀} f): a
    weighted sum of set means of the judge's scores, whose CR2 variance is
    Σ_c (Σ_t w_t √q_ct S_ct / n_t)² with S_ct the residual sum of set t in cluster c
    (the hat matrix is block diagonal by set, as in (J6)), and whose df is (J7) over
    the three sets."""
    sets = (~lab, lab & (y == 1), lab & (y == 0))
    names = ("unlabelled questions", "labelled questions with human score 1",
             "labelled questions with human score 0")
    w = np.array([1.0, -theta, -(1.0 - theta)]) / J
    C = int(codes.max()) + 1
    counts, sums, s2, tot = np.zeros((3, C)), np.zeros((3, C)), np.zeros(3), np.zeros(3)
    for t, m in enumerate(sets):
        x = f[m]
        tot[t] = m.sum()
        counts[t] = np.bincount(codes[m], minlength=C)
        if counts[t].max() == tot[t]:
            return math.nan, math.nan, (f"every one of the {names[t]} is in one cluster: no cluster-level "
                                        "inference for Rogan–Gladen; spread the labels over clusters, or use "
                                        "the PPI++ interval.")
        sums[t] = np.bincount(codes[m], weights=x - x.mean(), minlength=C)
        s2[t] = x.var(ddof=1)
    sq = np.where(counts > 0, np.sqrt(1.0 / (1.0 - counts / tot[:, None])), 0.0)
    T = (w[:, None] * sq * sums / tot[:, None]).sum(0)
    df = float(sets_df(s2, w, counts, tot, sq))
    if not np.isfinite(df):
        return math.nan, math.nan, ("the clustered degrees of freedom are undefined (the judge's scores do "
                                    "not vary within the labelled or unlabelled sets); use the PPI++ interval.")
    return float((T * T).sum()), df, None


# --------------------------------------------------------------------------- #
# planning
# --------------------------------------------------------------------------- #
@dataclass(frozen=True)
class PPIPlan:
    """Result of :func:`labels_for_half_width` and :func:`half_width_for_labels` (J13)."""

    n_labels: float            #: human labels (whole number; inf when not attainable)
    half_width: float          #: z √V at n_labels
    classical_labels: float    #: labels the labelled-only interval needs for the same half-width
    classical_half_width: float  #: half-width of the labelled-only interval at n_labels
    rho: float
    sd: float
    level: float
    n_total: float | None      #: questions in all (labelled + unlabelled); None: unlimited
    design_effect: float
    attainable: bool

    def to_dict(self) -> dict:
        return {k: (as_float(v) if isinstance(v, float) else v) for k, v in self.__dict__.items()}


def _plan_inputs(rho, sd, level, n_total, design_effect):
    rho = check_range("rho", rho, -1, 1)
    sd = check_range("sd", sd, 0, None, low_open=True)
    level = check_level(level, "level")
    deff = check_range("design_effect", design_effect, 1, None)
    nt = None if n_total is None else float(check_range("n_total", n_total, 2, None))
    return rho, sd, level, nt, deff


def _plan_var(n, rho, sd, nt, deff):
    """(J13): V(n) = deff · σ² [ (1 − ρ²)/n + ρ²/N_total ]."""
    return deff * sd**2 * ((1 - rho**2) / n + (rho**2 / nt if nt else 0.0))


def half_width_for_labels(n, rho, sd, *, level=0.95, n_total=None, design_effect=1.0) -> PPIPlan:
    """Half-width of the PPI++ interval with ``n`` human labels (J13; ``docs/methods.md`` §3.14).

    With the optimal λ and the other ``n_total − n`` questions judged only,
    ``V = deff · σ² [(1 − ρ²)/n + ρ²/n_total]`` (``n_total = None``: an
    unlimited unlabelled pool, ``V = deff · σ²(1 − ρ²)/n``); half-width
    ``z √V``.  ``rho`` is the judge–human correlation, ``sd`` the SD of the
    human score (of the paired difference, for a comparison),
    ``design_effect`` an optional clustered variance inflation (≥ 1).
    Large-sample: it ignores the cost of estimating λ, which matters below a
    few dozen labels.
    """
    rho, sd, level, nt, deff = _plan_inputs(rho, sd, level, n_total, design_effect)
    n = _check_n(n, nt)
    z = float(norm_ppf(0.5 + level / 2))
    w = z * math.sqrt(_plan_var(n, rho, sd, nt, deff))
    return PPIPlan(float(n), w, float(math.ceil(deff * (sd * z / w) ** 2)), z * sd * math.sqrt(deff / n),
                   rho, sd, level, nt, deff, True)


def _check_n(n, nt):
    n = check_range("n", n, 2, None)
    if nt is not None and n > nt:
        raise InputError(f"n ({n:g}) cannot exceed n_total ({nt:g}): there are only that many questions to label.")
    return n


def labels_for_half_width(half_width, rho, sd, *, level=0.95, n_total=None, design_effect=1.0) -> PPIPlan:
    """Human labels needed for a target half-width of the PPI++ interval (J13;
    ``docs/methods.md`` §3.14): the inverse of :func:`half_width_for_labels`::

        n = deff σ² (1 − ρ²) / ( (w/z)² − deff σ² ρ² / n_total )

    rounded up (at least 2).  Not attainable (``n_labels = inf``) when even
    labelling every question is too wide: ``w ≤ z σ √(deff / n_total)``.
    """
    rho, sd, level, nt, deff = _plan_inputs(rho, sd, level, n_total, design_effect)
    w = check_range("half_width", half_width, 0, None, low_open=True)
    z = float(norm_ppf(0.5 + level / 2))
    classical = float(math.ceil(deff * (sd * z / w) ** 2))
    denom = (w / z) ** 2 - (deff * sd**2 * rho**2 / nt if nt else 0.0)
    if nt is not None and (w / z) ** 2 < deff * sd**2 / nt * (1 - 1e-12):
        return PPIPlan(math.inf, w, classical, math.nan, rho, sd, level, nt, deff, False)
    n = deff * sd**2 * (1 - rho**2) / denom
    n = max(2.0, float(math.ceil(n - 1e-9)))
    if nt is not None:
        n = min(n, nt)
    achieved = z * math.sqrt(_plan_var(n, rho, sd, nt, deff))
    return PPIPlan(n, achieved, classical, z * sd * math.sqrt(deff / n), rho, sd, level, nt, deff, True)
