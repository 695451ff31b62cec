"""Issue 22, items 5 and 6: the pairs and posterior figures never hide,
mislabel or write an empty file.

* pairs: every pair of the report's table up to ``MAX_PAIRS`` (55 of 55
  neighbours on a 56-model input, not 40), the figure says which pairs it
  draws, of how many, and how to see the rest; a legend names every colour;
  long model names are cut with an ellipsis (kept distinct) so the plot keeps
  most of the width.
* posterior: the quantity the table reports (the score's estimand, the
  'Hierarchical posterior' column — not μ), the models left out named on the
  figure, and nothing to draw is an InputError (``bayeserr plot`` exits 2 and
  writes no file), never a figure that says so.

Figures are checked through their matplotlib objects, not pixels.
"""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from matplotlib.colors import to_hex

import bayeserr
from bayeserr.base.errors import InputError
from bayeserr.examples import example_path
from bayeserr.renderers import plots

from ..conftest import real_file


# ------------------------------------------------------------------ inputs
def binary_frame(n_models: int, n_questions: int = 40, n_clusters: int | None = 8, seed: int = 0,
                 name=lambda i: f"model-{i:02d}") -> pd.DataFrame:
    """0/1 answers (on clustered questions unless ``n_clusters`` is None),
    accuracies spread from 30% to 90%."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n_models):
        p = 0.3 + 0.6 * i / max(n_models - 1, 1)
        for q in range(n_questions):
            rows.append({"model": name(i), "question_id": f"q{q}", "score": float(rng.random() < p),
                         **({} if n_clusters is None else {"cluster_id": f"c{q % n_clusters}"})})
    return pd.DataFrame(rows)


def fractional_frame(n_models: int = 3, n_questions: int = 30, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame([{"model": f"judge-{i}", "question_id": f"q{q}", "score": float(rng.random())}
                         for i in range(n_models) for q in range(n_questions)])


@pytest.fixture(scope="module")
def rep56():
    """56 models: 1,540 pairs, 55 neighbours in the ranking (AlpacaEval's shape)."""
    return bayeserr.report(bayeserr.load(binary_frame(56, n_questions=30, n_clusters=None)), bayes="off")


def _texts(fig) -> str:
    """Every piece of text on a figure: titles, notes, legends, axis labels."""
    out = [t.get_text() for t in fig.texts]
    for ax in fig.axes:
        out += [ax.get_title(), ax.get_xlabel(), *(t.get_text() for t in ax.texts)]
        legend = ax.get_legend()
        if legend is not None:
            out += [t.get_text() for t in legend.get_texts()]
    for legend in fig.legends:
        out += [t.get_text() for t in legend.get_texts()]
    return " ".join(" ".join(out).split())  # wrapped lines read as one text


def _ticks(ax) -> list[str]:
    return [t.get_text() for t in ax.get_yticklabels()]


# ------------------------------------------------------------------ item 5: pairs
def test_pairs_figure_draws_all_55_neighbours_and_says_which(rep56):
    fig = plots.pairs(rep56)
    ticks = _ticks(fig.axes[0])
    assert len(ticks) == 55  # all of the table's pairs, not the first 40
    text = _texts(fig)
    assert "Drawn: the 55 neighbours in the ranking, of 1,540 pairs." in text
    assert "--pairs vs=MODEL" in text and "--format json" in text and "--pairs all" in text
    assert fig.get_figheight() <= plots.MAX_HEIGHT


def test_pairs_figure_says_so_when_it_cuts(rep56, monkeypatch):
    monkeypatch.setattr(plots, "MAX_PAIRS", 10)
    fig = plots.pairs(rep56)
    assert len(_ticks(fig.axes[0])) == 10
    assert "Drawn: the first 10 of the 55 neighbours in the ranking (ranking order), of 1,540 pairs." \
        in _texts(fig)


def test_pairs_figure_follows_the_pairs_option():
    ds = bayeserr.load(example_path())
    rep = bayeserr.report(ds, bayes="off", pairs="adjacent")
    fig = plots.pairs(rep)
    assert len(_ticks(fig.axes[0])) == 3
    assert "Drawn: the 3 neighbours in the ranking, of 6 pairs. --pairs all draws all 6." in _texts(fig)
    base = rep.scores[0].model
    rep = bayeserr.report(ds, bayes="off", pairs=f"vs={base}")
    fig = plots.pairs(rep)
    assert all(base in t for t in _ticks(fig.axes[0])) and len(_ticks(fig.axes[0])) == 3
    assert f"the 3 pairs with {base}" in _texts(fig)
    assert "All 6 pairs." in _texts(plots.pairs(bayeserr.report(ds, bayes="off")))


def test_pairs_figure_has_a_legend_for_every_colour(rep56):
    demo = bayeserr.report(bayeserr.load(example_path()), bayes="off")
    assert any(c.different for c in demo.comparisons) and not all(c.different for c in demo.comparisons)
    for rep in (demo, rep56):
        fig = plots.pairs(rep)
        ax = fig.axes[0]
        drawn = {to_hex(ln.get_color()) for ln in ax.lines}  # intervals, dots and the zero line
        legend = ax.get_legend()
        assert legend is not None
        named = {to_hex(h.get_color()) for h in legend.legend_handles}
        assert drawn <= named, drawn - named
        labels = [t.get_text() for t in legend.get_texts()]
        assert any(lab.startswith("declared different (Romano–Wolf") for lab in labels)
        assert "not declared different" in labels
        fig.draw_without_rendering()  # the legend sits above the plot, off the intervals
        assert legend.get_window_extent().y0 >= ax.get_window_extent().y1 - 1


def test_short_names_cut_with_an_ellipsis_and_stay_distinct():
    names = [f"organisation-{x}-very-long-model-name-{v}-instruct-2024-0{d}"
             for x in ("a", "b") for v in ("7b", "70b") for d in (1, 2)]
    short = plots.short_names(names, 16)
    assert len(set(short.values())) == len(names)
    assert all("…" in s for s in short.values())
    assert all(len(s) < len(n) for n, s in short.items())
    assert plots.short_names(["gpt-4o", "o1"], 16) == {"gpt-4o": "gpt-4o", "o1": "o1"}  # short names kept


def test_pairs_figure_keeps_the_plot_wide_with_long_names():
    long = binary_frame(30, n_questions=24, n_clusters=None, seed=2, name=lambda i: (
        f"coding2-amcfull-apifull-mmlu12k-meta-llama-3.1-70b-instruct-chk-{50 * (i + 1)}-{i % 3}"))
    rep = bayeserr.report(bayeserr.load(long), bayes="off")
    fig = plots.pairs(rep)
    fig.draw_without_rendering()
    ax = fig.axes[0]
    ticks = _ticks(ax)
    assert len(ticks) == 29 and len(set(ticks)) == 29 and all("…" in t for t in ticks)
    assert ax.get_position().width >= 0.5  # the plot, not the labels, has most of the width


def test_livebench_pairs_figure_shows_every_neighbour_with_a_wide_plot():
    path = real_file("livebench_20250113_per_question.csv.gz")
    rep = bayeserr.report(bayeserr.load(path), bayes="off", on_unpaired="drop")
    shown, _ = plots._shown_pairs(rep)
    order = {s.model: i for i, s in enumerate(rep.scores)}
    neighbours = [c for c in rep.comparisons if abs(order[c.a] - order[c.b]) == 1]
    assert shown == neighbours and len(shown) > 40  # 89 of 89, not 40 of 89
    fig = plots.pairs(rep)
    fig.draw_without_rendering()
    ax = fig.axes[0]
    assert len(set(_ticks(ax))) == len(shown)
    assert ax.get_position().width >= 0.45  # was about 0.2
    # the neighbours that are no pair of the report (fewer than two common questions) are named
    gaps = [(a, b) for a, b, _ in rep.comparisons.skipped if abs(order[a] - order[b]) == 1]
    assert len(shown) + len(gaps) == len(rep.scores) - 1 and gaps  # LiveBench: 89 + 3 of 92
    assert (f"Drawn: the {len(shown)} neighbours in the ranking, of {len(rep.comparisons):,} pairs "
            f"({len(gaps)} neighbouring pairs share fewer than two questions: not compared).") in _texts(fig)


# ------------------------------------------------------------------ item 6: posterior
def _ridges(ax):
    """(x, density) of each drawn ridge, top to bottom."""
    lines = [ln for ln in ax.lines if len(ln.get_xdata()) > 2]
    return [(np.asarray(ln.get_xdata()), i - np.asarray(ln.get_ydata())) for i, ln in enumerate(lines)]


def _quantiles(x, d, q):
    c = np.concatenate([[0.0], np.cumsum((d[1:] + d[:-1]) / 2 * np.diff(x))])
    return np.interp(q, c / c[-1], x)


def _bars(ax):
    """The black posterior-interval bars, top to bottom (points)."""
    return [tuple(ln.get_xdata()) for ln in ax.lines
            if len(ln.get_xdata()) == 2 and to_hex(ln.get_color()) == "#000000"]


def test_swebench_posterior_is_centred_on_the_tables_score():
    path = real_file("swebench_verified_bashonly_per_instance.csv.gz")
    rep = bayeserr.report(bayeserr.load(path))
    fig = plots.posterior(rep)
    ax = fig.axes[0]
    ridges = _ridges(ax)
    assert len(ridges) == len(rep.scores)  # every model
    for s, (x, d), bar in zip(rep.scores, ridges, _bars(ax)):
        median = _quantiles(x, d, 0.5)
        assert abs(median - 100 * s.mean) < 0.6, (s.model, median, s.mean)  # μ was up to 5 points below
        table = 100 * np.asarray(s.intervals["hierarchical_posterior"])
        assert np.allclose(bar, table)  # the bar is the table's column
        assert np.allclose(_quantiles(x, d, [0.025, 0.975]), table, atol=0.5)  # and so is the density
    text = _texts(fig)
    assert "Posterior of each model's score" in text and "Not μ" in text
    assert "Hierarchical posterior column" in text and "the table's score" in text
    assert "the table's 95% interval (Clustered (CR2, t))" in text  # the interval beside it, named


def test_posterior_says_which_models_it_leaves_out_and_why():
    binary = binary_frame(3, n_questions=30, seed=3)
    frac = fractional_frame(2, n_questions=30)
    frac["cluster_id"] = [f"c{int(q[1:]) % 8}" for q in frac["question_id"]]
    rep = bayeserr.report(bayeserr.load(pd.concat([binary, frac], ignore_index=True)))
    fig = plots.posterior(rep)
    assert _ticks(fig.axes[0]) == ["model-02", "model-01", "model-00"]
    text = _texts(fig)
    assert "Drawn: 3 of 5 models. Not drawn: 2 models (judge-" in text
    assert "fractional scores" in text and "--kind forest shows every model" in text


def test_posterior_of_k_samples_matches_the_tables_interval():
    """Clusters and K = 2 (the three-level model): the score's posterior, as in the table."""
    rng = np.random.default_rng(4)
    rows = [{"model": f"m{i}", "question_id": f"q{q}", "cluster_id": f"c{q % 6}", "sample": k,
             "score": float(rng.random() < 0.3 + 0.25 * i)} for i in range(2) for q in range(30) for k in range(2)]
    rep = bayeserr.report(bayeserr.load(pd.DataFrame(rows)))
    assert all(type(rep.posteriors[s.model]["hierarchical"]).__name__ == "ThreeLevelPosterior"
               for s in rep.scores)
    ax = plots.posterior(rep).axes[0]
    for s, (x, d) in zip(rep.scores, _ridges(ax)):
        table = 100 * np.asarray(s.intervals["hierarchical_posterior"])
        assert np.allclose(_quantiles(x, d, [0.025, 0.975]), table, atol=0.6), (s.model, table)


def test_posterior_with_nothing_to_draw_is_an_input_error(tmp_path):
    rep = bayeserr.report(bayeserr.load(fractional_frame()))
    with pytest.raises(InputError, match=r"nothing to draw: .*fractional scores.* Fix: draw --kind forest"):
        plots.posterior(rep)
    blank = plots.figure(rep, "posterior")
    out = tmp_path / "p.png"
    with pytest.raises(InputError, match="nothing to draw"):
        plots.save(blank, out)
    assert not out.exists()
    assert plots.svg(blank).startswith('<p class="note">No figure: ')  # the HTML report's place for it
    off = bayeserr.report(bayeserr.load(example_path()), bayes="off")
    with pytest.raises(InputError, match="--bayes off.*Fix: run with --bayes fast"):
        plots.posterior(off)


def test_plot_posterior_with_nothing_to_draw_exits_2_and_writes_nothing(tmp_path, cli):
    data = tmp_path / "fractional.csv"
    fractional_frame().to_csv(data, index=False)
    out = tmp_path / "posterior.png"
    res = cli("plot", data, "--kind", "posterior", "-o", out)
    assert res.exit_code == 2, res.output
    assert "nothing to draw" in res.output and "Fix:" in res.output and "Traceback" not in res.output
    assert "wrote" not in res.output and not out.exists()
    res = cli("plot", example_path(), "--kind", "posterior", "--bayes", "off", "-o", out)
    assert res.exit_code == 2 and "--bayes fast" in res.output and not out.exists()
    res = cli("plot", example_path(), "--kind", "heatmap", "--bayes", "off", "-o", out)
    assert res.exit_code == 2 and "P(A > B)" in res.output and not out.exists()


def test_html_report_without_a_posterior_density_still_renders(tmp_path, cli):
    data = tmp_path / "fractional.csv"
    fractional_frame().to_csv(data, index=False)
    page = tmp_path / "r.html"
    res = cli("report", data, "--format", "html", "-o", page)
    assert res.exit_code == 0, res.output
    html = page.read_text()
    assert '<figure id="fig-posterior"><p class="note">No figure: no model has a posterior density' in html
    assert "no posterior to draw" not in html


def test_one_model_ranks_and_pairs_are_input_errors(tmp_path, cli):
    rep = bayeserr.report(bayeserr.load(binary_frame(1)), bayes="off")
    for kind in ("ranks", "pairs"):
        with pytest.raises(InputError, match="nothing to draw"):
            plots.FIGURES[kind](rep)
    data = tmp_path / "one.csv"
    binary_frame(1).to_csv(data, index=False)
    res = cli("plot", data, "--kind", "ranks", "--bayes", "off", "-o", tmp_path / "r.png")
    assert res.exit_code == 2 and "Traceback" not in res.output


def test_mcmc_fit_with_clusters_is_left_out_with_the_fix():
    """A NUTS fit keeps no cluster sizes, so W cannot be drawn from it: say so
    and how to draw it, rather than draw μ under the score's name."""
    rep = bayeserr.report(bayeserr.load(binary_frame(2, n_questions=24)))
    fake = SimpleNamespace(posterior={"mu": SimpleNamespace(values=np.full((1, 10), 0.5))})
    fits = {s.model: {"hierarchical": fake} for s in rep.scores}
    models = dataclasses.replace(rep.sections["models"], fits=fits)
    nuts = dataclasses.replace(rep, sections={**rep.sections, "models": models})
    with pytest.raises(InputError, match=r"--bayes mcmc fit with clusters.*Fix: run with --bayes fast"):
        plots.posterior(nuts)


def test_heatmap_says_what_a_white_cell_off_the_diagonal_is():
    """A pair without P(A > B) (here a model whose questions lie in one cluster) is a white
    cell, the colour map's P = 0.5: the title says what white means and how many pairs
    (LiveBench: 175 pairs, a white row and column with no word on them before)."""
    frame = binary_frame(4)
    frame = frame[~((frame["model"] == "model-03") & (frame["cluster_id"] != "c0"))]
    rep = bayeserr.report(bayeserr.load(frame), on_unpaired="drop")
    assert sum(not np.isfinite(c.prob_a_better) for c in rep.comparisons) == 3
    assert "white off the diagonal: no P(A > B) (3 pairs" in _texts(plots.heatmap(rep))
    full = bayeserr.report(bayeserr.load(binary_frame(4)))
    assert "white off the diagonal" not in _texts(plots.heatmap(full))
