"""Posterior probabilities for pairs of models (``docs/methods.md`` §5.3, §5.4).

* 0/1 answers, K = 1, no clusters: the Dirichlet 2×2 posterior of the
  paired table (closed form, all pairs at once).
* clusters: the normal model with a cluster random effect on the difference
  (:mod:`bayeserr.models.paired_clustered`; deterministic quadrature from
  cluster sums, all pairs at once), which carries cluster-level uncertainty
  the way the CR2 headline does — a Bayesian bootstrap over a handful of
  clusters is overconfident.  One common cluster: ``null`` (not estimable).
* otherwise: the Bayesian bootstrap of the paired difference over
  questions; pairs whose models answered the same questions share one set of
  draws (common random weights).

:func:`pair_probabilities` (draws → probabilities) is a pure function the
simulation lab uses too.  :func:`pair_posterior` gives the full posterior of
one pair for ``bayeserr compare``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bayeserr.base.caveat import Caveat
from bayeserr.bayes.sampling import sampling_output
from bayeserr.stats.simultaneous import column_differences

PAIR_CHUNK = 256


def pair_probabilities(delta: np.ndarray, rope: float):
    """``P(Δ > 0)`` (ties count half) and ``P(|Δ| < rope)`` from draws along axis 0."""
    return (np.mean(delta > 0, axis=0) + 0.5 * np.mean(delta == 0, axis=0),
            np.mean(np.abs(delta) < rope, axis=0))


def _answer_patterns(mask: np.ndarray) -> np.ndarray:
    """An id per row of the answered mask: rows with the same questions share it."""
    ids: dict = {}
    return np.array([ids.setdefault(row.tobytes(), len(ids)) for row in np.packbits(mask, axis=1)])


def _bootstrap_groups(view, ia, ib, draws: int, seed: int):
    """Bayesian bootstrap draws of model means for groups of pairs with the
    same answered questions (``view.mult``, when present: the questions each
    column stands for, a unit multiset of the stream engine).  Yields ``(means (draws × models), columns of a,
    columns of b, positions of the pairs)``."""
    from bayeserr.models.bayesian_bootstrap import bootstrap_means
    s, codes = view.s, view.codes
    mask = view.answered
    pattern = _answer_patterns(mask)
    groups: dict = {}
    for pos, (a, b) in enumerate(zip(ia, ib)):
        groups.setdefault(tuple(sorted((pattern[a], pattern[b]))), []).append(pos)
    for members in groups.values():
        a0, b0 = ia[members[0]], ib[members[0]]
        common = mask[a0] & mask[b0]
        rows = sorted({int(i) for p in members for i in (ia[p], ib[p])})
        mult = None if getattr(view, "mult", None) is None else view.mult[common]
        means = bootstrap_means(s[rows][:, common], None if codes is None else codes[common], draws, seed,
                                mult=mult)
        col = {r: k for k, r in enumerate(rows)}
        yield (means, np.array([col[int(ia[p])] for p in members]),
               np.array([col[int(ib[p])] for p in members]), np.array(members))


def bootstrap_probabilities(view, ia, ib, rope: float, draws: int, seed: int):
    """``(P(A > B), P(|A − B| < rope))`` arrays for the pairs ``(ia, ib)``."""
    better, tie = np.full(len(ia), np.nan), np.full(len(ia), np.nan)
    for means, ca, cb, pos in _bootstrap_groups(view, ia, ib, draws, seed):
        for start in range(0, len(pos), PAIR_CHUNK):
            sl = slice(start, start + PAIR_CHUNK)
            delta = column_differences(means, ca[sl], cb[sl])
            better[pos[sl]], tie[pos[sl]] = pair_probabilities(delta, rope)
    return better, tie


def all_pair_probabilities(view, ia, ib, tables, settings, totals=None):
    """``P(A > B)`` and ``P(tie)`` of every pair ``(ia[k], ib[k])``.

    ``tables`` is ``(n_a_only, n_b_only, n_concordant)`` with NaN where a
    pair has no 2×2 table (not both 0/1 with K = 1); those pairs, and every
    pair under clustering, use the Bayesian bootstrap.
    """
    from bayeserr.models import paired_dirichlet as pdir
    b, c, r = tables
    better, tie = np.full(len(ia), np.nan), np.full(len(ia), np.nan)
    if view.codes is not None:
        return clustered_probabilities(view, ia, ib, settings.rope, totals)
    dirichlet = np.isfinite(b)
    if dirichlet.any():
        args = (b[dirichlet], c[dirichlet], r[dirichlet])
        better[dirichlet] = pdir.prob_a_better(*args)
        tie[dirichlet] = pdir.prob_within(settings.rope, *args)
    rest = ~dirichlet
    if rest.any() and view.s is not None:  # None: an engine that did not keep the per-question means
        better[rest], tie[rest] = bootstrap_probabilities(view, ia[rest], ib[rest], settings.rope,
                                                          settings.draws, settings.seed)
    return better, tie


def clustered_probabilities(view, ia, ib, rope: float, totals=None):
    """``P(A > B)`` and ``P(tie)`` from the cluster random-effect model, from
    the cluster sums of the differences and each pair's total of squares
    (``totals`` as computed for the CR2 headline by any engine, else formed
    here); NaN where the pair has fewer than two common clusters."""
    from bayeserr.models.paired_clustered import pair_probabilities as clustered
    better, tie = np.full(len(ia), np.nan), np.full(len(ia), np.nan)
    if totals is None:
        from bayeserr.stats.pairs import pair_cluster_totals
        chunks = list(pair_cluster_totals(view, ia, ib))
    else:
        ends = np.cumsum([len(d) for d in totals["D"]])
        chunks = [(slice(e - len(D), e), D, Q, s)
                  for e, D, Q, s in zip(ends, totals["D"], totals["Q"], totals["sizes"])]
    for sl, D, T, sizes in chunks:
        post = clustered(D, sizes, rope, total_sq=T, interval=False)  # the report shows no Δ interval
        ok = post.estimable
        better[sl] = np.where(ok, post.prob_a_better, np.nan)
        tie[sl] = np.where(ok, post.prob_tie, np.nan)
    return better, tie


# --------------------------------------------------------------- one pair in depth
@dataclass(frozen=True)
class PairPosterior:
    """Posterior of A − B for ``bayeserr compare``."""

    method: str
    summary: dict  #: variable -> mean, sd, eti, hdi
    prob_a_better: float
    prob_tie: float
    rope: float
    diagnostics: dict | None = None
    idata: object = None
    #: warnings about how the posterior was obtained (``mcmc_rerun``: the sampler ran twice;
    #: ``mcmc_not_needed``: under ``--bayes mcmc`` nothing was sampled, the scores are not 0/1)
    notes: tuple = ()

    def to_dict(self) -> dict:
        return {"method": self.method, "summary": self.summary, "prob_a_better": self.prob_a_better,
                "prob_tie": self.prob_tie, "rope": self.rope, "diagnostics": self.diagnostics}


def _unsampled(settings, method: str) -> tuple:
    """Under ``--bayes mcmc``, the warning (``mcmc_not_needed``) saying that this pair's
    posterior is ``method`` without a sampler: the bivariate latent model needs 0/1 answers
    (``docs/methods.md`` §5.3); else no warning."""
    if settings.mode != "mcmc":
        return ()
    return (Caveat("mcmc_not_needed", None, (
        f"--bayes mcmc: the pair's scores are not all 0 or 1, so the bivariate latent model "
        f"(NUTS) does not apply and nothing was sampled; the posterior of the difference is "
        f"the {method}, as under --bayes fast.")),)


def _draws_idata(delta: np.ndarray, method: str):
    from bayeserr.models import compat
    return compat.from_dict({"delta": delta[None]}, attrs={"model": method})


def _latent_fit(k, n, codes, settings, names):
    """The bivariate latent model by NUTS, and its diagnostics on ``names``.  At the default
    sampler settings (``BayesSettings.default_sampler``) a run that fails them (§5.6: R-hat,
    ESS or divergences) is re-run once with twice the draws, at target acceptance 0.99 if it
    diverged (:func:`bayeserr.models.paired_latent.rerun_settings`): SWE-bench pairs with a
    model near 10% can fall short of ESS 400 at the defaults, and the re-run costs nothing
    where the first run passes (``docs/methods.md`` §5.6); sampler options of the user's own
    are run as given (the ``mcmc_diagnostics`` warning names the one to raise).  Returns
    ``(idata, diagnostics, notes)``; the note (warning ``mcmc_rerun``) says what the first
    run gave and what the second ran with, and the report's diagnostics are the second
    run's."""
    from bayeserr.models import diagnostics, paired_latent
    kw = settings.sampler()
    with sampling_output(settings.progress):
        idata = paired_latent.fit_mcmc(k, n, codes, **kw)
        diag = diagnostics.diagnose(idata, names)
        failed = diagnostics.problems(diag)
        if not failed or not settings.default_sampler:
            return idata, diag, ()
        again = paired_latent.rerun_settings(kw, diag["divergences"] > 0)
        idata = paired_latent.fit_mcmc(k, n, codes, **again)
    # "ESS 337 < 400 (too few effective draws): raise …" -> "ESS 337 < 400, too few effective draws"
    why = "; ".join(p.split(":")[0].replace(" (", ", ").rstrip(")") for p in failed)
    note = Caveat("mcmc_rerun", None, (
        f"the paired model's first NUTS run ({kw['draws']:,} draws per chain, target acceptance "
        f"{diag['sampler']['target_accept']:g}) failed its diagnostics ({why}); it was run once more "
        f"with {again['draws']:,} draws per chain and target acceptance {again['target_accept']:g}, "
        "and the posterior and diagnostics shown are that run's."))
    return idata, diagnostics.diagnose(idata, names), (note,)


