"""The walkthroughs in notebooks/: they run, their figures display, their
saved copies carry outputs, and what their text claims holds.

* Each notebook is executed top to bottom with nbclient (kernel python3, in
  the notebooks folder, as a reader would run it): no errors, and every cell
  that draws a figure displays it as ``image/png``.
* The copies in the repository are saved *with* outputs (so they render on a
  code host), small, without timing metadata and without ``assert`` lines.
* A notebook built here checks that bayeserr's figures never switch the
  global matplotlib backend: the reader's own ``plt.plot`` in a later cell
  still displays.
* What the notebooks' prose says ("the CLT interval goes above 100%", "no
  pair is separated after Holm", …) is checked with the library directly;
  the notebooks stay tutorials, not tests.  Notebooks 02 and 04 generate
  their data in a cell tagged ``data``; the checks run that same cell.

After editing a notebook, re-execute and save all of them (outputs in place,
timing metadata stripped) with ``python tests/test_notebooks.py``.
"""

from __future__ import annotations

import asyncio
import math
import os
import re
from collections import Counter
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

import bayeserr
from bayeserr.registries.methods import recommended

ROOT = Path(__file__).resolve().parents[1]
NB_DIR = ROOT / "notebooks"
REAL = ROOT.parent / "shared" / "data" / "real"  # as in conftest; absent in a plain clone
NOTEBOOKS = sorted(NB_DIR.glob("*.ipynb"))
TOPICS = {"01_quick_start", "02_clt_exact_bayes_small_sets", "03_planning_with_power", "04_many_models"}
#: a code cell that draws a figure: a bayeserr figure function or the reader's own pyplot
FIGURE_CELL = re.compile(r"\bplots\.(forest|pairs|heatmap|posterior)\(|\bplt\.(subplots|figure|plot)\(")
MAX_PNG = 250_000  # bytes of base64 per figure: PNG at modest dpi
MAX_HTML = 20_000  # characters per HTML output (tables, never a whole report page)
MAX_NOTEBOOK = 1_000_000
PARALLEL = max(2, min(4, os.cpu_count() or 1))


def _client(book, cwd: Path, **kw) -> NotebookClient:
    return NotebookClient(book, timeout=300, kernel_name="python3", record_timing=False,
                          resources={"metadata": {"path": str(cwd)}}, **kw)


def execute_all(jobs, parallel: int = PARALLEL) -> list:
    """Execute ``(notebook, folder)`` jobs, a few kernels at a time (most of a
    notebook's time is its kernel starting and importing).  Errors are kept
    as outputs, so each notebook's test reports its own."""
    async def run(book, cwd, gate):
        async with gate:
            await _client(book, cwd, allow_errors=True).async_execute()
        return book

    async def main():
        gate = asyncio.Semaphore(parallel)
        return await asyncio.gather(*(run(book, cwd, gate) for book, cwd in jobs))

    return asyncio.run(main())


def code_cells(book):
    return [c for c in book.cells if c.cell_type == "code"]


def outputs_of(cell, kind=None):
    return [o for o in cell.get("outputs", []) if kind is None or o.get("output_type") == kind]


def mime(cell, mimetype: str) -> list:
    return [o["data"][mimetype] for o in cell.get("outputs", []) if mimetype in o.get("data", {})]


def data_cell(stem: str) -> dict:
    """Run a notebook's cell tagged ``data`` (it builds the data the notebook
    analyses) and return its namespace."""
    book = nbformat.read(NB_DIR / f"{stem}.ipynb", as_version=4)
    src = next(c.source for c in code_cells(book) if "data" in c.metadata.get("tags", []))
    src = "\n".join(line for line in src.splitlines() if not line.startswith("%"))
    space: dict = {}
    exec(compile(src, f"{stem}:data", "exec"), space)
    return space


# ------------------------------------------------------------------ running

def test_the_four_walkthroughs_are_there():
    assert {p.stem for p in NOTEBOOKS} == TOPICS


