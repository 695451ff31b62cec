"""Bayesian columns of the report: which model of ``bayeserr.models`` applies
to which data, and how its answer lands in the tables (SPEC §5, §6).

Modes (``--bayes``):

* ``off`` — no Bayesian columns.
* ``fast`` (default) — closed forms and deterministic paths only, no sampler:
  conjugate Beta posterior (0/1, K = 1); exact hierarchical posterior by
  quadrature (0/1 answers grouped by cluster, or by question when K > 1);
  for pairs, the Dirichlet 2×2 posterior (0/1, K = 1, no clusters) or else
  the Bayesian bootstrap of the paired difference (over clusters when
  clustered, else over questions).
* ``mcmc`` — as ``fast``, but the hierarchical posterior comes from PyMC NUTS
  (three levels when the data have both clusters and K > 1), with R-hat,
  ESS and divergence checks.
"""

from __future__ import annotations

import contextlib
import re
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import xarray as xr

from .caveats import Caveat
from .data import cluster_codes, question_means
from .errors import InputError

MODES = ("off", "fast", "mcmc")


@dataclass(frozen=True)
class BayesSettings:
    mode: str = "fast"
    rope: float = 0.01  #: half-width of the region of practical equivalence (1 point)
    prior: object = "uniform"  #: Beta prior of the conjugate model
    draws: int = 4000  #: Bayesian bootstrap draws
    seed: int = 0
    mcmc_draws: int = 1000
    mcmc_tune: int = 1000
    chains: int = 2
    progress: bool = False

    def __post_init__(self):
        if self.mode not in MODES:
            raise InputError(f"--bayes must be one of {', '.join(MODES)} (got '{self.mode}').")
        if not 0 <= self.rope < 1:
            raise InputError(f"--rope must be in [0, 1) (got {self.rope}); e.g. 0.01 for one point.")


def parse_prior(text: str):
    """``uniform``, ``jeffreys`` or ``a,b`` (a Beta(a, b) prior)."""
    if "," in str(text):
        try:
            a, b = (float(v) for v in str(text).split(","))
        except ValueError:
            raise InputError(f"--prior '{text}': write two numbers as a,b (e.g. 2,2).") from None
        return (a, b)
    return text


@contextlib.contextmanager
def sampling_output(settings: BayesSettings):
    """Run a sampler with its output where it belongs: PyMC's progress bar
    goes to stdout, so it is sent to stderr and the report on stdout stays
    clean; without a progress bar (``--format json``) PyMC's log lines and
    PyTensor's BLAS notice are silenced too."""
    import logging
    import warnings
    logger = logging.getLogger("pymc")
    level = logger.level
    with contextlib.redirect_stdout(sys.stderr), warnings.catch_warnings():
        if not settings.progress:
            logger.setLevel(logging.WARNING)
            warnings.simplefilter("ignore", UserWarning)
        try:
            yield
        finally:
            logger.setLevel(level)


# --------------------------------------------------------------- per model
def _binary_answers(answers: np.ndarray) -> bool:
    a = answers[~np.isnan(answers)]
    return bool(np.isin(a, (0.0, 1.0)).all())


def group_counts(answers: np.ndarray, codes: np.ndarray | None):
    """Right answers ``k`` and answers ``N`` per group for the hierarchical model.

    Groups are clusters when given, else questions when some question has
    more than one answer; ``None`` when there is no grouping or the answers
    are not 0/1.
    """
    per_q_k = np.nansum(answers, axis=1)
    per_q_n = np.sum(~np.isnan(answers), axis=1).astype(float)
    if not _binary_answers(answers):
        return None
    if codes is not None:
        uniq, inv = np.unique(codes, return_inverse=True)
        return np.bincount(inv, weights=per_q_k), np.bincount(inv, weights=per_q_n)
    if per_q_n.max() > 1:
        return per_q_k, per_q_n
    return None


def _model_arrays(ds: xr.Dataset):
    s, _ = question_means(ds)
    return s, ds["score"].values, cluster_codes(ds)


