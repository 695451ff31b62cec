"""Readers for real evaluation logs, so nobody converts by hand.

Each reader turns logs into the long results table of ``docs/methods.md`` §1
(``model``, ``question_id``, ``score``, optional ``cluster_id`` and ``sample``) which
:func:`bayeserr.load` then validates like any other file.  Registered by name in
:data:`~bayeserr.data.readers.registry.READERS`, each with the options it takes;
:func:`~bayeserr.data.readers.registry.detect` picks one from the path.

Modules: :mod:`.registry` (the readers and the one dispatch), :mod:`.options` (their options,
declared once),
:mod:`.inspect_logs` (Inspect AI logs and folders), :mod:`.archive` (``.eval`` archives
read with bounded memory), :mod:`.lmeval` (lm-evaluation-harness samples),
:mod:`.runs` (log files, runs and re-runs, for every log reader), :mod:`.values` (score
values, ids, names and metadata fields); plain tables are :mod:`bayeserr.data.tables`.

* ``inspect`` — Inspect AI logs: ``.eval`` archives (zip; deflate or the
  zstd compression newer Inspect writes) and ``.json`` logs, a file or a
  folder of them.  One row per sample and epoch (epoch = sample index);
  model from the log header; score from one scorer (default the first),
  with Inspect's value mapping (C = 1, I = 0, P = 0.5, N = 0, yes/true = 1,
  no/false = 0, numbers as they are); a metadata field as cluster: the one
  named (``--cluster-field``), else the one the logs' own metrics cluster by
  (``ci_clustered(cluster="repo")``, ``ci_hierarchical``, Inspect's
  ``stderr(cluster=...)``: :data:`~bayeserr.data.readers.inspect_logs.CLUSTER_METRICS`, read from the log header),
  so the report's intervals are the log's; a note says which (see
  :func:`~bayeserr.data.readers.inspect_logs.read_inspect`).  Every row carries the ``task``; sample metadata
  fields asked for by name (``fields``, e.g. the columns of ``--where``;
  ``metadata.x`` or ``x``, dotted paths into nested objects) become columns
  of their own.  ``human_scorer`` names a second scorer whose value is a
  human label of the answer (column ``human``, converted like the score;
  NaN where a sample has no score from it).

  **Question ids are always ``"<task>/<sample id>"``** (the task is the
  log header's ``eval.task``, e.g. ``popularity/3`` or
  ``inspect_evals/mmlu_0_shot/17``).  Inspect numbers the samples of every
  task from 1, so bare ids would "pair" sample 3 of one task with sample 3
  of another; namespaced ids pair models only on the same task, and models
  that share no task share no questions.  The ids do not depend on what
  else is in the folder.
* ``lm-eval`` — lm-evaluation-harness ``--log_samples`` output
  (``samples_<task>_<date>.jsonl``), a file or an output folder with one
  subfolder per model; question ids ``"<task>/<doc_id>"``, rows keyed on
  ``(doc_id, filter)``; one metric; every row carries the ``task`` (the leaf
  task); lm-eval's task groups (``group_subtasks`` of the ``results_*.json``
  beside the samples, with its published group scores) go to
  ``df.attrs["task_groups"]`` (see :func:`~bayeserr.data.readers.lmeval.read_lmeval`).
* ``table`` — CSV / TSV / JSONL / Parquet results tables (the default);
  ``csv``, ``tsv``, ``jsonl`` and ``parquet`` name the table format
  explicitly (needed for standard input, ``-``, when sniffing is not enough).

**Re-runs.**  Two logs of the same task with the same model whose samples
overlap (same question and epoch) are two runs of one evaluation.  With
``duplicate_runs="error"`` (default) that is an error naming the files;
with ``duplicate_runs="latest"`` the newest run is kept (Inspect: header
``eval.created``; lm-eval: the date in the file name; ties broken by file
name), and every older run that overlaps a kept one is dropped whole and
counted in the row accounting with a reason naming its file and the run
kept; when the kept run lacks some of its samples (a newer partial re-run
over a complete run), the reason also gives each run's sample count and how
many samples are lost.  Logs of the same task and model on disjoint samples
(a run split in parts) are simply read together.  Unscored logs are set
aside first, so a crashed re-run never hides a finished one.

**Limits.**  Before anything is inflated, an ``.eval`` archive whose
central-directory entries overlap (two entries sharing compressed bytes: the
zip-bomb construction, never written by Inspect) is refused, and so are
members read that declare more than :data:`~bayeserr.data.readers.archive.MAX_MEMBER_BYTES` each or
:data:`~bayeserr.data.readers.archive.MAX_ARCHIVE_BYTES` together, a member over :data:`~bayeserr.data.readers.archive.RATIO_FREE_BYTES`
that declares more than :data:`~bayeserr.data.readers.archive.MAX_RATIO` times its compressed size, and
members that together declare more than :data:`~bayeserr.data.readers.archive.MAX_RATIO` times the file's
size (beyond :data:`~bayeserr.data.readers.archive.ARCHIVE_RATIO_FREE_BYTES`); real logs compress about 5:1.
Members are then stream-decompressed in 1 MiB steps and never inflate past
the size their entry declares (a zstd frame header that claims more is
ignored), and each is decoded to text and its bytes freed before the JSON is
parsed, so a member costs about twice its size in memory at its peak.  Model
and task names longer than :data:`~bayeserr.data.readers.values.MAX_NAME_CHARS` are refused (every row
carries them).  Damaged, encrypted or oddly compressed members, and malformed
samples, are :class:`~bayeserr.base.errors.InputError` naming the file and the
member (or line), never tracebacks.
"""

# the public names, each from its module, imported on first use: the command line reads the
# reader registry and options without importing the readers (and pandas)
from bayeserr.base.lazy import lazy_names

_HOMES = {
    "archive": ("DamagedArchive",),
    "inspect_logs": ("CLUSTER_METRICS", "EARLY_STOP_NOTE", "IN_PROGRESS_NOTE", "PARTIAL_RULE", "NotALog",
                     "PartialLog", "UnfinishedLog", "UnscoredLog", "read_inspect"),
    "lmeval": ("finish_task_groups", "read_lmeval"),
    "registry": ("READERS", "INPUT_FORMATS", "STDIN", "TABLE_FORMATS", "check_input_format", "detect",
                 "read_logs"),
    "runs": ("folder_inputs",),
    "values": ("id_text", "inspect_value_to_float"),
}
__all__, __getattr__ = lazy_names(__name__, _HOMES)
