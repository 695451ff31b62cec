"""The report pipeline: one call builds every number of ``bayeserr report``
(per-model table, pairwise table, tie zone, warnings, row accounting) once,
Bayesian columns included, for the Python API and the CLI alike
(``docs/methods.md`` §7).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import xarray as xr

from bayeserr.analyses.comparison import (
    Comparisons,
    check_pair_memory,
    compare_view,
    pair_caveats,
    ranked_names,
)
from bayeserr.analyses.groups import group_scores
from bayeserr.analyses.judge import judge as judge_results
from bayeserr.analyses.ranking import rank_view
from bayeserr.analyses.scoring import Scores, score_view
from bayeserr.analyses.suite import suite_view
from bayeserr.base.jsonable import dumps, to_jsonable  # noqa: F401 (dumps: its former home)
from bayeserr.data.loading import task_groups
from bayeserr.registries import caveats as _caveats
from bayeserr.registries.options import Options
from bayeserr.reporting.formats import COMPARE_FORMATS, FORMATS  # noqa: F401 (their former home)
from bayeserr.reporting.tables import select_pairs
from bayeserr.stats.estimators import z_value
from bayeserr.stats.planning import tie_zone
from bayeserr.stats.ranking import report_groups
from bayeserr.stats.view import DataView, check_dataset

SCHEMA = "bayeserr.report/2"
COMPACT_ABOVE = 300  # pairs






@dataclass(frozen=True)
class Report:
    """Everything ``bayeserr report`` prints, for one results file."""

    source: str
    level: float
    columns: dict
    rows: dict  #: the row accounting: read, used, dropped [{reason, count}]
    scores: Scores
    comparisons: Comparisons
    tie_zone: dict
    warnings: tuple
    cluster_correction: str
    adjust: str
    bayes: object = None  #: BayesSettings, or None when --bayes off
    prior_sensitivity: tuple = ()
    posteriors: dict | None = None  #: fits by model, for --save-posterior and figures
    pass_at_k: dict | None = None  #: k -> (Scores, Comparisons) of per-problem pass@k
    provenance: dict | None = None  #: version, created, command, inputs (path, sha256), seed
    methods: object = "recommended"  #: interval columns shown in text formats
    pairs: str = "auto"  #: comparisons shown (see reporting.tables.select_pairs)
    groups: dict | None = None  #: compact letter groups by model (bayeserr.stats.ranking)
    groups_note: str | None = None  #: why letter groups are not shown, when they are not
    ranking: object = None  #: :class:`~bayeserr.analyses.ranking.Ranking`, with two models or more
    suite: object = None  #: :class:`~bayeserr.analyses.suite.Suite`, with two tasks or more
    per_task: tuple = ()  #: (task, Scores, Comparisons) for each task of a suite
    task_groups: object = None  #: :class:`~bayeserr.analyses.groups.GroupScores` (lm-eval groups)
    judge: object = None  #: :class:`~bayeserr.analyses.judge.Judge`, when answers carry human labels

    def to_dict(self) -> dict:
        """The JSON object (``docs/methods.md`` §7.2; JSON Schema in
        ``bayeserr/schema/report-2.json``); NaN becomes ``null``."""
        return to_jsonable({
            "schema": SCHEMA,
            "level": self.level,
            "provenance": self.provenance,
            "columns": self.columns,
            "rows": self.rows,
            "models": [{**m.to_dict(), "group": None if self.groups is None else self.groups.get(m.model)}
                       for m in self.scores],
            "comparisons": [c.to_dict() for c in select_pairs(self.comparisons, self.scores, self.pairs,
                                                               for_json=True)],
            "adjustment": None if self.comparisons.family is None else self.comparisons.family.to_dict(),
            "ranking": None if self.ranking is None else self.ranking.to_dict(),
            "tie_zone": self.tie_zone,
            "warnings": [w.to_dict() for w in self.warnings],
            "pass_at_k": None if not self.pass_at_k else {
                str(k): {"models": s.to_dict(), "comparisons": c.to_dict()}
                for k, (s, c) in self.pass_at_k.items()},
            **({} if self.suite is None else {"suite": self.suite.to_dict()}),
            **({} if not self.per_task else {"per_task": [
                {"task": t, "models": s.to_dict(), "comparisons": c.to_dict()} for t, s, c in self.per_task]}),
            **({} if self.task_groups is None else {"task_groups": self.task_groups.to_dict()}),
            **({} if self.judge is None else {"judge": self.judge.to_dict()}),
        })

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


#: output formats of a report: name -> Report method


def _tie_zone(scores: Scores, comps: Comparisons, level: float) -> dict:
    """Unpaired tie zone at the pooled mean score and median n; paired: the
    median over pairs of ``z · sd(d)/√n`` (§3.7) — both for one pair alone.
    From the report's decisions: the largest gap not declared different and
    the smallest declared different (the resolution the report achieved)."""
    p = float(np.mean([m.mean for m in scores]))
    n = float(np.median([m.n_questions for m in scores]))
    paired = [c.se_paired for c in comps if math.isfinite(c.se_paired)]
    fam = comps.family
    members = comps if fam is None else [comps[int(k)] for k in fam.rows]
    same = [c for c in members if not c.different and math.isfinite(c.diff)]
    apart = [c for c in members if c.different]

    def gap(cs, pick):
        if not cs:
            return None
        c = pick(cs, key=lambda c: (abs(c.diff), c.a, c.b))
        return {"a": c.a, "b": c.b, "diff": abs(c.diff)}

    return {"unpaired": tie_zone(p, n, level),
            "paired_median": float(z_value(level) * np.median(paired)) if paired else None,
            "largest_not_different": gap(same, max), "smallest_different": gap(apart, min)}


def _ranked(view: DataView, options: Options, keep_fits: bool):
    """Scores sorted best first, and the view in that order."""
    scores, batch = score_view(view, options, keep_fits=keep_fits)
    position = {m: j for j, m in enumerate(view.models)}
    order = [position[m] for m in ranked_names(view)]  # one ordering for the report and compare_all
    fits = {view.models[j]: batch.fits.get(j, {}) for j in order} if keep_fits else None
    return Scores([scores[j] for j in order]), view.select([view.models[j] for j in order]), fits, batch.notes


def _per_task(view: DataView, options: Options) -> tuple:
    """Each task's scores and comparisons, as the report's (the models with two answered
    questions in the task; the closed-form Bayesian intervals of --bayes fast even under
    mcmc, so a suite of T tasks does not sample T more times)."""
    from dataclasses import replace
    bayes = options.bayes if options.bayes.mode != "mcmc" else replace(options.bayes, mode="fast")
    # Holm without joint draws, and no wild-bootstrap second opinion: T tasks would otherwise
    # cost T reports (the suite's own numbers and the main tables keep the full treatment)
    task_options = replace(options, bayes=bayes, prior_sensitivity=False, pass_k=(), adjust="holm")
    out = []
    for task in sorted(set(view.tasks)):
        sub = view.questions_where(view.tasks == task)
        keep = [m for m, k in zip(sub.models, sub.answered.sum(axis=1)) if k >= 2]
        if not keep:  # a task of one question: no model has a standard error there
            continue
        scores, sub, _, _ = _ranked(sub.select(keep), task_options, False)
        comps = (compare_view(sub, task_options, second_opinion=False, joint=False) if len(scores) > 1
                 else Comparisons())
        out.append((str(task), scores, comps))
    return tuple(out)


def _pass_at_k(view: DataView, options: Options) -> dict:
    """Per-problem pass@k scored and compared like any other score (§6)."""
    from dataclasses import replace

    from bayeserr.stats.passk import pass_at_k
    # the report's settings, but no posteriors kept: pass@k values are fractional scores with one
    # value per problem, so the Bayesian intervals are the cheap ones (bootstrap, cluster effect)
    pk_options = replace(options, prior_sensitivity=False)
    n, c = view.pass_counts()
    have = n > 0
    out = {}
    for k in options.pass_k:
        values = np.full(n.shape, np.nan)
        values[have] = pass_at_k(n[have], c[have], int(k))
        scores, pk_view, _, _ = _ranked(view.with_scores(values), pk_options, False)
        comps = compare_view(pk_view, pk_options) if len(scores) > 1 else Comparisons()
        out[int(k)] = (scores, comps)
    return out


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
            more = f" and {len(models) - 20} more" if len(models) > 20 else ""
            raise InputError(f"--pairs {pairs}: '{base}' is not a model of the report."
                             f"{suggest(base, models)} Models: {', '.join(list(models)[:20])}{more}.")


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
    _check_pairs_option(options.pairs, view.models)
    check_pair_memory(len(view.models))  # fail at once, before any work, if the pairs cannot fit
    scores, view, fits, notes = _ranked(view, options, keep_fits=options.bayes.on)
    comps = compare_view(view, options, ranking=True) if len(scores) > 1 else Comparisons()
    ranking = rank_view(view, comps, options) if len(scores) > 1 else None
    sensitivity = ()
    if options.bayes.on and options.prior_sensitivity:
        from bayeserr.bayes.priors import prior_sensitivity
        sensitivity = tuple(prior_sensitivity(scores, level=options.level))
    warnings = _caveats.look_alike_names(view.models) + [w for m in scores for w in m.caveats]
    warnings += pair_caveats(comps, view.clustered) + notes
    warnings += _caveats.early_stopped(view.rows)  # a log stopped by a sequential rule
    if view.clustered and any(m.binary for m in scores):
        warnings.append(_caveats.Caveat(
            "exact_not_cluster_aware", None, "Wilson, Clopper–Pearson, Jeffreys and Agresti–Coull (in the "
            "JSON, and as columns with --methods all) assume independent questions; with clusters read "
            "their 'n_eff' versions."))
    groups, groups_note = _groups(scores, comps)
    if comps.family is not None and comps.family.draws.min_p >= 1 - options.level:
        warnings.append(_caveats.family_cannot_decide(comps.family.to_dict()))
    return Report(source=view.source, level=options.level, columns=view.columns, rows=view.rows,
                  scores=scores, comparisons=comps, tie_zone=_tie_zone(scores, comps, options.level),
                  warnings=tuple(warnings), cluster_correction=options.cluster_correction,
                  adjust=options.adjust, bayes=options.bayes if options.bayes.on else None,
                  prior_sensitivity=sensitivity, posteriors=fits,
                  pass_at_k=_pass_at_k(view, options) if options.pass_k else None,
                  provenance=provenance(inputs, command, options.seed, config), methods=options.methods,
                  pairs=options.pairs, groups=groups, groups_note=groups_note, ranking=ranking,
                  suite=(suite := _suite(view, options)),
                  per_task=() if suite is None or view.tasks is None else _per_task(view, options),
                  task_groups=group_scores(view, task_groups, options.level) if task_groups else None,
                  judge=judge)


def _suite(view: DataView, options: Options):
    """The Suite section: the data's tasks, or the clusters read as fixed strata (``--clusters-as``)."""
    if options.cluster_reading == "strata":
        from bayeserr.analyses.suite import strata_suite
        return strata_suite(view, options.level)
    return suite_view(view, options.level, options.task_weights)