def model_posteriors(ds: xr.Dataset, scores, settings: BayesSettings, level: float):
    """Fill ``beta_posterior`` and ``hierarchical_posterior`` of each model.

    Returns the updated scores, the fits by model name (posterior objects or
    ``InferenceData``) and any diagnostic caveats.
    """
    from bayeserr.models import beta_binomial, hierarchical
    s_all, cube, codes_all = _model_arrays(ds)
    names = [str(m) for m in ds["model"].values]
    out, fits, notes = [], {}, []
    for m in scores:
        j = names.index(m.model)
        answered = ~np.isnan(s_all[j])
        answers = cube[j, answered]
        codes = None if codes_all is None else codes_all[answered]
        ivs = dict(m.intervals)
        fit = {}
        if m.binary:
            post = beta_binomial.beta_posterior(m.mean * m.n_questions, m.n_questions, settings.prior)
            ivs["beta_posterior"] = post.interval(level)
            fit["beta"] = post
        counts = group_counts(answers, codes)
        if counts is not None:
            if settings.mode == "mcmc":
                idata, diag_notes = _hierarchical_mcmc(answers, codes, settings, m.model)
                mu = idata.posterior["mu"].values.ravel()
                ivs["hierarchical_posterior"] = np.quantile(mu, [(1 - level) / 2, (1 + level) / 2])
                fit["hierarchical"] = idata
                notes += diag_notes
            else:
                post = hierarchical.fit_exact(*counts)
                ivs["hierarchical_posterior"] = post.interval(level)
                fit["hierarchical"] = post
        out.append(replace(m, intervals=ivs))
        fits[m.model] = fit
    return type(scores)(tuple(out)), fits, notes


def _hierarchical_mcmc(answers, codes, settings: BayesSettings, model: str):
    from bayeserr.models import diagnostics, hierarchical, three_level
    kw = dict(draws=settings.mcmc_draws, tune=settings.mcmc_tune, chains=settings.chains,
              seed=settings.seed, progressbar=settings.progress)
    k_q = np.nansum(answers, axis=1)
    n_q = np.sum(~np.isnan(answers), axis=1)
    with sampling_output(settings):
        if codes is not None and n_q.max() > 1:
            inv = np.unique(codes, return_inverse=True)[1]
            idata = three_level.fit_mcmc(k_q, n_q, inv, **kw)
        else:
            idata = hierarchical.fit_mcmc(*group_counts(answers, codes), **kw)
    diag = diagnostics.diagnose(idata, ["mu"])
    idata.attrs["diagnostics"] = str(diag)
    notes = [Caveat("mcmc_diagnostics", model, f"hierarchical model: {p}")
             for p in diagnostics.problems(diag)]
    return idata, notes


def prior_sensitivity(scores, priors=("uniform", "jeffreys"), level: float = 0.95) -> list[dict]:
    """Beta posterior intervals of each 0/1 model under several priors."""
    from bayeserr.models import beta_binomial
    rows = []
    for m in scores:
        if not m.binary:
            continue
        row = {"model": m.model}
        for p in priors:
            row[beta_binomial.prior_label(p)] = beta_binomial.beta_posterior(
                m.mean * m.n_questions, m.n_questions, p).interval(level).tolist()
        rows.append(row)
    return rows


# --------------------------------------------------------------- pairs
def _uses_dirichlet(c, clustered: bool) -> bool:
    return c.mcnemar is not None and not clustered


def _dirichlet_probs(pairs, rope):
    from bayeserr.models import paired_dirichlet as pdir
    b = np.array([c.mcnemar.n_a_only for c in pairs])
    cc = np.array([c.mcnemar.n_b_only for c in pairs])
    r = np.array([c.mcnemar.n_both + c.mcnemar.n_neither for c in pairs])
    return pdir.prob_a_better(b, cc, r), pdir.prob_within(rope, b, cc, r)


PAIR_CHUNK = 256


def _answer_patterns(mask: np.ndarray) -> np.ndarray:
    """An id per row of the answered mask: rows with the same questions share it."""
    ids: dict = {}
    return np.array([ids.setdefault(row.tobytes(), len(ids)) for row in np.packbits(mask, axis=1)])


