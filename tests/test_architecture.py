"""The architecture holds: registries drive their consumers, the API and the
CLI give the same numbers, every numeric option is range-checked, no import
cycles, and ``import bayeserr`` stays light."""

import subprocess
import sys

import numpy as np
import pytest

import bayeserr
from bayeserr.examples import example_path
from bayeserr.registries import methods

from .conftest import real_file


def _strip(rep: dict) -> dict:
    rep = dict(rep)
    rep.pop("provenance")
    return rep


# ------------------------------------------------------------------ registry
@pytest.fixture
def dummy_method(monkeypatch):
    """A new interval method registered in one place only."""
    def compute(batch, level):
        half = 0.5 * (1 - level) + 0.0 * batch.mean
        return np.stack([batch.mean - half, batch.mean + half], axis=-1)

    monkeypatch.setitem(methods.INTERVALS, "dummy_halfwidth", methods.IntervalMethod(
        "dummy_halfwidth", "Dummy half-width", "Dummy half-width", "normal", "always", "§0",
        compute, color="#123456"))
    return "dummy_halfwidth"


def test_a_registered_method_reaches_every_output(dummy_method, tmp_path, cli, cli_json):
    rep = cli_json("demo")
    for m in rep["models"]:
        lo, hi = m["intervals"][dummy_method]
        assert (hi - lo) == pytest.approx(1 - 0.95)
    path = example_path()
    assert "Dummy half-width" in cli("report", path, "--methods", "all").stdout
    tex = cli("report", path, "--methods", "clt,dummy_halfwidth", "--format", "latex").stdout
    assert "Dummy" in tex and "half-width" in tex  # the LaTeX head may wrap over two lines
    page = tmp_path / "r.html"
    assert cli("report", path, "--methods", "all", "--format", "html", "-o", page).exit_code == 0
    assert page.read_text().count("Dummy half-width") >= 2  # table head and figure legend
    from bayeserr.lab import simulate as sim
    cells = sim.coverage(sim.Design(n=30, accuracy=0.5), reps=50, seed=1)
    assert dummy_method in {c.method for c in cells}


def test_registries_give_did_you_mean_errors(cli):
    from bayeserr.base.errors import InputError
    from bayeserr.renderers.plots import FIGURES
    with pytest.raises(InputError, match="Did you mean 'forest'"):
        FIGURES.get_checked("forrest")
    with pytest.raises(InputError, match="Did you mean 'wilson'"):
        methods.INTERVALS.get_checked("wilsen")
    with pytest.raises(InputError, match="Choose one of"):
        bayeserr.report(bayeserr.load(example_path()), adjust="bonferroni")


# ------------------------------------------------------------------ API = CLI
def test_api_and_cli_give_the_same_report(cli_json):
    from bayeserr.bayes import BayesSettings
    ds = bayeserr.load(example_path())
    # the command's --bayes fast computes what its format shows (JSON: not the three-level
    # posterior); the API's report can be rendered in any format, so it computes everything
    for bayes, given in (("off", "off"), ("fast", BayesSettings("fast", only_shown=True)), ("full", "fast")):
        api = bayeserr.report(ds, bayes=given, level=0.9, cluster_correction="cr1").to_dict()
        cli = cli_json("report", example_path(), "--bayes", bayes, "--level", 0.9,
                       "--cluster-correction", "cr1")
        assert _strip(api) == _strip(cli)
    scores = bayeserr.score(ds, level=0.9)
    by_name = {m["model"]: m for m in bayeserr.report(ds, level=0.9).to_dict()["models"]}
    for m in scores.to_dict():
        assert bayeserr.reporting.to_jsonable(m) | {"group": by_name[m["model"]]["group"]} == by_name[m["model"]]
    pairs = {(c["a"], c["b"]): c for c in bayeserr.report(ds).to_dict()["comparisons"]}
    for c in bayeserr.compare_all(ds, models=list(by_name)).to_dict():
        assert bayeserr.reporting.to_jsonable(c) == pairs[(c["a"], c["b"])]


def test_api_and_cli_agree_on_a_real_file(cli_json):
    path = real_file("swebench_verified_bashonly_per_instance.csv.gz")
    api = bayeserr.report(bayeserr.load(path)).to_dict()
    assert _strip(api) == _strip(cli_json("report", path, "--bayes", "full"))


