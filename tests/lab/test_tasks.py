"""The leaderboards-over-tasks lab (bayeserr.lab.tasks): its truth, its rates and its
published section, and one statistical check of the report's interval over tasks."""

import math

import numpy as np
import pandas as pd
import pytest

from bayeserr.lab import tasks as lab


def test_true_means_follow_the_levels_and_match_a_monte_carlo():
    d = lab.TaskDesign(models=4, tasks=5, n=50)
    truth = lab.true_means(d)
    assert np.all(np.diff(truth) < 0)                       # μ evenly spaced, best first
    rng = np.random.default_rng(0)
    sd = math.sqrt(lab.TASK_SD ** 2 + d.interaction ** 2 + lab.QUESTION_SD ** 2)
    mc = (1 / (1 + np.exp(-(d.mu[:, None] + sd * rng.standard_normal(400_000))))).mean(axis=1)
    np.testing.assert_allclose(truth, mc, atol=0.003)


def test_interval_over_tasks_covers_the_population_mean():
    # 10 models, 5 tasks of 50 questions: each model's t interval on 4 df covers its mean
    # over the population of tasks; averaged over models, within 3 MC SEs (SE over replicates)
    cell = lab.task_calibration(lab.TaskDesign(models=10, tasks=5, n=50), reps=200, seed=3)
    assert abs(cell.mean_coverage - 0.95) < 3 * cell.mean_coverage_se + 0.005, cell
    assert cell.rank_coverage >= 0.95 - 3 * cell.rank_coverage_se
    assert cell.new_task >= cell.new_task_guarantee - 3 * cell.new_task_se
    assert 1 <= cell.set_size <= 10


def test_section_and_publish(tmp_path):
    df = lab.run_tasks([lab.TaskDesign(models=5, tasks=4, n=30), lab.TaskDesign(models=5, tasks=8, n=30,
                                                                                spread=0.0)], reps=10, seed=1)
    lines = lab.tasks_section(df, "bayeserr simulate tasks --reps 10")
    assert lines[0] == lab.SECTION_START and lines[-1] == lab.SECTION_END
    assert any(line.startswith("| 5 models × 4 tasks") for line in lines)
    page = tmp_path / "calibration.md"
    lab.publish_tasks(df, page, "cmd")
    assert pd.read_csv(tmp_path / "calibration_tasks.csv").shape[0] == 2
    assert page.read_text().count(lab.SECTION_START) == 1


@pytest.mark.parametrize("jobs", [1, 2])
def test_numbers_do_not_depend_on_jobs(jobs):
    designs = [lab.TaskDesign(models=4, tasks=4, n=20), lab.TaskDesign(models=6, tasks=5, n=20)]
    df = lab.run_tasks(designs, reps=10, seed=2, jobs=jobs)
    ref = lab.run_tasks(designs, reps=10, seed=2, jobs=1)
    pd.testing.assert_frame_equal(df, ref)