def _bootstrap_groups(ds: xr.Dataset, pairs, draws: int, seed: int):
    """Bayesian bootstrap draws of the model means for each group of pairs.

    Pairs whose models have the same answered-question patterns share one
    computation on their common questions (over clusters when clustered),
    with the same seed (common random weights).  Yields
    ``(means (draws × models), column of a, column of b, the pairs)``.
    """
    from bayeserr.models.bayesian_bootstrap import bootstrap_means
    s, _, codes = _model_arrays(ds)
    names = {str(m): i for i, m in enumerate(ds["model"].values)}
    mask = ~np.isnan(s)
    pattern = _answer_patterns(mask)
    groups: dict = {}
    for c in pairs:
        ia, ib = names[c.a], names[c.b]
        groups.setdefault(tuple(sorted((pattern[ia], pattern[ib]))), []).append((c, ia, ib))
    for members in groups.values():
        _, ia0, ib0 = members[0]
        common = mask[ia0] & mask[ib0]
        rows = sorted({i for _, ia, ib in members for i in (ia, ib)})
        means = bootstrap_means(s[rows][:, common], None if codes is None else codes[common], draws, seed)
        col = {r: k for k, r in enumerate(rows)}
        yield (means, np.array([col[ia] for _, ia, _ in members]),
               np.array([col[ib] for _, _, ib in members]), [c for c, _, _ in members])


def pair_probabilities(delta: np.ndarray, rope: float):
    """``P(Δ > 0)`` (ties count half) and ``P(|Δ| < rope)`` from draws along axis 0."""
    return (np.mean(delta > 0, axis=0) + 0.5 * np.mean(delta == 0, axis=0),
            np.mean(np.abs(delta) < rope, axis=0))


def bootstrap_pair_probabilities(ds: xr.Dataset, pairs, rope: float, draws: int, seed: int) -> dict:
    """``(P(A > B), P(|A − B| < rope))`` of each pair by the Bayesian bootstrap,
    vectorized over pairs in chunks."""
    out = {}
    for means, ca, cb, members in _bootstrap_groups(ds, pairs, draws, seed):
        for start in range(0, len(members), PAIR_CHUNK):
            sl = slice(start, start + PAIR_CHUNK)
            better, tie = pair_probabilities(means[:, ca[sl]] - means[:, cb[sl]], rope)
            out.update({(c.a, c.b): (float(p), float(q)) for c, p, q in zip(members[sl], better, tie)})
    return out


def bootstrap_pair_draws(ds: xr.Dataset, c, draws: int, seed: int) -> np.ndarray:
    """Draws of A − B for one comparison (Bayesian bootstrap)."""
    means, ca, cb, _ = next(_bootstrap_groups(ds, [c], draws, seed))
    return means[:, ca[0]] - means[:, cb[0]]


def pair_posteriors(ds: xr.Dataset, comps, settings: BayesSettings):
    """Fill ``prob_a_better`` and ``prob_tie`` of every comparison."""
    clustered = "cluster" in ds.coords
    pairs = list(comps)
    dir_pairs = [c for c in pairs if _uses_dirichlet(c, clustered)]
    bb_pairs = [c for c in pairs if not _uses_dirichlet(c, clustered)]
    probs = {}
    if dir_pairs:
        better, tie = _dirichlet_probs(dir_pairs, settings.rope)
        probs.update({(c.a, c.b): (float(p), float(t)) for c, p, t in zip(dir_pairs, better, tie)})
    if bb_pairs:
        probs.update(bootstrap_pair_probabilities(ds, bb_pairs, settings.rope, settings.draws, settings.seed))
    new = tuple(replace(c, prob_a_better=probs[(c.a, c.b)][0], prob_tie=probs[(c.a, c.b)][1])
                for c in pairs)
    return type(comps)(new, comps.skipped)


