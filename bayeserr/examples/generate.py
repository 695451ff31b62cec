"""Generate the bundled example: ``python -m bayeserr.examples.generate``.

A fictional internal eval of a support assistant: 200 questions written from
24 help-centre articles (the clusters: questions about one article share its
difficulty), four checkpoints, 3 sampled answers per question graded 0/1.
Each answer is right with probability ``logistic(ability_m − difficulty_i +
u_mi)``: difficulty = article effect + question effect, shared by all models
(so scores correlate across models), plus a small model-specific twist u_mi.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

MODELS = {"ckpt-0412": 0.55, "ckpt-0419": 0.70, "ckpt-0426": 0.78, "baseline-v1": 0.30}
N_ARTICLES, N_QUESTIONS, K, SEED = 24, 200, 3, 20261129


def generate(seed: int = SEED) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    article = np.sort(rng.integers(0, N_ARTICLES, N_QUESTIONS))
    difficulty = rng.normal(0, 0.9, N_ARTICLES)[article] + rng.normal(-0.9, 1.3, N_QUESTIONS)
    rows = []
    for model, ability in MODELS.items():
        p = 1 / (1 + np.exp(-(ability - difficulty + rng.normal(0, 0.5, N_QUESTIONS))))
        answers = rng.random((N_QUESTIONS, K)) < p[:, None]
        for i in range(N_QUESTIONS):
            for k in range(K):
                rows.append((model, f"q{i:03d}", f"article-{article[i]:02d}", k, int(answers[i, k])))
    return pd.DataFrame(rows, columns=["model", "question_id", "cluster_id", "sample", "score"])


def main(path: Path | None = None) -> Path:
    path = path or Path(__file__).with_name("internal_eval.csv.gz")
    generate().to_csv(path, index=False, compression={"method": "gzip", "mtime": 0})
    return path


if __name__ == "__main__":
    print(main())