BACKEND_CHECK = (
    # a bayeserr figure drawn (and saved) first, in a kernel where pyplot was never imported
    "import pandas as pd\n"
    "import bayeserr\n"
    "from bayeserr.renderers import plots\n"
    "rows = [(m, f'q{i}', int((i * (3 + j)) % 4 > 0)) for j, m in enumerate(['A', 'B']) for i in range(12)]\n"
    "rep = bayeserr.report(bayeserr.load(pd.DataFrame(rows, columns=['model', 'question_id', 'score'])))\n"
    "fig = plots.forest(rep)\n"
    "plots.save(fig, 'forest.png')\n"
    "plots.heatmap(rep);",
    # a figure returned as a cell's value displays, without %matplotlib inline
    "plots.forest(rep)",
    "import matplotlib\nprint(matplotlib.get_backend())",
    # then the reader's own pyplot figure
    "import matplotlib.pyplot as plt\nplt.plot([0, 1, 2], [2, 0, 1]);",
)


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    """Every walkthrough executed in the notebooks folder (as a reader runs
    it), plus the backend check in a scratch folder; run concurrently."""
    scratch = tmp_path_factory.mktemp("backend")
    check = nbformat.v4.new_notebook()
    check.cells = [nbformat.v4.new_code_cell(src) for src in BACKEND_CHECK]
    jobs = [(nbformat.read(p, as_version=4), NB_DIR) for p in NOTEBOOKS] + [(check, scratch)]
    books = execute_all(jobs)
    return {p.stem: b for p, b in zip(NOTEBOOKS, books)} | {"backend check": (books[-1], scratch)}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_and_shows_its_figures(path, executed):
    book = executed[path.stem]
    errors = [f"{o.ename}: {o.evalue}" for c in code_cells(book) for o in outputs_of(c, "error")]
    assert not errors
    figure_cells = [c for c in code_cells(book) if FIGURE_CELL.search(c.source)]
    assert figure_cells, "each walkthrough draws at least one figure"
    for cell in figure_cells:
        assert mime(cell, "image/png"), f"no image/png output from:\n{cell.source}"
    stderr = [o.text for c in code_cells(book) for o in outputs_of(c, "stream") if o.name == "stderr"]
    assert not stderr, "warnings or progress bars leak into the walkthrough"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_saved_notebook_has_its_outputs(path):
    """The repository copy is executed and saved, small and clean."""
    assert path.stat().st_size < MAX_NOTEBOOK
    book = nbformat.read(path, as_version=4)
    nbformat.validate(book)
    cells = code_cells(book)
    assert [c.execution_count for c in cells] == list(range(1, len(cells) + 1)), "run top to bottom"
    for cell in cells:
        assert outputs_of(cell), f"no saved output:\n{cell.source}"
        assert not outputs_of(cell, "error")
        assert "execution" not in cell.metadata, "timing metadata is stripped"
        assert not re.search(r"^\s*assert\b", cell.source, re.M), "a tutorial, not a test"
        if FIGURE_CELL.search(cell.source):
            assert mime(cell, "image/png")
        assert all(len(png) < MAX_PNG for png in mime(cell, "image/png"))
        assert all(len(page) < MAX_HTML for page in mime(cell, "text/html"))
        for out in outputs_of(cell):
            text = out.get("text", "") + str(out.get("data", {}).get("text/plain", ""))
            assert str(ROOT) not in text, "no local paths in saved outputs"
    assert book.cells[-1].cell_type == "markdown", "ends with prose, not a truncated printout"


def test_figures_leave_the_users_pyplot_alone(executed):
    """A bayeserr figure is built without pyplot: after one is drawn (and
    saved), the reader's own plt.plot in a later cell still displays as
    image/png, i.e. no matplotlib.use("Agg") happened."""
    book, folder = executed["backend check"]
    assert not [f"{o.ename}: {o.evalue}" for c in book.cells for o in outputs_of(c, "error")]
    assert (folder / "forest.png").stat().st_size > 1000
    assert mime(book.cells[1], "image/png"), "a returned bayeserr figure did not display"
    assert "inline" in book.cells[2].outputs[0].text.lower()
    assert mime(book.cells[3], "image/png"), "the reader's pyplot figure did not display"


# ------------------------------------------------- what the notebooks claim

@pytest.fixture(scope="module")
def example_report():
    from bayeserr.examples import example_path
    ds = bayeserr.load(example_path())
    return ds, bayeserr.report(ds)


def width(iv):
    return iv[1] - iv[0]