# --------------------------------------------------------------- saving
def _idata(fit, name: str, seed: int):
    if hasattr(fit, "to_inference_data"):
        return fit.to_inference_data(seed=seed)
    return fit


def save_posteriors(fits: dict, directory, seed: int = 0) -> list[Path]:
    """Write each posterior as netCDF (``<model>.<kind>.nc``) through ArviZ."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for model, kinds in fits.items():
        for kind, fit in kinds.items():
            safe = re.sub(r"[^A-Za-z0-9._-]+", "_", model)
            path = directory / f"{safe}.{kind}.nc"
            _idata(fit, model, seed).to_netcdf(str(path))
            written.append(path)
    return written


# --------------------------------------------------------------- one pair in depth
@dataclass(frozen=True)
class PairPosterior:
    """Posterior of A − B for ``bayeserr compare --bayes``."""

    method: str
    summary: dict  #: variable -> mean, sd, eti, hdi
    prob_a_better: float
    prob_tie: float
    rope: float
    diagnostics: dict | None = None
    idata: object = None

    def to_dict(self) -> dict:
        return {"method": self.method, "summary": self.summary, "prob_a_better": self.prob_a_better,
                "prob_tie": self.prob_tie, "rope": self.rope, "diagnostics": self.diagnostics}


def _draws_idata(delta: np.ndarray, method: str):
    from bayeserr.models.diagnostics import import_arviz
    return import_arviz().from_dict(posterior={"delta": delta[None]}, attrs={"model": method})


def pair_posterior(ds: xr.Dataset, c, settings: BayesSettings, level: float = 0.95) -> PairPosterior:
    """The full posterior of one comparison: the latent bivariate model under
    ``mcmc`` for 0/1 answers, else the Dirichlet 2×2 or Bayesian bootstrap."""
    from bayeserr.models import diagnostics
    clustered = "cluster" in ds.coords
    sub = ds.sel(model=[c.a, c.b])
    s, cube, codes = _model_arrays(sub)
    both = ~np.isnan(s).any(axis=0)
    if settings.mode == "mcmc" and _binary_answers(cube[:, both]):
        from bayeserr.models import paired_latent
        k = np.nansum(cube[:, both], axis=2)
        n = np.sum(~np.isnan(cube[:, both]), axis=2)
        pc = None if codes is None else np.unique(codes[both], return_inverse=True)[1]
        with sampling_output(settings):
            idata = paired_latent.fit_mcmc(k, n, pc, draws=settings.mcmc_draws,
                                           tune=settings.mcmc_tune, chains=settings.chains,
                                           seed=settings.seed, progressbar=settings.progress)
        names = ["delta", "rho_question"] + (["rho_cluster"] if pc is not None else [])
        delta = idata.posterior["delta"].values.ravel()
        diag = diagnostics.diagnose(idata, ["beta", *names])
        method = "bivariate latent model (PyMC NUTS)"
    elif _uses_dirichlet(c, clustered):
        from bayeserr.models.paired_dirichlet import dirichlet_paired
        mc = c.mcnemar
        post = dirichlet_paired(mc.n_a_only, mc.n_b_only, mc.n_both + mc.n_neither, rope=settings.rope)
        delta = post.sample(20000, settings.seed)
        p_better, p_tie = post.prob_a_better, post.prob_tie
        idata, names, diag = _draws_idata(delta, "dirichlet_paired"), ["delta"], None
        return PairPosterior("Dirichlet 2×2 posterior, Dirichlet(1,1,1,1) prior",
                             diagnostics.summarize(idata, names, level), p_better, p_tie,
                             settings.rope, diag, idata)
    else:
        delta = bootstrap_pair_draws(sub, c, settings.draws, settings.seed)
        idata, names, diag = _draws_idata(delta, "bayesian_bootstrap"), ["delta"], None
        method = "Bayesian bootstrap over " + ("clusters" if clustered else "questions")
    p_better, p_tie = (float(v) for v in pair_probabilities(delta, settings.rope))
    return PairPosterior(method, diagnostics.summarize(idata, names, level), p_better, p_tie,
                         settings.rope, diag, idata)
