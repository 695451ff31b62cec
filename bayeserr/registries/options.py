"""Analysis options, validated in one place for the Python API and the CLI.

:class:`Options` carries what every analysis takes (level, cluster
correction, multiplicity adjustment, unpaired handling, Bayesian settings);
building one checks every value and raises :class:`~bayeserr.base.errors.InputError`
naming the option, the value and the allowed range.  The numeric checks
(:func:`check_range`) are shared by every command, so ``--level 1.5`` fails
the same way everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from bayeserr.base.errors import InputError, describe, suggest
from bayeserr.base.registry import Registry, check_level, check_range  # noqa: F401 (re-exported)

CLUSTER_CORRECTIONS = Registry("cluster correction", "--cluster-correction", {
    "paper": "the paper's clustered SE (M4)",
    "cr1": "CR1 finite-cluster correction (Inspect AI, statsmodels)",
})
ADJUSTMENTS = Registry("multiplicity adjustment", "--adjust", {
    # value: the statsmodels multipletests method, where statsmodels does it
    "romano-wolf": "Romano–Wolf step-down from the joint bootstrap (docs/methods.md §3.9)",
    "holm": "holm",
    "bh": "fdr_bh",
    "none": "no adjustment",
})
ON_UNPAIRED = Registry("unpaired handling", "--on-unpaired", {
    "error": "stop when two models have different question sets",
    "drop": "compare each pair on the questions both answered (reported)",
})
RANK_INTERVALS = Registry("rank intervals shown", "--rank-intervals", {
    "own": "each model's own rank interval (holds for that model; docs/methods.md §3.10)",
    "simultaneous": "rank intervals that hold for every model at once (the report's family of pairs)",
    "both": "both columns",
})
CLUSTER_READINGS = Registry("reading of the clusters", "--clusters-as", {
    "sample": "the clusters are a sample of clusters like these (CR2 with the Bell–McCaffrey df)",
    "strata": "the clusters are the whole population of interest: also rank with them as fixed strata",
})
TASK_READINGS = Registry("reading of the tasks", "--tasks-as", {
    "strata": "these tasks: the Suite section's fixed strata lead (docs/methods.md §3.12)",
    "sample": "tasks like these: the leaderboard over tasks (random effects, t on T − 1 df) leads "
              "(docs/methods.md §3.15)",
})

# the choices of the other commands, each a registry the command line names
COMPARE_FAMILIES = Registry("family of a compared pair", "--family", {
    "report": "also the verdict the report of every model gives the pair (its family and adjustment)",
    "pair": "the pair alone",
})
GATE_BAYES = Registry("gate's Bayesian column", "--bayes", {
    "fast": "the posterior P(A − B > margin) beside the decision (exact, no sampler)",
    "off": "the frequentist decision only",
})
SUITE_WEIGHTINGS = Registry("suite weighting", "--suite", {
    "macro": "each task weighs 1/T", "size": "each question weighs the same",
})
WATCH_METHODS = Registry("confidence sequence", "--method", {
    "auto": "betting for 0/1 scores and few looks, else asymptotic (docs/methods.md §3.13)",
    "betting": "the betting confidence sequence (exact, bounded scores)",
    "asymptotic": "the asymptotic confidence sequence (normal mixture)",
})
WATCH_SAMPLES = Registry("use of repeated samples", "--samples", {
    "first": "each question's first sample", "mean": "each question's mean over its samples",
})
BOOTSTRAP_UNITS = Registry("bootstrap unit", "--bootstrap-by", {
    "votes": "resample votes", "items": "resample the items voted on (their votes together)",
    "cluster": "resample clusters of items",
})


@dataclass(frozen=True)
class Options:
    """What an analysis is asked to do (the same for the API and the CLI)."""

    level: float = 0.95
    cluster_correction: str = "paper"
    adjust: str = "romano-wolf"
    on_unpaired: str = "error"
    bayes: object = "fast"  #: "off" | "fast" | "mcmc" or a BayesSettings
    prior_sensitivity: bool = False
    pass_k: tuple = field(default_factory=tuple)
    #: pass^k for these k (empty: 1, 2, … up to the fewest runs, when questions were run repeatedly)
    pass_hat_k: tuple = field(default_factory=tuple)
    seed: int = 0  #: seed of the frequentist resampling (wild cluster bootstrap)
    #: interval columns shown in text formats: "recommended", "all" or method keys (JSON keeps all)
    methods: object = "recommended"
    #: comparisons shown: "auto" (all up to 45 pairs, else adjacent in the ranking; JSON: all),
    #: "all", "adjacent" or "vs=MODEL"
    pairs: str = "auto"
    #: size of the top-k confidence set of the ranking
    top_k: int = 3
    #: rank intervals shown in text formats (JSON keeps both): a key of RANK_INTERVALS
    rank_intervals: str = "own"
    #: "strata": a Suite section reads the clusters as fixed strata (docs/methods.md §3.10)
    cluster_reading: str = "sample"
    #: which reading of the tasks leads: "strata" (these tasks) or "sample" (tasks like these)
    task_reading: str = "strata"
    #: suite scores: the user's {task: weight}, shown beside the macro and size-weighted ones
    task_weights: dict | None = None

    def __post_init__(self):
        from bayeserr.bayes.settings import BayesSettings
        object.__setattr__(self, "level", check_level(self.level))
        CLUSTER_CORRECTIONS.check(self.cluster_correction)
        ADJUSTMENTS.check(self.adjust)
        ON_UNPAIRED.check(self.on_unpaired)
        RANK_INTERVALS.check(self.rank_intervals)
        CLUSTER_READINGS.check(self.cluster_reading)
        TASK_READINGS.check(self.task_reading)
        object.__setattr__(self, "bayes", BayesSettings.coerce(self.bayes))
        if isinstance(self.prior_sensitivity, (str, bytes)) or self.prior_sensitivity not in (True, False):
            raise InputError(f"prior_sensitivity takes True or False; got {describe(self.prior_sensitivity)}.")
        object.__setattr__(self, "prior_sensitivity", bool(self.prior_sensitivity))
        object.__setattr__(self, "pass_k", _pass_k(self.pass_k))
        object.__setattr__(self, "pass_hat_k", _pass_k(self.pass_hat_k, "pass_hat_k", "--pass-hat-k"))
        object.__setattr__(self, "seed", check_range("--seed", self.seed, 0, integer=True))
        object.__setattr__(self, "methods", checked_methods(self.methods))
        object.__setattr__(self, "top_k", check_range("--top-k", self.top_k, 1, integer=True))
        if not (self.pairs in ("auto", "all", "adjacent") or str(self.pairs).startswith("vs=")):
            raise InputError(f"--pairs must be auto, all, adjacent or vs=MODEL (got '{self.pairs}').")

    @classmethod
    def coerce(cls, options=None, **kwargs) -> "Options":
        """``options`` if given (with ``kwargs`` overriding), else ``Options(**kwargs)``."""
        unknown = [k for k in kwargs if k not in _FIELDS]
        if unknown:
            name = unknown[0]
            hint = _HINTS.get(name, f"{suggest(name, _FIELDS)} Options: {', '.join(_FIELDS)}.")
            raise InputError(f"'{name}' is not an option of bayeserr analyses.{hint}")
        if options is None:
            return cls(**kwargs)
        if not isinstance(options, Options):
            raise InputError("options must be a bayeserr Options object.")
        if kwargs:
            from dataclasses import replace
            return replace(options, **kwargs)
        return options


_FIELDS = tuple(f.name for f in fields(Options))
_HINTS = {"models": " Choose the models with the models= argument of score / compare_all, or when "
                    "loading: bayeserr.load(path, models=['A', 'B'])."}


def _pass_k(value, name: str = "pass_k", option: str = "--pass-k") -> tuple:
    """A list of whole k ≥ 1 (``"1,5"`` as on the command line)."""
    if value is None:
        return ()
    if isinstance(value, str):
        value = [v for v in value.split(",") if v.strip()]
    elif not isinstance(value, (list, tuple, set, frozenset, range)):
        raise InputError(f"{name} takes a list of whole numbers, e.g. {name}=[1, 5]; got {describe(value)}.")
    return tuple(check_range(option, k, 1, integer=True) for k in value)


def method_shown(methods, key: str) -> bool:
    """Whether checked ``methods`` (:func:`checked_methods`) make interval method ``key`` a
    column of the text formats: every one under ``all``, the named ones, none under
    ``recommended`` (which shows each model's recommended interval in one column)."""
    return methods == "all" or (methods != "recommended" and key in methods)


def checked_methods(value):
    """``recommended``, ``all`` or a tuple of the interval-method keys a report can show as
    columns; ``all`` in a list stands for every method's column (``all,hierarchical_mu``)."""
    from bayeserr.registries.methods import INTERVALS, report_methods
    if isinstance(value, str) and value in ("recommended", "all"):
        return value
    if isinstance(value, str):
        keys = [k.strip() for k in value.split(",")]
    elif isinstance(value, (list, tuple)):
        keys = list(value)
    else:
        keys = None
    every = [m.key for m in report_methods()]
    columns = every + list(SIDE_COLUMNS)
    choices = (f"Choose from: recommended, all, {', '.join(columns)} (all can lead a list: "
               "all,hierarchical_mu).")
    if keys is None:
        raise InputError(f"--methods takes 'recommended', 'all' or a list of interval method names; got "
                         f"{describe(value)}. {choices}")
    out = []
    for k in keys:
        if k == "all":
            out += every
        elif k not in columns:
            raise InputError(_not_a_column(k, INTERVALS, columns) + " " + choices)
        else:
            out.append(k)
    return tuple(dict.fromkeys(out))


def _not_a_column(key, intervals, columns) -> str:
    """Why ``--methods`` cannot show ``key``: recommended stands alone, a method only the
    simulation lab measures, or no such method."""
    if key == "recommended":
        return "--methods recommended shows each model's recommended interval and stands alone."
    if key in intervals:
        return (f"--methods {key}: {intervals[key].label} is not a column of the report (the "
                "simulation lab measures it: bayeserr simulate coverage).")
    return f"--methods '{key}' is not a known interval method.{suggest(key, columns + ['all', 'recommended'])}"


#: interval methods outside a model's ``intervals`` that ``--methods`` can still show as a
#: column: μ of a new cluster, which the hierarchical posterior computes beside its own
SIDE_COLUMNS = ("hierarchical_mu",)
