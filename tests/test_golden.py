"""Refactors change no number: every report of the bundled example and the synthetic judge
and lm-eval inputs, in every format and both engines, and ``compare``, is the same text as
the stored digests of the code before the refactor (``tests/golden.py``; figures included).

The digests hold for the package versions they were made with (numbers and SVG figures
depend on them): with another version the test is skipped, naming it.  A deliberate change
of an output is recorded with ``python -m tests.golden OUT --manifest`` after checking the
difference (``--check REF`` against the folder of the older code)."""

import json
from pathlib import Path

import pytest

from tests import golden

MANIFEST = Path(__file__).with_name("golden_manifest.json")


@pytest.mark.slow
def test_every_bundled_report_is_the_text_of_the_stored_digests(tmp_path):
    manifest = json.loads(MANIFEST.read_text())
    have = golden.versions()
    if have != manifest["versions"]:
        pytest.skip(f"digests made with {manifest['versions']}; installed {have}")
    names = golden.render_all(tmp_path, real=False)
    assert sorted(names) == sorted(manifest["digests"])
    got = golden.digests(tmp_path, names)
    assert [n for n in names if got[n] != manifest["digests"][n]] == []
