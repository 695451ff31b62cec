"""Outputs never replace what the user made read-only (issue 43, item 9): a 0444 report file and
an empty read-only --save-posterior folder are refused, as they are for users the permissions
would stop (bayeserr writes by renaming, which a file's own mode does not prevent, and root
bypasses the bits)."""

import os

import pytest

from bayeserr.examples import example_path


def test_a_read_only_output_file_is_not_replaced(tmp_path, cli):
    out = tmp_path / "report.md"
    out.write_text("mine\n")
    os.chmod(out, 0o444)
    res = cli("report", example_path(), "--bayes", "off", "-o", out)
    assert res.exit_code == 2 and "read-only (mode 0444)" in res.output
    assert out.read_text() == "mine\n"


def test_an_empty_read_only_posterior_folder_is_not_replaced(tmp_path, cli):
    folder = tmp_path / "post"
    folder.mkdir()
    os.chmod(folder, 0o555)
    try:
        res = cli("report", example_path(), "--save-posterior", folder, "-o", tmp_path / "r.md")
        assert res.exit_code == 2 and "read-only (mode 0555)" in res.output
        assert folder.is_dir() and not list(folder.iterdir()) and not (tmp_path / "r.md").exists()
    finally:
        os.chmod(folder, 0o755)


@pytest.mark.parametrize("mode", [0o644, 0o600])
def test_a_writable_file_is_replaced(tmp_path, cli, mode):
    out = tmp_path / "report.md"
    out.write_text("old\n")
    os.chmod(out, mode)
    assert cli("report", example_path(), "--bayes", "off", "-o", out).exit_code == 0
    assert out.read_text().startswith("# bayeserr report")
