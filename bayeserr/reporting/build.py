"""The report pipeline: one call builds every number of ``bayeserr report``
(per-model table, pairwise table, tie zone, warnings, row accounting) once,
Bayesian columns included, for the Python API and the CLI alike
(``docs/methods.md`` §7).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import xarray as xr

from bayeserr.analyses.comparison import Comparisons, compare_view, pair_caveats
from bayeserr.analyses.judge import judge as judge_results
from bayeserr.analyses.scoring import Scores, score_view
from bayeserr.base.jsonable import dumps, to_jsonable  # noqa: F401 (dumps: its former home)
from bayeserr.data.loading import task_groups
from bayeserr.registries import caveats as _caveats
from bayeserr.registries.options import COMPARE_FAMILIES, Options
from bayeserr.reporting.formats import COMPARE_FORMATS, FORMATS  # noqa: F401 (their former home)
from bayeserr.reporting.sections import (
    NotAvailable,
    SufficientSource,
    ViewSource,
    compute_sections,
    report_json,
)
from bayeserr.stats.view import DataView, check_dataset

if TYPE_CHECKING:
    from bayeserr.analyses.groups import GroupScores
    from bayeserr.analyses.judge import Judge
    from bayeserr.analyses.ranking import Ranking
    from bayeserr.analyses.suite import Suite
    from bayeserr.analyses.tasks import TasksAsSample
    from bayeserr.bayes.settings import BayesSettings

SCHEMA = "bayeserr.report/2"
COMPACT_ABOVE = 300  # pairs


@dataclass(frozen=True)
class Report:
    """Everything ``bayeserr report`` prints, for one results file: the settings it was
    made under and each section's result (:mod:`bayeserr.reporting.sections`)."""

    source: str
    level: float
    columns: dict
    rows: dict  #: the row accounting: read, used, dropped [{reason, count}]
    cluster_correction: str
    adjust: str
    sections: Mapping[str, Any]  #: section key -> result (None: nothing to show; NotAvailable)
    provenance: dict | None = None  #: version, created, command, inputs (path, sha256), seed
    methods: tuple | str = "recommended"  #: interval columns shown in text formats
    pairs: str = "auto"  #: comparisons shown (see reporting.tables.select_pairs)

    def _get(self, key: str, empty=None):
        value = self.sections.get(key)
        return empty if value is None or isinstance(value, NotAvailable) else value

    @property
    def scores(self) -> Scores:
        return self.sections["models"].scores

    @property
    def comparisons(self) -> Comparisons:
        return self.sections["pairs"]

    @property
    def posteriors(self) -> dict | None:
        """Posterior fits by model, for --save-posterior and figures."""
        return self.sections["models"].fits

    @property
    def bayes(self) -> BayesSettings | None:
        """The Bayesian settings, or None when --bayes off (or the engine has no Bayesian columns)."""
        return self._get("bayes")

    @property
    def ranking(self) -> Ranking | None:
        return self._get("ranking")

    @property
    def groups(self) -> dict | None:
        """Compact letter groups by model (bayeserr.stats.ranking)."""
        return self.sections["letter_groups"].groups

    @property
    def groups_note(self) -> str | None:
        """Why letter groups are not shown, when they are not."""
        return self.sections["letter_groups"].note

    @property
    def tie_zone(self) -> dict:
        return self.sections["tie_zone"]

    @property
    def warnings(self) -> tuple:
        return self.sections["warnings"]

    @property
    def prior_sensitivity(self) -> tuple:
        return self._get("prior_sensitivity", ())

    @property
    def pass_at_k(self) -> dict | None:
        """k -> (Scores, Comparisons) of per-problem pass@k."""
        return self._get("pass_at_k")

    @property
    def suite(self) -> Suite | None:
        """With two tasks or more (or --clusters-as strata)."""
        return self._get("suite")

    @property
    def over_tasks(self) -> TasksAsSample | None:
        """With three tasks or more: the leaderboard over tasks like these (§3.15)."""
        return self._get("over_tasks")

    @property
    def per_task(self) -> tuple:
        """(task, Scores, Comparisons) for each task of a suite."""
        return self._get("per_task", ())

    @property
    def task_groups(self) -> GroupScores | None:
        """lm-eval's groups."""
        return self._get("task_groups")

    @property
    def judge(self) -> Judge | None:
        """When answers carry human labels."""
        return self._get("judge")

    def to_dict(self) -> dict:
        """The JSON object (``docs/methods.md`` §7.2; JSON Schema in
        ``bayeserr/schema/report-2.json``); NaN becomes ``null``."""
        return to_jsonable({"schema": SCHEMA, "level": self.level, "provenance": self.provenance,
                            "columns": self.columns, "rows": self.rows, **report_json(self)})

    def to_json(self, indent: int | None = None) -> str:
        """JSON text; indented for small reports, one compact line for large
        ones (Python's fast C encoder only runs without indentation)."""
        if indent is None and len(self.comparisons) <= COMPACT_ABOVE:
            indent = 2
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    def to_markdown(self) -> str:
        from bayeserr.renderers.markdown import render_report
        return render_report(self)

    def to_latex(self) -> str:
        from bayeserr.renderers.latex import render
        return render(self)

    def to_html(self, figures: bool = True) -> str:
        from bayeserr.renderers.html import render
        return render(self, figures)

    def render(self, fmt: str) -> str:
        """The report as ``md``, ``json``, ``latex`` or ``html`` text."""
        return getattr(self, FORMATS.get_checked(fmt))()

    def _repr_html_(self) -> str:
        """Jupyter: the tables as a fragment whose styles stay inside it (figures
        are a call away: bayeserr.renderers.plots)."""
        from bayeserr.renderers.html import render
        return render(self, figures=False, fragment=True)

    def __repr__(self) -> str:
        return (f"Report({self.source!r}: {len(self.scores)} models, {len(self.comparisons)} pairs, "
                f"{len(self.warnings)} warnings)")


