"""The ranking's answer on real leaderboards (../shared/data/real): the set tied
with the best leaves out models far below the leader, and the report, `compare`
and the figures say the same (docs/methods.md §3.10)."""

import json

import matplotlib
import pytest

import bayeserr
from tests.conftest import real_file

matplotlib.use("Agg")

#: file, load options, points below the leader from which no model may be tied with the best
LEADERBOARDS = [
    ("swebench_verified_bashonly_per_instance.csv.gz", {}, 25.0),
    ("alpacaeval2_per_instruction.csv.gz", {"on_unpaired": "drop"}, 40.0),
]


@pytest.fixture(scope="module", params=LEADERBOARDS, ids=["swebench", "alpacaeval"])
def board(request):
    name, opts, gap = request.param
    path = real_file(name)
    rep = bayeserr.report(bayeserr.load(path), bayes="off", **opts)
    return path, opts, gap, rep


def test_no_model_far_below_the_leader_is_tied_with_the_best(board):
    _, _, gap, rep = board
    r = rep.ranking
    lead = max(m.mean for m in r)
    tied = [m for m in r if m.tied_with_best]
    assert r[0].mean == lead and r[0].tied_with_best  # the leader by the score is in the set
    far = [m.model for m in tied if 100 * (lead - m.mean) >= gap]
    assert not far, far
    # the set is the answer of p_is_best, and a model whose own interval misses rank 1 is never in it
    for m in r:
        assert m.tied_with_best == (m.p_is_best > 1 - r.level)
        if m.rank_marginal[0] > 1:
            assert not m.tied_with_best
        if m.in_top_k:  # the top-k set never holds a model its own interval places below k
            assert m.rank_marginal[0] <= r.top_k
        if m.tied_with_best:
            assert m.in_top_k


def test_the_previous_all_pairs_set_kept_a_model_30_points_below_the_leader():
    """The figure docs/methods.md §3.10 quotes: on SWE-bench Verified the simultaneous
    intervals of the all-pairs family (the previous set) reach rank 1 for 10 models, the
    lowest 30.6 points below the leader."""
    rep = bayeserr.report(bayeserr.load(real_file(LEADERBOARDS[0][0])), bayes="off")
    reach = [m for m in rep.ranking if m.rank_simultaneous[0] == 1]
    lead = max(m.mean for m in rep.ranking)
    assert len(reach) == 10
    assert round(100 * (lead - min(m.mean for m in reach)), 1) == 30.6


def test_compare_prints_the_reports_verdict(board, cli):
    path, opts, _, rep = board
    r = rep.ranking
    lead, last_tied = r[0].model, [m.model for m in r if not m.tied_with_best][0]
    args = ["compare", path, lead, last_tied, "--bayes", "off", "--format", "json"]
    if opts.get("on_unpaired"):
        args += ["--on-unpaired", opts["on_unpaired"]]
    out = json.loads(cli(*args).output)
    c = next(c for c in rep.comparisons if {c.a, c.b} == {lead, last_tied})
    v = out["report_verdict"]
    assert v["different"] == c.different
    assert v["p_adjusted"] == pytest.approx(c.p_adjusted, abs=1e-12)
    assert v["n_models"] == len(r) and v["family"]["size"] == rep.comparisons.family.to_dict()["size"]
    md = cli(*[a for a in args if a not in ("--format", "json")]).output
    assert f"Verdict in the report of all {len(r)} models (default options): " in md


def test_figures_mark_the_set(board):
    from matplotlib.patches import Rectangle

    from bayeserr.renderers import plots
    _, _, _, rep = board
    tied = rep.ranking.tied_with_best
    fig = plots.forest(rep)
    ax = fig.axes[0]
    bands = [p for p in ax.patches if isinstance(p, Rectangle)]
    assert len(bands) == len(tied)
    names = [s.model for s in rep.scores]
    rows = sorted(round(p.get_y() + p.get_height() / 2) for p in bands)
    assert rows == sorted(names.index(m) for m in tied)
    fig = plots.ranks(rep)
    blue = [line for line in fig.axes[0].lines if line.get_color() == plots.DIFFERENT]
    assert len(blue) == 2 * len(tied)  # two intervals per model in the set


def test_the_guide_quotes_swebench():
    """docs/guide/reports.md: on SWE-bench Verified the set keeps 4 models, all within 8.4
    points of the leader."""
    r = bayeserr.rank(bayeserr.load(real_file(LEADERBOARDS[0][0])), bayes="off")
    tied = [m for m in r if m.tied_with_best]
    assert len(tied) == 4
    assert round(100 * (r[0].mean - min(m.mean for m in tied)), 1) == 8.4