def test_claims_01_quick_start(example_report):
    ds, rep = example_report
    for s in rep.scores:
        assert s.se_clustered > s.se_clt and s.design_effect > 1
        assert round(s.effective_clusters) == 22 and round(s.df) == 21
        assert recommended(s) == "clustered"
        # the forest: clustered widest; the hierarchical posterior (these articles) narrowest
        assert width(s.intervals["clustered"]) > width(s.intervals["clt"]) > width(
            s.intervals["hierarchical_posterior"])
    assert rep.groups == {"ckpt-0419": "a", "ckpt-0426": "a", "ckpt-0412": "ab", "baseline-v1": "b"}
    separated = {(c.a, c.b) for c in rep.comparisons if c.different}
    assert separated == {("ckpt-0419", "baseline-v1"), ("ckpt-0426", "baseline-v1")}
    assert rep.ranking.tied_with_best == ["ckpt-0419", "ckpt-0426", "ckpt-0412"]
    c = bayeserr.compare(ds, "ckpt-0426", "baseline-v1")
    assert c.ci[0] > 0 and c.se_paired < c.se_unpaired
    # ... although the two models' own intervals overlap
    a, b = (rep.scores.get(m).intervals["clustered"] for m in ("ckpt-0426", "baseline-v1"))
    assert a[0] < b[1]


def test_claims_02_small_sets():
    from scipy import stats

    from bayeserr.lab import simulate as sim
    ds = bayeserr.load(data_cell("02_clt_exact_bayes_small_sets")["results"])
    rep = bayeserr.report(ds)
    iv = {s.model: s.intervals for s in rep.scores}
    assert iv["guard-v3"]["clt"] == (1.0, 1.0)  # collapses to a point at 30/30
    assert iv["guard-v2"]["clt"][1] > 1 and iv["raw-pretrained"]["clt"][0] < 0
    for model, ivs in iv.items():
        for key in ("wilson", "clopper_pearson", "jeffreys", "beta_posterior"):
            assert 0 <= ivs[key][0] < ivs[key][1] <= 1, (model, key)
    assert 0.87 < iv["guard-v3"]["clopper_pearson"][0] < 0.90  # "as low as about 89%"
    codes = {(w.code, w.model) for w in rep.warnings}
    assert {("degenerate_clt", "guard-v3"), ("interval_outside_unit", "guard-v2"),
            ("interval_outside_unit", "raw-pretrained")} <= codes
    assert {recommended(s) for s in rep.scores} == {"wilson"}
    assert stats.beta(31, 1).sf(0.9) == pytest.approx(0.962, abs=1e-3)
    assert bayeserr.compare(ds, "guard-v3", "guard-v2").mcnemar.p_value == 1.0

    cov = {(p, n): {c.method: c.coverage for c in sim.coverage(sim.Design(n=n, accuracy=p), reps=2000, seed=n)}
           for p in (0.5, 0.95) for n in (10, 20, 30, 50, 100)}
    for n in (20, 30, 50, 100):
        assert all(abs(v - 0.95) < 0.03 for v in cov[0.5, n].values()), n
    high = {n: cov[0.95, n] for n in (10, 20, 30, 50, 100)}
    assert high[10]["clt"] < 0.5 and high[100]["clt"] < 0.95
    for n, c in high.items():
        assert abs(c["wilson"] - 0.95) < 0.04 and c["wilson"] == c["beta_posterior"]
        assert c["clopper_pearson"] >= 0.95
    assert 0.87 < high[50]["jeffreys"] < 0.92
    prior = sim.prior_coverage(30, reps=4000, seed=1)
    assert abs(prior["beta_posterior"] - 0.95) < 0.01 and prior["clt"] < 0.9


