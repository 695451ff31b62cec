"""The readers are one registry: each recognises its paths, declares the options it takes
(checked once, with the reason and the choices), the command line's flags and choices come
from the declarations, and an option no input's reader takes is said in the row accounting."""

import pytest

import bayeserr
from bayeserr.base.errors import InputError
from bayeserr.data.readers.options import OPTIONS, check_options
from bayeserr.data.readers.registry import INPUT_FORMATS, READERS, detect, read_logs

from ...conftest import binary_frame


def test_each_path_goes_to_the_reader_that_recognises_it(tmp_path):
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "run.eval").write_bytes(b"")
    (tmp_path / "lm").mkdir()
    (tmp_path / "lm" / "samples_mmlu_2025-01-01T00-00-00.jsonl").write_text("")
    assert detect(tmp_path / "a.eval") == "inspect" and detect(tmp_path / "a.json") == "inspect"
    assert detect(tmp_path / "samples_arc_2025-01-01T10-11-12.123456.jsonl") == "lm-eval"
    assert detect(tmp_path / "scores.jsonl") == "table" and detect("-") == "table"
    assert detect(tmp_path / "logs") == "inspect" and detect(tmp_path / "lm") == "lm-eval"
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="a folder with no Inspect logs"):
        detect(tmp_path / "empty")


def test_options_are_checked_once_with_their_choices():
    checked = check_options({"duplicate_runs": "latest"})
    assert checked["duplicate_runs"] == "latest" and checked["partial_runs"] == "exclude"
    assert check_options(checked) is checked  # checked already: not again
    with pytest.raises(InputError, match=r"'scoer' is not a reader option\. Did you mean 'scorer'"):
        check_options({"scoer": "match"})
    with pytest.raises(InputError, match="duplicate_runs must be one of error, latest"):
        check_options({"duplicate_runs": "newest"})
    with pytest.raises(InputError, match="--scorer takes a non-empty name"):
        check_options({"scorer": 3})
    with pytest.raises(InputError, match="--filter takes a non-empty name"):
        bayeserr.load(bayeserr.examples.example_path(), filt="")


def test_the_command_line_takes_its_choices_and_flags_from_the_registry(cli):
    text = cli("report", "--help").output
    assert "[" + "|".join(INPUT_FORMATS) + "]" in " ".join(text.split())
    for o in OPTIONS.values():
        assert (o.option in text) == o.cli
    assert set(READERS) <= set(INPUT_FORMATS)


def test_a_reader_takes_only_its_own_options(tmp_path, monkeypatch):
    seen = {}
    from bayeserr.data.readers import lmeval
    monkeypatch.setattr(lmeval, "lmeval_logs", lambda path, options: seen.setdefault("opts", dict(options)))
    read_logs(tmp_path / "samples_arc_2025-01-01T10-11-12.jsonl", "lm-eval", {"metric": "acc", "scorer": "x"})
    assert seen["opts"] == {"metric": "acc", "filt": None, "duplicate_runs": "error"}


def test_an_option_no_input_takes_is_said_in_the_row_accounting(tmp_path):
    path = tmp_path / "r.csv"
    binary_frame({"a": [1, 0, 1, 1], "b": [0, 0, 1, 1]}).to_csv(path, index=False)
    notes = bayeserr.load(path, scorer="match").attrs["rows"].get("notes", [])
    assert notes == ["Not used: --scorer (Inspect logs), given for inputs of that kind; the inputs were read as "
                     "results tables."]
    assert not bayeserr.load(path).attrs["rows"].get("notes")  # nothing said when nothing was idle


def test_a_folder_is_searched_once_for_its_reader(tmp_path, monkeypatch):
    """load() chooses each input's reader once and the row accounting's note reads that choice."""
    from bayeserr.data.readers import registry

    from .test_inspect_logs import write_log
    write_log(tmp_path / "a.eval", model="m/a")
    write_log(tmp_path / "b.eval", model="m/b")
    calls = []
    real = registry.detect
    monkeypatch.setattr(registry, "detect", lambda path: calls.append(path) or real(path))
    notes = bayeserr.load(tmp_path, metric="acc").attrs["rows"]["notes"]
    assert [str(c) for c in calls] == [str(tmp_path)]  # once (read_logs did it a second time)
    assert "Not used: --metric (lm-eval samples), given for inputs of that kind; the inputs were read as " \
           "Inspect logs." in notes