def _sha256(path: Path) -> str:
    import hashlib
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def provenance(inputs=(), command: str | None = None, seed: int | None = None, config=None) -> dict:
    """What made a report: bayeserr version, time (UTC, ISO 8601), the command
    line, each input file with its SHA-256, the seed, and (``config``, a
    :class:`~bayeserr.data.config.Config`) the configuration files whose
    settings applied and those found but not trusted."""
    from datetime import datetime, timezone

    from bayeserr.base.version import __version__
    files = []
    for item in inputs:
        path = Path(item)
        members = sorted(f for f in path.rglob("*") if f.is_file()) if path.is_dir() else [path]
        files += [{"path": str(f), "sha256": _sha256(f)} for f in members if f.is_file()]
    out = {"version": __version__, "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
           "command": command, "inputs": files, "seed": seed}
    if config is not None and (config.files or config.ignored):
        out["config"] = [{"path": str(p), "sha256": _sha256(p)} for p in config.files.values()]
        out["config_ignored"] = [{"path": str(p), "why": why} for p, why in config.ignored]
    return out


def _check_pairs_option(pairs: str, models) -> None:
    """``--pairs vs=MODEL`` must name a model of the report (checked before any work)."""
    if str(pairs).startswith("vs="):
        base = str(pairs).split("=", 1)[1]
        if base not in models:
            from bayeserr.base.errors import InputError, suggest
            from bayeserr.base.formats import some
            raise InputError(f"--pairs {pairs}: '{base}' is not a model of the report."
                             f"{suggest(base, models)} Models: {some(models, 20)}.")


def _check_inputs(inputs) -> list:
    """Files (or folders) hashed into the provenance: a list of paths that exist
    (``-``, standard input, is recorded without a hash)."""
    import os

    from bayeserr.base.errors import InputError, describe
    if isinstance(inputs, (str, os.PathLike)):
        inputs = [inputs]
    if not isinstance(inputs, (list, tuple)) or not all(isinstance(i, (str, os.PathLike)) for i in inputs):
        raise InputError(f"inputs takes a list of paths (the files hashed into the provenance); got "
                         f"{describe(inputs)}. Leave it out to record the files the data were loaded from.")
    for item in inputs:
        if str(item) != "-" and not Path(item).exists():
            raise InputError(f"{item}: no such file (inputs lists the files hashed into the provenance). "
                             "Check the path, or leave inputs out.")
    return list(inputs)


def build_report_view(view: DataView, options: Options, *, inputs=(), command=None, config=None,
                      task_groups=None, judge=None) -> Report:
    """The pipeline on a :class:`~bayeserr.stats.view.DataView` (see :func:`build_report`);
    ``task_groups``: lm-eval's group structure (:func:`bayeserr.data.loading.task_groups`);
    ``judge``: the judge-corrected results (:func:`bayeserr.analyses.judge.judge`)."""
    return assemble(ViewSource(view, task_groups, judge), options, source=view.source, columns=view.columns,
                    inputs=inputs, command=command, config=config)


def assemble(src, options: Options, *, source: str, columns: dict, inputs=(), command=None,
             config=None) -> Report:
    """The one assembler of every engine: each registered section computed from ``src``
    (:class:`~bayeserr.reporting.sections.ViewSource` or
    :class:`~bayeserr.reporting.sections.SufficientSource`), then the :class:`Report`."""
    _check_pairs_option(options.pairs, src.models)
    src.check()
    return Report(source=source, level=options.level, columns=columns, rows=src.rows,
                  cluster_correction=options.cluster_correction, adjust=options.adjust,
                  sections=compute_sections(src, options),
                  provenance=provenance(inputs, command, options.seed, config), methods=options.methods,
                  pairs=options.pairs)