def test_claims_03_planning():
    from bayeserr.examples import example_path
    from bayeserr.lab import simulate as sim
    assert math.ceil(bayeserr.n_required(0.03, omega2=1 / 9)) == 969
    paired = bayeserr.plan(p=0.8, rho=0.5, delta=0.03).answer
    assert 1.8 < bayeserr.n_unpaired(0.8, 0.83) / paired < 2.2  # "roughly twice"
    assert 0.04 < bayeserr.plan(n=500, p=0.8, rho=0.5).answer < 0.055  # SWE-bench size: about 5 points
    assert 0.8 < bayeserr.plan(n=164, p=0.8, rho=0.5).answer / bayeserr.tie_zone(0.8, 164) < 1.2  # "cancel"
    assert bayeserr.plan(p=0.8, rho=0.5, delta=0.02, power=0.5).answer > 500  # misses most 2-point gaps
    assert 0.008 < bayeserr.plan(n=14042, p=0.8, rho=0.5).answer < 0.011  # MMLU: about 1 point
    mde = {k: bayeserr.mde(198, 1 / 9, 1 / 6, 1 / 6, k, k) for k in (1, 10, 100)}
    assert mde[1] - mde[10] > 0.05 > 0.01 > mde[10] - mde[100]  # the gain flattens
    clustered = bayeserr.plan(p=0.8, rho=0.5, delta=0.03, cluster_size=10, icc=0.1).answer
    assert clustered == pytest.approx(1.9 * paired, rel=0.01)
    pilot = bayeserr.from_pilot(bayeserr.load(example_path()), "ckpt-0426", "ckpt-0412")
    assert pilot.omega2 < pilot.sigma2_a / 3  # answer noise dominates
    need = {k: bayeserr.n_required(0.02, pilot.omega2, pilot.sigma2_a, pilot.sigma2_b, k, k,
                                   deff=pilot.design_effect) for k in (3, 10)}
    assert need[10] < need[3] / 2
    design = sim.planned(sim.Design(accuracy=0.75, gap=0.03, rho=0.8), power=0.8)
    rates = {r.test: r.rate for r in sim.error_rates(design, reps=1000, seed=3)}
    assert abs(rates["paired"] - 0.8) < 0.04 and rates["unpaired"] < rates["paired"] - 0.03


@pytest.fixture(scope="module")
def many_models():
    results = data_cell("04_many_models")["results"]
    return results, bayeserr.report(bayeserr.load(results))


def test_claims_04_many_models(many_models):
    results, rep = many_models
    assert results.model.nunique() == 25 and results.question_id.nunique() == 300
    issues = results.drop_duplicates("question_id").cluster_id.value_counts()
    assert len(issues) == 12 and issues["django"] == 150
    means = results.groupby("model").score.mean()
    assert 0.78 < means.min() < 0.82 and 0.95 < means.max() < 0.98  # "about 80–97%"
    assert rep.groups is None and "no pair is declared different" in rep.groups_note
    assert not any(c.different for c in rep.comparisons) and all(c.p_holm >= 0.05 for c in rep.comparisons)
    # every rank interval 1–25; the set for the best keeps "all but a few" (it is one-sided)
    assert all(r.rank_simultaneous == (1, 25) and r.rank_marginal == (1, 25) for r in rep.ranking)
    assert 18 <= len(rep.ranking.tied_with_best) < 25
    assert round(100 * (means.max() - means.min())) in range(15, 20)  # "about 17 points apart"
    first = rep.scores[0]
    assert 3.3 < first.effective_clusters < 3.7 and 2.8 < first.df < 3.3
    codes = Counter(w.code for w in rep.warnings)
    assert codes["few_clusters"] == 25 and codes["interval_outside_unit"] > 0
    for s in rep.scores[:5]:
        low, high = s.intervals["clopper_pearson_clustered"]
        assert 0 <= low < high <= 1
    assert any(s.intervals["clustered"][1] > 1 for s in rep.scores[:5])
    # the heatmap's odd row: above the seven below it, likelier worse than five of them
    names = [s.model for s in rep.scores]
    below = names[names.index("draco-small") + 1:]
    assert len(below) == 7
    pairs = [rep.comparisons.get("draco-small", b) for b in below]
    assert all(c.diff > 0 for c in pairs) and sum(c.prob_a_better < 0.5 for c in pairs) == 5
    wide = results.pivot_table(index=["cluster_id", "question_id"], columns="model", values="score")
    per_repo = (wide["draco-small"] - wide["borealis-mini"]).groupby(level="cluster_id").mean()
    assert per_repo["django"] > 0 > per_repo.mean()
    assert rep.comparisons.get("draco-small", "borealis-mini").prob_a_better < 0.5
    frame = rep.comparisons.to_frame()
    assert (frame.se_clustered_paired / frame.se_paired).median() > 1
    # the forest: the top model's interval still overlaps the bottom one's
    assert rep.scores[0].intervals["clustered"][0] < rep.scores[-1].intervals["clustered"][1]


