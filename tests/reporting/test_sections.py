"""The report's sections are one registry: a registered section reaches the JSON, Markdown,
HTML and LaTeX of every engine, becomes the not-at-scale warning where the engine cannot
compute it, and its JSON keys are those the shipped schema describes."""

import json
from importlib.resources import files

import pandas as pd
import pytest

import bayeserr
from bayeserr.reporting import document as doc
from bayeserr.reporting import sections
from bayeserr.reporting.build import build_report

from ..conftest import validate_report


def _counts(src, done, options):
    if not src.per_question:
        return sections.NotAvailable("the question counts", "the engine keeps sums")
    return {m.model: m.n_questions for m in done["models"].scores}


COUNTS = sections.Section(
    "counts", "Questions", _counts,
    blocks=lambda counts, rep, layout: [doc.Heading("Questions"),
                                        doc.Para("Questions per model: " + ", ".join(f"{m}={n}" for m, n
                                                                                      in counts.items()), "note")],
    json=lambda counts, rep: {} if counts is None else {"counts": counts},  # the docs example, as written
    json_keys=("counts",), position=105)


@pytest.fixture
def counts_section():
    sections.register(COUNTS)
    try:
        yield COUNTS
    finally:
        sections.SECTIONS.pop(COUNTS.key)


def _schema_keys() -> set:
    return set(json.loads((files("bayeserr.schema") / "report-2.json").read_text())["properties"])


def test_the_shipped_schema_describes_exactly_the_registered_sections_keys():
    keys = set(sections.HEAD_KEYS) | {k for s in sections.SECTIONS.values() for k in s.json_keys}
    assert keys == _schema_keys()


def test_each_section_writes_only_the_json_keys_it_declares(tmp_path):
    rep = bayeserr.report(bayeserr.load(bayeserr.examples.example_path()), bayes="off")
    out = rep.to_dict()
    for s in sections.SECTIONS.values():
        if s.json is not None:
            assert set(s.json(rep.sections.get(s.key), rep)) <= set(s.json_keys), s.key
    assert list(out)[:len(sections.HEAD_KEYS)] == list(sections.HEAD_KEYS)


def test_a_registered_section_reaches_every_format(counts_section):
    rep = bayeserr.report(bayeserr.load(bayeserr.examples.example_path()), bayes="off")
    n = {m.model: m.n_questions for m in rep.scores}
    assert rep.sections["counts"] == n
    out = validate_report(rep.to_dict())
    assert out["counts"] == n
    assert counts_section.key not in _schema_keys()  # so the schema test above would fail: it must be added
    line = "Questions per model: " + ", ".join(f"{m}={k}" for m, k in n.items())
    md, html, tex = rep.to_markdown(), rep.to_html(figures=False), rep.to_latex()
    assert "## Questions" in md and line in md
    assert md.index("## Pairwise comparisons") < md.index("## Questions") < md.index("## Tie zone")
    assert line in html
    assert f"% {line}" in tex


def test_a_section_the_engine_cannot_compute_is_a_not_at_scale_warning(counts_section, tmp_path):
    path = tmp_path / "ex.parquet"
    pd.read_csv(bayeserr.examples.example_path()).to_parquet(path)
    rep = build_report(path, engine="stream", bayes="off", progress=False)
    assert isinstance(rep.sections["counts"], sections.NotAvailable)
    notes = [w.message for w in rep.warnings if w.code == "not_at_scale"]
    assert notes == ["Not available with --engine stream: the question counts — the engine keeps sums. Run --engine "
                     "memory on the data, or on a sample of its questions, for it."]
    assert len(notes) == 1 and rep.sections["reliability"] is not None  # pass^k from the engine's run table
    assert "counts" not in rep.to_dict() and "Questions per model" not in rep.to_markdown()


def test_sections_are_shown_in_the_order_of_their_positions():
    rep = bayeserr.report(bayeserr.load(bayeserr.examples.example_path()), bayes="off")
    heads = [b.text for b in sections.report_blocks(rep) if isinstance(b, doc.Heading) and b.level == 2]
    assert heads == ["Models", "Ranking", "Pairwise comparisons", "Reliability over repeated runs (pass^k)",
                     "Tie zone", "Warnings", "Rows"]  # the example runs every question three times


def test_latex_shows_every_section_it_has_tables_for(cli):
    """pass@k reaches the LaTeX tables (captioned with its k), and a pairs table showing a
    subset says so under the table, not only in a comment."""
    ex = bayeserr.examples.example_path()
    tex = cli("report", ex, "--pass-k", "1", "--bayes", "off", "--pairs", "adjacent", "--format", "latex").output
    assert r"\caption{pass@1 (unbiased estimator, per problem). Scores" in tex
    assert tex.count(r"\toprule") == 6  # models, ranking, pairs; pass@1 models and pairs; pass^k by model
    note = "Showing 3 of 6 pairs (neighbours in the ranking); -{}-pairs all prints every pair"
    assert note in tex and "% Showing 3 of 6" not in tex


def test_an_engine_reading_parquet_names_the_fix_for_a_csv(cli):
    res = cli("report", bayeserr.examples.example_path(), "--engine", "stream")
    assert res.exit_code == 2 and "reads Parquet results" in res.output and "to_parquet" in res.output