def build_report(ds, *, options: Options | None = None, inputs=None, command: str | None = None,
                 config=None, engine: str = "memory", load=None, **kwargs) -> Report:
    """Score every model, compare every pair, collect the warnings.

    Keyword arguments are those of :class:`~bayeserr.registries.options.Options`:
    ``level``, ``cluster_correction``, ``adjust``, ``on_unpaired``,
    ``bayes`` (``"off"``, ``"fast"`` — the default — ``"mcmc"``, or a
    :class:`~bayeserr.bayes.BayesSettings`), ``prior_sensitivity``,
    ``pass_k``, ``seed``.  The numbers are those of ``bayeserr report`` with
    the same options.  ``inputs`` (files or folders, hashed into the
    provenance; default: the file the dataset was loaded from) and
    ``command`` are recorded, not used, and so are the configuration files
    of ``config`` (a :class:`~bayeserr.data.config.Config`, as the command
    line reads them).

    ``engine`` (:data:`bayeserr.engines.registry.ENGINES`): ``"stream"`` or ``"dask"`` take the
    path of Parquet results (a file, folder, glob pattern or hive-partitioned dataset, or a list
    of them) instead of a dataset and build the report from sufficient statistics in bounded
    memory (``docs/guide/scale.md``); their column options (``model_col``, …, or ``load``, a
    mapping of them) go to the engine's reader, and so do its own options (``progress``,
    ``tmp_dir``; for dask ``scheduler``, ``workers``, ``worker_memory``).
    """
    from bayeserr.base.errors import InputError, describe
    from bayeserr.engines.registry import COLUMN_OPTIONS, ENGINES
    chosen = ENGINES.get_checked(engine)
    own = {k: kwargs.pop(k) for k in list(kwargs) if any(k in e.options for e in ENGINES.values())}
    chosen.check_options(own)
    if command is not None and not isinstance(command, str):
        raise InputError(f"command takes text (the command line recorded in the provenance); got "
                         f"{describe(command)}.")
    inputs = None if inputs is None else _check_inputs(inputs)
    if not chosen.per_question:
        chosen.check_source(ds)
        columns = {k: kwargs.pop(k) for k in list(kwargs) if k in COLUMN_OPTIONS}
        load = chosen.check_load({**(load or {}), **columns})
        options = Options.coerce(options, **kwargs)
        result = chosen.run(ds, load, **own)
        return report_from_sufficient(result, options, engine=chosen.name,
                                      inputs=result.inputs if inputs is None else inputs, command=command,
                                      config=config)
    options = Options.coerce(options, **kwargs)
    if inputs is None and isinstance(ds, xr.Dataset) and "inputs" in ds.attrs:
        inputs = list(ds.attrs["inputs"])  # every input load() read
    if inputs is None:
        source = Path(str(ds.attrs.get("source", ""))) if isinstance(ds, xr.Dataset) else None
        inputs = [source] if source is not None and str(source) and source.exists() else []
    if not isinstance(ds, xr.Dataset):  # a DataFrame is loaded; anything else fails here, before it is read
        ds = check_dataset(ds)
    view = DataView.from_dataset(ds)  # (checks a Dataset once)
    judge = judge_results(ds, level=options.level) if "human" in ds.data_vars else None
    return build_report_view(view, options, inputs=inputs, command=command, config=config,
                             task_groups=task_groups(ds) or None, judge=judge)


def report_from_sufficient(result, options: Options, *, engine: str = "stream", inputs=(), command=None,
                           config=None) -> Report:
    """The :class:`Report` of an engine's sufficient statistics
    (:class:`~bayeserr.engines.stream.StreamResult`), through the same sections as the
    in-memory report; those that need per-question data are listed in the warnings as
    not available, with the reason."""
    return assemble(SufficientSource(result, engine), options, source=result.source, columns=result.columns,
                    inputs=inputs, command=command, config=config)