def pair_posterior(view, c, settings, level: float = 0.95) -> PairPosterior:
    """The full posterior of one comparison ``c`` of ``view``: the latent
    bivariate model under ``mcmc`` for 0/1 answers, else the Dirichlet 2×2
    or the Bayesian bootstrap."""
    from bayeserr.models import diagnostics
    sub = view.select([c.a, c.b])
    both = sub.answered.all(axis=0)
    cube = sub.answers[:, both]
    notes = ()
    if settings.mode == "mcmc" and sub.zero_one.all():
        k = np.nansum(cube, axis=2)
        n = np.sum(~np.isnan(cube), axis=2)
        pc = None if sub.codes is None else np.unique(sub.codes[both], return_inverse=True)[1]
        names = ["delta", "rho_question"] + (["rho_cluster"] if pc is not None else [])
        idata, diag, notes = _latent_fit(k, n, pc, settings, ["beta", *names])
        delta = idata.posterior["delta"].values.ravel()
        method = "bivariate latent model (PyMC NUTS)"
    elif sub.codes is not None:
        from bayeserr.models.paired_clustered import from_arrays
        d = (sub.s[0] - sub.s[1])[None, both]
        post = from_arrays(d, sub.codes[both], settings.rope, level=level)
        nan = float("nan")
        summary = {"delta": {"mean": float(post.mean[0]), "sd": float(post.sd[0]),
                             "eti": [float(v) for v in post.interval[0]], "hdi": [nan, nan]}}
        ok = bool(post.estimable[0])
        method = ("normal model with a cluster random effect on the difference (quadrature)"
                  + ("" if ok else f"; not estimable: {post.reason[0]}"))
        return PairPosterior(method, summary, float(post.prob_a_better[0]) if ok else nan,
                             float(post.prob_tie[0]) if ok else nan, settings.rope, None, None,
                             _unsampled(settings, method.split(";")[0]))
    elif c.mcnemar is not None:
        from bayeserr.models.paired_dirichlet import dirichlet_paired
        mc = c.mcnemar
        post = dirichlet_paired(mc.n_a_only, mc.n_b_only, mc.n_both + mc.n_neither, rope=settings.rope)
        delta = post.sample(20000, settings.seed)
        idata = _draws_idata(delta, "dirichlet_paired")
        return PairPosterior("Dirichlet 2×2 posterior, Dirichlet(1,1,1,1) prior",
                             diagnostics.summarize(idata, ["delta"], level), post.prob_a_better,
                             post.prob_tie, settings.rope, None, idata)  # 0/1: under mcmc the latent model ran
    else:
        means, ca, cb, _ = next(_bootstrap_groups(sub, np.array([0]), np.array([1]),
                                                  settings.draws, settings.seed))
        delta = means[:, ca[0]] - means[:, cb[0]]
        idata, names, diag = _draws_idata(delta, "bayesian_bootstrap"), ["delta"], None
        method = "Bayesian bootstrap over " + ("clusters" if sub.codes is not None else "questions")
    p_better, p_tie = (float(v) for v in pair_probabilities(delta, settings.rope))
    return PairPosterior(method, diagnostics.summarize(idata, names, level), p_better, p_tie,
                         settings.rope, diag, idata, notes if diag else _unsampled(settings, method))