def test_api_and_cli_agree_on_compare_and_power(cli_json):
    ds = bayeserr.load(example_path())
    api = bayeserr.compare_report(ds, "ckpt-0426", "ckpt-0412", bayes="off").to_dict()
    cli = cli_json("compare", example_path(), "ckpt-0426", "ckpt-0412", "--bayes", "off")
    assert api["comparison"] == cli["comparison"] and api["schema"] == "bayeserr.compare/1"
    one = bayeserr.compare(ds, "ckpt-0426", "ckpt-0412", bayes="off")
    assert bayeserr.reporting.to_jsonable(one.to_dict()) == cli["comparison"]
    plan = bayeserr.plan(delta=0.03, omega2=1 / 9).to_dict()
    assert plan == cli_json("power", "--delta", 0.03, "--omega2", 1 / 9) and plan["n_required"] == 969


def test_results_look_up_by_name_and_frames_are_numeric():
    ds = bayeserr.load(example_path())
    scores, comps = bayeserr.score(ds), bayeserr.compare_all(ds)
    assert scores["ckpt-0419"].model == "ckpt-0419"
    assert comps["ckpt-0419", "ckpt-0426"] is comps.get("ckpt-0419", "ckpt-0426")
    with pytest.raises(bayeserr.InputError, match="Did you mean"):
        scores["ckpt-419"]
    frame = scores.to_frame()
    assert frame["wilson_low"].dtype == float and frame["wilson_low"].isna().all()
    assert comps.to_frame()["mcnemar_p"].dtype == float


# ------------------------------------------------------------------ options
NUMERIC = [
    ("report", "--level", "1.5"), ("report", "--level", "nan"), ("report", "--seed", "-1"),
    ("report", "--draws", "0"), ("report", "--rope", "1"), ("compare", "--level", "0"),
    ("plot", "--level", "2"), ("demo", "--level", "1.5"), ("arena", "--level", "1.5"),
    ("arena", "--bootstrap", "0"), ("arena", "--seed", "-3"), ("power", "--delta", "nan"),
    ("power", "--alpha", "1"), ("power", "--power", "0"), ("power", "--omega2", "-1"),
    ("power", "--n", "1"), ("power", "--cluster-size", "0.5"), ("power", "--tie-zone", "2"),
    ("simulate coverage", "--level", "1.5"), ("simulate coverage", "--seed", "-1"),
    ("simulate power", "--alpha", "0"),
]


@pytest.mark.parametrize("command, option, value", NUMERIC)
def test_numeric_options_out_of_range_are_clear_errors(command, option, value, cli, tmp_path):
    args = command.split()
    if command in ("report", "plot"):
        args.append(str(example_path()))
    if command == "compare":
        args += [str(example_path()), "ckpt-0426", "ckpt-0412"]
    if command == "plot":
        args += ["-o", str(tmp_path / "f.png")]
    if command == "arena":
        votes = tmp_path / "v.csv"
        votes.write_text("model_a,model_b,winner\na,b,model_a\nb,a,tie\n")
        args.append(str(votes))
    res = cli(*args, option, value)
    assert res.exit_code == 2, res.output
    assert option in res.output and "Traceback" not in res.output
    assert "must be" in res.output  # names the range


def test_unpaired_power_rejects_impossible_proportions(cli):
    res = cli("power", "--unpaired", "0.5", "1.5")
    assert res.exit_code == 2 and "--unpaired" in res.output


# ------------------------------------------------------------------ structure
# (the layer rules: tests/test_layers.py)
def test_import_is_light():
    code = "import bayeserr, sys; bayeserr.load; print('pymc' in sys.modules, 'arviz' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_arena_without_bayes_does_not_import_pymc(tmp_path):
    """Only a Bayesian fit samples: the frequentist arena never loads PyMC (4 s)."""
    votes = tmp_path / "v.csv"
    votes.write_text("model_a,model_b,winner\na,b,model_a\nb,a,tie\nb,c,model_b\nc,a,model_a\n")
    code = ("import sys; from click.testing import CliRunner; from bayeserr.cli import main; "
            f"r = CliRunner().invoke(main, ['arena', {str(votes)!r}, '--format', 'json', '--bootstrap', '50']); "
            "print(r.exit_code, 'pymc' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["0", "False"], out.stdout + out.stderr
