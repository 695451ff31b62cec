"""The bundled example is what ``python -m bayeserr.examples.generate`` makes: the same rows
(a change to the generator shows here before it changes every documented number)."""

import pandas as pd

from bayeserr.examples import example_path
from bayeserr.examples.generate import K, MODELS, N_QUESTIONS, generate, main


def test_the_bundled_file_is_the_generators_output(tmp_path):
    shipped = pd.read_csv(example_path())
    made = generate()
    assert len(made) == len(MODELS) * N_QUESTIONS * K
    pd.testing.assert_frame_equal(made.astype(str), shipped.astype(str))
    again = pd.read_csv(main(tmp_path / "example.csv.gz"))
    pd.testing.assert_frame_equal(again.astype(str), shipped.astype(str))
