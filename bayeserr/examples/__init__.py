"""Layer 1 (data): a bundled example data set, so ``bayeserr demo`` needs no
network.

``internal_eval.csv.gz`` is written by :mod:`bayeserr.examples.generate`
(fictional: four checkpoints of a support assistant on 200 questions drawn
from 24 help-centre articles, 3 sampled answers per question).
"""

from importlib import resources

EXAMPLE = "internal_eval.csv.gz"


def example_path():
    """Path of the bundled example results file."""
    return resources.files(__name__) / EXAMPLE