#: letter groups are replaced by a sentence when a model would carry more letters than this
MAX_LETTERS_PER_MODEL = 4


def _groups(scores, comps) -> tuple[dict | None, str | None]:
    """Letter groups from the report's decisions, or why they are not shown:
    they need every pair decided (the all-pairs family), and they carry no
    information when one group holds every model or a model needs many letters."""
    if not len(comps):
        return None, None
    if comps.family is not None and comps.family.family != "all":
        return None, (f"Letter groups need every pair decided; this report's family is the pairs with "
                      f"{comps.family.family[3:]} (--pairs {comps.family.family}).")
    from bayeserr.stats.ranking import differs_matrix, letters_needed
    names = [m.model for m in scores]
    at_least = letters_needed(differs_matrix(names, comps))
    if at_least > MAX_LETTERS_PER_MODEL:  # cannot be read: not built (docs/methods.md §7.1)
        return None, (f"Letter groups are not shown: a model would carry at least {at_least} letters, which "
                      "cannot be read; the rank intervals and the pair verdicts say the same more plainly.")
    groups, complete = report_groups(names, comps)
    if not complete:
        return None, ("Letter groups are not shown: the pairs declared different and not different "
                      "overlap in too many ways (more than 52 groups); the ranking and the verdicts "
                      "say which models can be told apart.")
    if not any(c.different for c in comps):
        return None, ("Letter groups are not shown: no pair is declared different, so every model "
                      "would share one letter.")
    most = max(len(v) for v in groups.values())
    if most > MAX_LETTERS_PER_MODEL:
        return None, (f"Letter groups are not shown: a model would carry {most} letters, which cannot "
                      "be read; the rank intervals and the pair verdicts say the same more plainly.")
    return groups, None