# ------------------------------------------------------------------ compare
@dataclass(frozen=True)
class ComparisonReport:
    """``bayeserr compare``: one pair in depth, with its row accounting,
    warnings and (optionally) the full posterior of A − B.

    JSON form (``to_dict``), schema ``bayeserr.compare/1``: ``level``,
    ``comparison`` (a comparison entry of the report schema), ``models``
    (the two per-model entries), ``rows``, ``posterior`` (method, summary,
    probabilities, diagnostics, or ``null``), ``warnings``.
    """

    comparison: object
    scores: Scores
    rows: dict
    warnings: tuple
    level: float
    posterior: object = None
    settings: dict | None = None  #: configuration files used and ignored (``config``, ``config_ignored``)
    #: the report's verdict on the pair (FamilyVerdict; None: two models, or ``family="pair"``)
    verdict: object = None

    def to_dict(self) -> dict:
        return to_jsonable({
            "schema": "bayeserr.compare/1", "level": self.level,
            "comparison": self.comparison.to_dict(),
            "report_verdict": None if self.verdict is None else self.verdict.to_dict(),
            "models": self.scores.to_dict(),
            "rows": self.rows, "posterior": None if self.posterior is None else self.posterior.to_dict(),
            "warnings": [w.to_dict() for w in self.warnings], **(self.settings or {}),
        })

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, allow_nan=False)

    def to_markdown(self) -> str:
        from bayeserr.renderers.markdown import render_blocks
        from bayeserr.reporting.document import comparison_blocks
        return render_blocks(comparison_blocks(self))

    def render(self, fmt: str) -> str:
        return {"md": self.to_markdown, "json": self.to_json}[COMPARE_FORMATS.check(fmt)]()

    def _repr_html_(self) -> str:
        """Jupyter: the comparison's tables as a self-scoped fragment."""
        from bayeserr.renderers.html import render_blocks
        from bayeserr.reporting.document import comparison_blocks
        return render_blocks(comparison_blocks(self), fragment=True)

    def __repr__(self) -> str:
        c = self.comparison
        return (f"ComparisonReport({c.a!r} − {c.b!r}: diff {c.diff:+.4f}, "
                f"{len(self.warnings)} warnings)")




#: per-model warnings that describe the models table, which ``compare`` does not print
_TABLE_ONLY = ("interval_outside_unit",)


def _model_options(options: Options) -> Options:
    """The settings of the two models' own scores in a comparison: the report's, every
    Bayesian interval computed (so the JSON holds what ``report`` gives each model and the
    recommended interval is the report's), by the grid under ``--bayes mcmc`` — the
    sampler is for the pair's posterior, the comparison's subject."""
    from dataclasses import replace
    if options.bayes.mode in ("mcmc", "fast") and options.bayes.on:
        return replace(options, bayes=replace(options.bayes, mode="full", only_shown=False))
    return options


def build_comparison(ds, a: str, b: str, *, options: Options | None = None, config=None,
                     family: str = "report", **kwargs) -> ComparisonReport:
    """One pair in depth: ``A − B`` with the per-model warnings of both models
    and, unless ``bayes="off"``, the full posterior of the difference.  ``config``:
    the configuration files behind the settings (named in the output, as a report's).
    ``family="report"``: with more than two models in ``ds``, also the verdict the
    report of all of them gives the pair (its family and adjustment); ``"pair"``: the
    pair alone."""
    from bayeserr.analyses.comparison import family_verdict, pair_names
    from bayeserr.base.errors import InputError
    options = Options.coerce(options, **kwargs)
    if family not in COMPARE_FAMILIES:
        raise InputError(f"family must be 'report' or 'pair' (got {family!r}).")
    a, b = pair_names(a, b)
    full = DataView.from_dataset(ds)
    view = full.select([a, b])
    comps = compare_view(view, options)
    if not len(comps):
        raise InputError(f"'{a}' and '{b}' share {comps.skipped[0][2]} question(s); a paired "
                         "comparison needs at least 2.")
    c = comps[0]
    scores, _ = score_view(view, _model_options(options))
    warnings = [w for m in scores for w in m.caveats if w.code not in _TABLE_ONLY]
    warnings += pair_caveats(comps, view.clustered) + _caveats.early_stopped(view.rows)
    verdict = None
    if family == "report":
        try:
            verdict = family_verdict(full, a, b, options)
        except InputError as exc:  # another pair of the file cannot be compared as asked
            warnings.append(_caveats.Caveat("no_report_verdict", None, f"the report's verdict on this pair is "
                                            f"not shown: {exc}"))
    post = None
    if options.bayes.on:
        from dataclasses import replace

        from bayeserr.bayes.pairs import pair_posterior
        from bayeserr.models.diagnostics import problems
        post = pair_posterior(view, c, options.bayes, options.level)
        c = replace(c, prob_a_better=post.prob_a_better, prob_tie=post.prob_tie)
        warnings += list(post.notes)
        if post.diagnostics:
            failed = problems(post.diagnostics)
            if failed:  # one warning: several joined by the warnings list would run into each other
                warnings.append(_caveats.Caveat("mcmc_diagnostics", None, (
                    "the paired model's NUTS fit fails the thresholds of docs/methods.md §5.6, so its "
                    f"posterior and P(A > B) may not be trustworthy: {'; '.join(failed)}.")))
    settings = {k: v for k, v in provenance(config=config).items() if k.startswith("config")} or None
    return ComparisonReport(c, scores, full.rows, tuple(warnings), options.level, post, settings, verdict)