def test_claims_04_ignoring_the_repositories(many_models):
    results, _ = many_models
    flat = bayeserr.report(bayeserr.load(results, no_cluster=True))
    assert sum(c.different for c in flat.comparisons) > 0
    assert len(flat.ranking.tied_with_best) < 25  # "fewer are tied with the best"
    widths = [hi - lo for lo, hi in (r.rank_marginal for r in flat.ranking)]  # the table's intervals
    assert max(widths) < 24  # "the rank intervals narrow"


def test_claims_04_real_swebench():
    import pandas as pd
    path = REAL / "swebench_verified_bashonly_per_instance.csv.gz"
    if not path.exists():
        pytest.skip("../shared is absent")
    real = pd.read_csv(path)
    real = real[real.per_instance_matches_reported]
    rep = bayeserr.report(bayeserr.load(real[["model", "question_id", "cluster_id", "score"]]))
    means = [s.mean for s in rep.scores]
    assert max(means) - min(means) > 0.6  # "more than 60 points"
    held = sum(c.p_holm < 0.05 for c in rep.comparisons)
    assert sum(c.different for c in rep.comparisons) > held > 0  # "separates more pairs than Holm"
    top, second = rep.scores[0].model, rep.scores[1].model
    tied = rep.ranking.tied_with_best
    assert {top, second} <= set(tied) and len(tied) <= 5  # "keeps only the few models at the top"


# ------------------------------------------------------------- small fixes

def test_arena_html_title_names_the_file_not_its_path(tmp_path):
    import pandas as pd

    from bayeserr.analyses import arena
    from bayeserr.renderers import arena as pages
    votes = pd.DataFrame({"model_a": ["A", "B", "C", "A"] * 5, "model_b": ["B", "C", "A", "C"] * 5,
                          "winner": ["model_a", "model_b", "tie", "model_a"] * 5})
    path = tmp_path / "deep" / "folder" / "votes.csv"
    path.parent.mkdir(parents=True)
    votes.to_csv(path, index=False)
    page = pages.to_html(arena.rate(arena.load_votes(path), bootstrap=20))
    assert "<title>Arena ratings: votes.csv</title>" in page
    assert "<h1>Arena ratings: votes.csv</h1>" in page
    assert str(tmp_path) not in page


def test_coverage_figure_of_one_accuracy_is_not_squeezed(tmp_path):
    """`bayeserr simulate coverage --p 0.9 --plot`: one panel still gets a
    figure wide enough for its title and legend, nothing drawn outside it."""
    import pandas as pd

    from bayeserr.lab.publish import COVERAGE_MIN_WIDTH, coverage_figure
    rows = [{"n": n, "accuracy": 0.9, "cluster_size": 1, "icc": 0.0, "k": 1, "method": m,
             "coverage": c - 0.1 / n} for n in (10, 20, 50) for m, c in [("clt", 0.9), ("wilson", 0.95)]]
    out = coverage_figure(pd.DataFrame(rows), tmp_path / "c.png")
    from matplotlib.image import imread
    h, w = imread(out).shape[:2]
    assert w >= 0.9 * 150 * COVERAGE_MIN_WIDTH  # saved at 150 dpi
    assert w > h


# ------------------------------------------------ re-execute and save them all

def save_all():
    """Execute every notebook in place and save it with its outputs (stable
    cell ids, no timing or kernel-version metadata)."""
    books = execute_all([(nbformat.read(p, as_version=4), NB_DIR) for p in NOTEBOOKS])
    for path, book in zip(NOTEBOOKS, books):
        errors = [f"{o.ename}: {o.evalue}" for c in code_cells(book) for o in outputs_of(c, "error")]
        if errors:
            raise SystemExit(f"{path.name}: {errors}")
        book.metadata = nbformat.from_dict({
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"}})
        for i, cell in enumerate(book.cells):
            cell.metadata.pop("execution", None)
            cell["id"] = f"cell-{i:02d}"
        nbformat.validate(book)
        nbformat.write(book, path)
        print(f"{path.relative_to(ROOT)}: {path.stat().st_size / 1e3:.0f} kB")


if __name__ == "__main__":
    save_all()