def build_report(ds, *, options: Options | None = None, inputs=None, command: str | None = None,
                 config=None, engine: str = "memory", **kwargs) -> Report:
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

    ``engine="stream"`` (or ``"dask"``) takes the path of Parquet results (a file, folder,
    glob pattern or hive-partitioned dataset) instead of a dataset and builds
    the report from sufficient statistics in bounded memory
    (:func:`bayeserr.reporting.build.stream_report`; ``docs/guide/scale.md``).
    """
    from bayeserr.base.errors import InputError, describe
    if engine != "memory":
        return _engine_report(ds, engine, options, inputs, command, config, kwargs)
    options = Options.coerce(options, **kwargs)
    if command is not None and not isinstance(command, str):
        raise InputError(f"command takes text (the command line recorded in the provenance); got "
                         f"{describe(command)}.")
    inputs = None if inputs is None else _check_inputs(inputs)
    if inputs is None and isinstance(ds, xr.Dataset) and "inputs" in ds.attrs:
        inputs = list(ds.attrs["inputs"])  # every input load() read
    if inputs is None:
        source = Path(str(ds.attrs.get("source", ""))) if isinstance(ds, xr.Dataset) else None
        inputs = [source] if source is not None and str(source) and source.exists() else []
    if not isinstance(ds, xr.Dataset):  # a DataFrame is loaded; anything else fails here, before it is read
        ds = check_dataset(ds)
    view = DataView.from_dataset(ds)  # (checks a Dataset once)
    judge = judge_results(ds, level=options.level) if "human" in ds.data_vars else None
    rep = build_report_view(view, options, inputs=inputs, command=command, config=config,
                            task_groups=task_groups(ds) or None, judge=judge)
    if judge is not None and judge.warnings:  # in the Warnings section and the JSON's warnings, as every caveat
        from dataclasses import replace
        rep = replace(rep, warnings=rep.warnings + tuple(_caveats.Caveat("judge_labels", None, w)
                                                         for w in judge.warnings))
    return rep


def _engine_report(source, engine, options, inputs, command, config, kwargs) -> Report:
    """``build_report(path, engine="stream")``: column options (``model_col``, …)
    go to the reader, the rest to :class:`Options`."""
    import os

    from bayeserr.base.errors import InputError, describe
    from bayeserr.reporting.scale import STREAM_LOAD
    if engine not in ("stream", "dask"):
        raise InputError(f"engine must be 'memory', 'stream' or 'dask'; got {engine!r}.")
    ok = isinstance(source, (str, os.PathLike)) or (
        isinstance(source, (list, tuple)) and source and all(isinstance(s, (str, os.PathLike)) for s in source))
    if not ok:
        raise InputError(f"engine='{engine}' reads Parquet files: give a path (a file, folder, glob pattern or "
                         f"hive-partitioned dataset) or a list of them; got {describe(source)}. A loaded "
                         "dataset is already in memory: use the default engine.")
    load = {k: kwargs.pop(k) for k in list(kwargs) if k in STREAM_LOAD}
    if engine == "dask":
        cluster = {k: kwargs.pop(k) for k in list(kwargs) if k in DASK_CLUSTER}
        return dask_report(source, options=Options.coerce(options, **kwargs), inputs=inputs, command=command,
                           config=config, load=load, **cluster)
    return stream_report(source, options=Options.coerce(options, **kwargs), inputs=inputs, command=command,
                         config=config, load=load)


#: the dask engine's cluster options (``build_report(path, engine="dask", workers=2)``)
DASK_CLUSTER = ("scheduler", "workers", "worker_memory", "progress", "tmp_dir")


def dask_report(source, *, options: Options | None = None, inputs=None, command=None, config=None,
                load=None, scheduler=None, workers=None, worker_memory="4GiB", tmp_dir=None,
                progress: bool = True, **kwargs) -> Report:
    """``bayeserr report SOURCE --engine dask``: the statistics of Parquet
    results on a dask.distributed cluster (:func:`bayeserr.stats.dask_engine.reduce_dask`:
    ``scheduler`` an address or a ``distributed.Client``, else a LocalCluster of
    ``workers`` × ``worker_memory``), then :func:`report_from_sufficient`."""
    from bayeserr.stats.dask_engine import reduce_dask
    options = Options.coerce(options, **kwargs)
    result = reduce_dask(source, scheduler=scheduler, workers=workers, worker_memory=worker_memory,
                         tmp_dir=tmp_dir, progress=progress, **(load or {}))
    return report_from_sufficient(result, options, engine="dask",
                                  inputs=result.inputs if inputs is None else inputs, command=command,
                                  config=config)


def report_from_sufficient(result, options: Options, *, engine: str = "stream", inputs=(), command=None,
                           config=None) -> Report:
    """The :class:`Report` of an engine's sufficient statistics
    (:class:`~bayeserr.stats.stream.StreamResult`): every number that is
    a function of the sums, through the in-memory report's code
    (:func:`bayeserr.reporting.scale.sufficient_sections`); the sections that
    need per-question data are listed in the warnings as not available."""
    from bayeserr.reporting.scale import sufficient_sections
    _check_pairs_option(options.pairs, result.stats.models)
    options, scores, comps, ranking, warnings = sufficient_sections(result, options, engine=engine)
    groups, groups_note = _groups(scores, comps)
    return Report(source=result.source, level=options.level, columns=result.columns, rows=result.rows,
                  scores=scores, comparisons=comps, tie_zone=_tie_zone(scores, comps, options.level),
                  warnings=tuple(warnings), cluster_correction=options.cluster_correction,
                  adjust=options.adjust, bayes=None, provenance=provenance(inputs, command, options.seed, config),
                  methods=options.methods, pairs=options.pairs, groups=groups, groups_note=groups_note,
                  ranking=ranking)


def stream_report(source, *, options: Options | None = None, inputs=None, command=None, config=None,
                  load=None, tmp_dir=None, progress: bool = True, **kwargs) -> Report:
    """``bayeserr report SOURCE --engine stream``: the statistics of Parquet
    results in bounded memory (:func:`bayeserr.stats.stream.reduce_parquet`),
    then :func:`report_from_sufficient`.  ``load``: the column options
    (``model_col``, ``question_col``, ``score_col``, ``cluster_col``,
    ``sample_col``, ``task_col``, ``no_cluster``)."""
    from bayeserr.stats.stream import reduce_parquet
    options = Options.coerce(options, **kwargs)
    result = reduce_parquet(source, tmp_dir=tmp_dir, progress=progress, **(load or {}))
    return report_from_sufficient(result, options, engine="stream",
                                  inputs=result.inputs if inputs is None else inputs, command=command,
                                  config=config)


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
    if family not in ("report", "pair"):
        raise InputError(f"family must be 'report' or 'pair' (got {family!r}).")
    a, b = pair_names(a, b)
    full = DataView.from_dataset(ds)
    view = full.select([a, b])
    comps = compare_view(view, options)
    if not len(comps):
        raise InputError(f"'{a}' and '{b}' share {comps.skipped[0][2]} question(s); a paired "
                         "comparison needs at least 2.")
    c = comps[0]
    scores, _ = score_view(view, Options.coerce(options, bayes="off"))
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
        if post.diagnostics:
            warnings += [_caveats.Caveat("mcmc_diagnostics", None, p) for p in problems(post.diagnostics)]
    settings = {k: v for k, v in provenance(config=config).items() if k.startswith("config")} or None
    return ComparisonReport(c, scores, full.rows, tuple(warnings), options.level, post, settings, verdict)
