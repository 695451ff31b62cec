"""bayeserr: honest error bars for language-model evaluations.

The public API, imported lazily so that ``import bayeserr`` stays fast and
never imports PyMC or ArviZ::

    ds = bayeserr.load("results.csv")          # validated xarray.Dataset
    bayeserr.score(ds)                         # per-model SEs and intervals (docs/methods.md §2)
    bayeserr.compare(ds, "A", "B")             # A − B, paired (§3)
    bayeserr.compare_all(ds)                   # every pair, Romano–Wolf adjusted (§3.9)
    bayeserr.rank(ds)                          # rank intervals, tied with the best (§3.10)
    bayeserr.report(ds).to_markdown()          # the full report (§7)
    bayeserr.plan(delta=0.03, omega2=1/9)      # power (§4)
    bayeserr.suite(ds)                         # suite scores over tasks (§3.12)
    bayeserr.over_tasks(ds)                    # the leaderboard over tasks like these (§3.15)
    bayeserr.pass_hat_k(ds, [1, 4])            # pass^k over repeated runs, reorderings, flaky questions (§6.2)
    bayeserr.gate(ds, ["new"], "prod", 0.01)   # a release gate (§3.11)
    bayeserr.sequential(ds, "new", "prod")     # settled yet? anytime-valid (§3.13)
    bayeserr.judge(ds)                         # judge scores corrected by human labels (§3.14)

Every analysis takes a dataset from :func:`load` (a long results DataFrame,
one row per answer, is loaded on the way) and checks it and its arguments
at the boundary: misuse raises :class:`InputError` naming the problem and
the fix, as the command line does.  Every analysis takes the same options
(``level``, ``cluster_correction``, ``on_unpaired``,
``bayes="off"|"fast"|"mcmc"``, …; see :class:`bayeserr.Options`) and gives
the same numbers as the command line.
"""

from importlib import import_module

from bayeserr._compat import install as _install_old_paths
from bayeserr.base.version import __version__

_install_old_paths()  # old module paths (bayeserr.methods, …) for one release

_API = {
    "load": ("data.loading", "load"),
    "InputError": ("base.errors", "InputError"),
    "Options": ("registries.options", "Options"),
    "BayesSettings": ("bayes.settings", "BayesSettings"),
    "score": ("analyses.scoring", "score"),
    "compare": ("analyses.comparison", "compare"),
    "compare_all": ("analyses.comparison", "compare_all"),
    "rank": ("analyses.ranking", "rank"),
    "gate": ("analyses.gate", "gate"),
    "suite": ("analyses.suite", "suite"),
    "over_tasks": ("analyses.tasks", "over_tasks"),
    "pass_hat_k": ("analyses.reliability", "pass_hat_k"),
    "sequential": ("analyses.sequential", "watch"),
    "judge": ("analyses.judge", "judge"),
    "arena_judge": ("analyses.arena_judge", "arena_judge"),
    "report": ("reporting.build", "build_report"),
    "compare_report": ("reporting.build", "build_comparison"),
    "plan": ("analyses.power", "plan"),
    "n_required": ("stats.planning", "n_required"),
    "mde": ("stats.planning", "mde"),
    "n_unpaired": ("stats.planning", "n_unpaired"),
    "tie_zone": ("stats.planning", "tie_zone"),
    "n_for_tie_zone": ("stats.planning", "n_for_tie_zone"),
    "from_pilot": ("stats.planning", "from_pilot"),
    "design_effect_icc": ("stats.planning", "design_effect_icc"),
}

#: subpackages a user reaches as attributes (``bayeserr.examples.example_path()``), imported on first use
_SUBPACKAGES = ("examples",)

__all__ = sorted(_API) + ["__version__"]


def __getattr__(name):
    if name in _SUBPACKAGES:
        return import_module(f".{name}", __name__)
    if name in _API:
        module, attr = _API[name]
        value = getattr(import_module(f".{module}", __name__), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'bayeserr' has no attribute {name!r}")


def __dir__():
    return __all__
