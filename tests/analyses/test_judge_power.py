"""Planning human labels for a judge-scored eval (issue 28, ``bayeserr power --judge-corr``):
the labels for a target half-width and the half-width of n labels, against the large-sample
formula written here (J13), and the options' errors."""

import json
import math

import pytest
from scipy.stats import norm

import bayeserr


def _hand_labels(w, rho, sd, level=0.95, n_total=None, deff=1.0):
    z = norm.ppf(0.5 + level / 2)
    denom = (w / z) ** 2 - (deff * sd**2 * rho**2 / n_total if n_total else 0.0)
    return math.ceil(deff * sd**2 * (1 - rho**2) / denom)


@pytest.mark.parametrize("rho, p, w, n_total", [(0.7, 0.7, 0.03, None), (0.4, 0.5, 0.05, 3000),
                                                  (0.9, 0.2, 0.02, 20000)])
def test_labels_for_a_half_width_match_the_formula(rho, p, w, n_total):
    plan = bayeserr.plan(judge_corr=rho, half_width=w, p=p, n_total=n_total)
    assert plan.answer == _hand_labels(w, rho, math.sqrt(p * (1 - p)), n_total=n_total)
    assert plan.design == "judge_labels" and plan.question == "labels_required"


def test_half_width_of_n_labels_and_the_clustered_inflation():
    z = norm.ppf(0.975)
    plan = bayeserr.plan(judge_corr=0.6, n=300, sd=0.4)
    assert plan.answer == pytest.approx(z * 0.4 * math.sqrt((1 - 0.36) / 300), rel=1e-12)
    clustered = bayeserr.plan(judge_corr=0.6, n=300, sd=0.4, cluster_size=5, icc=0.1)
    assert clustered.answer == pytest.approx(plan.answer * math.sqrt(1 + 4 * 0.1), rel=1e-12)


def test_the_command_and_its_errors(cli):
    res = cli("power", "--judge-corr", "0.7", "--half-width", "0.03", "--p", "0.7", "--format", "json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["labels_required"] == _hand_labels(0.03, 0.7, math.sqrt(0.21))
    for args, words in [(("--judge-corr", "0.7", "--p", "0.7"), "--half-width W"),
                        (("--half-width", "0.03", "--p", "0.7"), "--judge-corr R"),
                        (("--judge-corr", "0.7", "--half-width", "0.03"), "--sd S, or --p P"),
                        (("--judge-corr", "0.7", "--half-width", "0.03", "--p", "0.7", "--delta", "0.03"),
                         "--delta")]:
        bad = cli("power", *args)
        assert bad.exit_code == 2 and words in bad.output and "Traceback" not in bad.output, bad.output
    far = cli("power", "--judge-corr", "0.5", "--half-width", "0.001", "--p", "0.5", "--n-total", "1000")
    assert far.exit_code == 0 and "out of reach" in far.stdout
