"""Hostile and malformed input: every case is a clear InputError naming the
file, the member or the rows, and the fix (the CLI: one ``error:`` line, exit
code 2), or correct output; never a traceback, a hang or a silent drop.

Every hostile input is built inside its test (archives with ``zipfile`` or by
hand, zstd with ``zstandard``) in ``tmp_path``.
"""

from __future__ import annotations

import bz2
import gzip
import io
import json
import os
import struct
import sys
import threading
import zipfile
import zlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import bayeserr
from bayeserr import data
from bayeserr.base.errors import InputError
from bayeserr.data import memory
from bayeserr.data.readers import archive, read_inspect, read_lmeval, read_logs

from .test_validation import GOOD, _write  # noqa: F401  (shared fixtures)


def _cli_fails(cli, *args, expect=()):
    res = cli(*args)
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output and res.output.startswith("error: ")
    for word in expect:
        assert word in res.output, res.output
    return res.output


# ---------------------------------------------------------------- building logs
def _member(name, payload, method=zipfile.ZIP_DEFLATED, *, flags=0, declared=None, crc=None, raw=None):
    """One zip member, compressed here so that anything can be faked."""
    if raw is None:
        if method == zipfile.ZIP_STORED:
            raw = payload
        elif method == zipfile.ZIP_DEFLATED:
            c = zlib.compressobj(6, zlib.DEFLATED, -15)
            raw = c.compress(payload) + c.flush()
        elif method == archive.ZSTD_METHOD:
            import zstandard
            raw = zstandard.ZstdCompressor().compress(payload)
        elif method == zipfile.ZIP_BZIP2:
            raw = bz2.compress(payload)
        else:
            raise ValueError(method)
    return {"name": name.encode(), "raw": raw, "method": method, "flags": flags,
            "size": len(payload) if declared is None else declared,
            "crc": zlib.crc32(payload) if crc is None else crc}


def _zip(path: Path, members) -> Path:
    """Write a zip archive byte by byte (zipfile cannot write zstd, fake sizes
    or encryption flags)."""
    out, central = bytearray(), bytearray()
    for m in members:
        offset = len(out)
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 63, m["flags"], m["method"], 0, 33, m["crc"],
                           len(m["raw"]), m["size"], len(m["name"]), 0) + m["name"] + m["raw"]
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 63, 63, m["flags"], m["method"], 0, 33,
                               m["crc"], len(m["raw"]), m["size"], len(m["name"]), 0, 0, 0, 0, 0,
                               offset) + m["name"]
    out += central + struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(members), len(members), len(central),
                                 len(out), 0)
    path.write_bytes(bytes(out))
    return path


def _header(model="openai/m1", task="mmlu", created="2025-01-01T00:00:00+00:00"):
    return {"version": 2, "status": "success",
            "eval": {"task": task, "model": model, "created": created, "run_id": "r"},
            "results": {}}


def _sample(i, value="C", epoch=1, **extra):
    return {"id": i, "epoch": epoch, "input": f"question {i}", "scores": {"match": {"value": value}},
            "metadata": {"subject": f"s{i % 2}"}, **extra}


def _log(path: Path, *, model="openai/m1", task="mmlu", created="2025-01-01T00:00:00+00:00", ids=range(1, 11),
         method=zipfile.ZIP_DEFLATED, samples=None, extra=()) -> Path:
    """A small .eval archive in Inspect's layout."""
    if samples is None:
        samples = {f"samples/{i}_epoch_1.json": _sample(i, "C" if i % 3 else "I") for i in ids}
    members = [_member("_journal/start.json", b"{}", method)]
    members += [_member(name, s if isinstance(s, bytes) else json.dumps(s).encode(), method)
                for name, s in samples.items()]
    members.append(_member("header.json", json.dumps(_header(model, task, created)).encode(), method))
    members += list(extra)
    return _zip(path, members)


# ================================================================ silent drops
@pytest.mark.parametrize("sep, name, dup", [(",", "r.csv", "score"), ("\t", "r.tsv", "model"),
                                           (",", "r.csv.gz", "question_id")])
def test_duplicated_header_is_an_error_naming_it(tmp_path, sep, name, dup):
    cols = ["model", "question_id", "score"]
    header = cols + [dup]
    lines = [sep.join(header)] + [sep.join(["A", f"q{i}", "1", "0" if dup == "score" else "x"])
                                  for i in range(4)]
    path = tmp_path / name
    text = "\n".join(lines) + "\n"
    path.write_bytes(gzip.compress(text.encode()) if name.endswith(".gz") else text.encode())
    with pytest.raises(InputError, match=rf"names the column '{dup}' more than once \(columns '{dup}' at \d, 4\)"):
        bayeserr.load(path)


def test_duplicated_header_through_the_cli(cli, tmp_path):
    path = _write(tmp_path, "model,question_id,score,score\n" + "".join(
        f"{m},q{i},1,0\n" for m in "AB" for i in range(3)))
    _cli_fails(cli, "report", path, expect=["'score' more than once", "r.csv", "Rename or remove"])


def test_duplicated_unused_header_is_harmless(tmp_path):
    text = "model,question_id,score,note,note\n" + "".join(f"{m},q{i},1,a,b\n" for m in "AB" for i in range(3))
    assert bayeserr.load(_write(tmp_path, text))["score"].shape == (2, 3, 1)


def test_jsonl_duplicate_key_and_dataframe_duplicate_column(tmp_path):
    lines = [json.dumps({"model": "A", "question_id": f"q{i}", "score": 1}) for i in range(4)]
    lines[2] = '{"model": "A", "question_id": "q2", "score": 1, "score": 0}'
    path = _write(tmp_path, "\n".join(lines) + "\n", "r.jsonl")
    with pytest.raises(InputError, match=r"r\.jsonl, line 3: the key 'score' appears twice"):
        bayeserr.load(path)
    df = pd.DataFrame([["A", "q1", 1, 0], ["A", "q2", 0, 1]], columns=["model", "question_id", "score", "score"])
    with pytest.raises(InputError, match="'score' more than once"):
        bayeserr.load(df)


def test_two_eval_members_with_one_name(tmp_path):
    same = _sample(3, "C")
    other = _sample(3, "I")
    dup = _log(tmp_path / "identical.eval", extra=[_member("samples/3_epoch_1.json", json.dumps(same).encode())],
               samples={f"samples/{i}_epoch_1.json": (same if i == 3 else _sample(i)) for i in range(1, 6)})
    ds = bayeserr.load(dup)
    assert ds.attrs["rows"] == {"read": 6, "used": 5, "dropped": [
        {"reason": "duplicate archive member samples/3_epoch_1.json in identical.eval (identical copy)",
         "count": 1}]}
    clash = _log(tmp_path / "clash.eval", extra=[_member("samples/3_epoch_1.json", json.dumps(other).encode())],
                 samples={f"samples/{i}_epoch_1.json": (same if i == 3 else _sample(i)) for i in range(1, 6)})
    # different copies: the last one is used, as zipfile and Inspect read it (a re-run appends)
    ds = bayeserr.load(clash)
    assert ds.attrs["rows"]["dropped"] == [
        {"reason": "duplicate archive member samples/3_epoch_1.json in clash.eval (an earlier copy, replaced "
                   "by the last one, as Inspect reads it)", "count": 1}]
    assert float(ds["score"].sel(question=[q for q in ds["question"].values if q.endswith("/3")][0]).max()) == 0.0


def test_ids_that_print_the_same_are_one_id(tmp_path):
    """JSONL ids 1 and "1" are one question (ids are compared as text), not
    two questions both labelled "1"."""
    rows = [{"model": "A", "question_id": i, "score": i % 2} for i in range(1, 5)]
    rows += [{"model": "B", "question_id": str(i), "score": 1} for i in range(1, 5)]
    path = _write(tmp_path, "\n".join(map(json.dumps, rows)) + "\n", "r.jsonl")
    ds = bayeserr.load(path)
    assert list(ds["question"].values) == ["1", "2", "3", "4"]
    assert bayeserr.compare(ds, "A", "B").n_questions == 4
    # the same from a DataFrame with a mixed object column
    ds = bayeserr.load(pd.DataFrame(rows))
    assert list(ds["question"].values) == ["1", "2", "3", "4"]
    # one model answering both 1 and "1" answered one question twice
    clash = rows[:4] + [{"model": "A", "question_id": "1", "score": 0}]
    with pytest.raises(InputError, match=r"duplicate \(model, question_id\) rows in 2 row\(s\) \(lines 1, 5\)"):
        bayeserr.load(_write(tmp_path, "\n".join(map(json.dumps, clash)) + "\n", "c.jsonl"))


def test_inspect_ids_are_namespaced_by_task(tmp_path):
    _log(tmp_path / "a.eval", model="m1", task="mmlu")
    _log(tmp_path / "b.eval", model="m2", task="gsm8k")
    ds = bayeserr.load(tmp_path)
    assert {q.split("/")[0] for q in ds["question"].values} == {"mmlu", "gsm8k"}
    assert "mmlu/1" in ds["question"].values and "1" not in ds["question"].values
    with pytest.raises(InputError, match="do not share the same question set") as err:
        bayeserr.compare(ds, "m1", "m2")
    assert "'m1' answered 10 question(s) that 'm2' did not" in str(err.value)
    # the same task read alone keeps the same ids (they do not depend on the folder)
    df, _ = read_inspect(tmp_path / "a.eval")
    assert df["question_id"].iloc[0].startswith("mmlu/")


def test_inspect_rerun_is_an_error_naming_the_files_or_latest_wins(tmp_path, cli):
    _log(tmp_path / "old.eval", created="2025-01-01T10:00:00+00:00", ids=range(1, 11))
    _log(tmp_path / "new.eval", created="2025-01-02T10:00:00+00:00", ids=range(1, 11))
    _log(tmp_path / "other.eval", model="m2", ids=range(1, 11))
    with pytest.raises(InputError, match=r"new\.eval \(created 2025-01-02.*\) and old\.eval .* two runs of "
                                         r"task 'mmlu' with model 'openai/m1'.*duplicate_runs='latest'"):
        bayeserr.load(tmp_path)
    _cli_fails(cli, "report", tmp_path, expect=["old.eval", "new.eval", "--duplicate-runs latest"])
    ds = bayeserr.load(tmp_path, duplicate_runs="latest")
    assert ds.attrs["rows"] == {"read": 30, "used": 20, "dropped": [
        {"reason": "older run of mmlu with openai/m1: old.eval (kept new.eval)", "count": 10}]}
    # passed through read_logs as well
    df, dropped = read_logs(tmp_path, duplicate_runs="latest")
    assert len(df) == 20 and dropped[0][1] == 10
    with pytest.raises(InputError, match="duplicate_runs must be one of error, latest"):
        bayeserr.load(tmp_path, duplicate_runs="newest")


def test_inspect_run_split_in_disjoint_parts_is_read_whole(tmp_path):
    _log(tmp_path / "part1.eval", ids=range(1, 6))
    _log(tmp_path / "part2.eval", ids=range(6, 11), created="2025-01-03T00:00:00+00:00")
    ds = bayeserr.load(tmp_path)
    assert ds.sizes["question"] == 10 and ds.attrs["rows"]["dropped"] == []


def test_lmeval_rerun_keeps_the_latest(tmp_path):
    folder = tmp_path / "m"
    folder.mkdir()
    for date, acc in (("2025-01-01T00-00-00.000000", 0), ("2025-02-01T00-00-00.000000", 1)):
        lines = [json.dumps({"doc_id": i, "filter": "none", "acc": acc if i else 1 - acc}) for i in range(5)]
        (folder / f"samples_arc_{date}.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match="two runs of task 'arc' with model 'm'"):
        read_lmeval(tmp_path)
    df, dropped = read_lmeval(tmp_path, duplicate_runs="latest")
    assert df["score"].tolist() == [0, 1, 1, 1, 1]
    assert dropped == [("older run of arc with m: samples_arc_2025-01-01T00-00-00.000000.jsonl "
                        "(kept samples_arc_2025-02-01T00-00-00.000000.jsonl)", 5)]


def test_duplicate_rows_inside_one_log_name_the_members(tmp_path):
    samples = {f"samples/{i}_epoch_1.json": _sample(i) for i in range(1, 5)}
    samples["samples/4b_epoch_1.json"] = _sample(4)
    path = _log(tmp_path / "x.eval", samples=samples)
    with pytest.raises(InputError, match=r"duplicate \(model, question_id, sample\) rows in 2 row\(s\) "
                                         r"\(x\.eval samples/4_epoch_1\.json, x\.eval samples/4b_epoch_1\.json\)"):
        bayeserr.load(path)


# ================================================================ archives: size bounds
def test_member_declaring_more_than_the_limit_is_refused_before_inflating(tmp_path, monkeypatch):
    monkeypatch.setattr(archive, "MAX_MEMBER_BYTES", 1 << 20)
    big = json.dumps(_sample(1, "C", input="x" * (5 << 20))).encode()  # 5 MiB, a few KiB compressed
    path = _log(tmp_path / "bomb.eval", samples={"samples/1_epoch_1.json": big, "samples/2_epoch_1.json": _sample(2)})
    assert path.stat().st_size < 50_000
    with pytest.raises(InputError, match=r"bomb\.eval, member samples/1_epoch_1\.json: declares 5\.0 MiB "
                                         r"uncompressed, above the limit of 1\.0 MiB per member"):
        bayeserr.load(path)


def test_real_size_bomb_declared_honestly(tmp_path):
    """An entry that declares 3 GiB is refused from its declared size alone."""
    payload = b"\0" * 1000
    member = _member("samples/1_epoch_1.json", payload, archive.ZSTD_METHOD, declared=3 << 30)
    path = _log(tmp_path / "honest.eval", samples={"samples/2_epoch_1.json": _sample(2)}, extra=[member])
    with pytest.raises(InputError, match=r"member samples/1_epoch_1\.json: declares 3\.0 GiB uncompressed"):
        bayeserr.load(path)


def test_zstd_frame_header_does_not_override_the_declared_size(tmp_path):
    """A zstd member whose entry declares 200 bytes but whose frame inflates to
    1.5 GiB stops at 200 bytes instead of allocating 1.5 GiB."""
    import zstandard
    buf = io.BytesIO()
    total, chunk = 3 << 29, b"\0" * (1 << 24)  # 1.5 GiB of zeros, content size in the frame header
    with zstandard.ZstdCompressor(level=1).stream_writer(buf, size=total, closefd=False) as w:
        for _ in range(total // len(chunk)):
            w.write(chunk)
    raw = buf.getvalue()
    assert len(raw) < 200_000
    member = _member("samples/1_epoch_1.json", b"{}", archive.ZSTD_METHOD, declared=200, raw=raw)
    path = _log(tmp_path / "liar.eval", samples={"samples/2_epoch_1.json": _sample(2)}, extra=[member])
    with pytest.raises(InputError, match=r"liar\.eval, member samples/1_epoch_1\.json: inflates past the 200 "
                                         r"bytes its entry declares"):
        bayeserr.load(path)


def test_deflate_member_inflating_past_its_declared_size(tmp_path):
    payload = json.dumps(_sample(1, "C", input="y" * 100_000)).encode()
    member = _member("samples/1_epoch_1.json", payload, declared=200, crc=zlib.crc32(payload[:200]) ^ 1)
    path = _log(tmp_path / "liar.eval", samples={"samples/2_epoch_1.json": _sample(2)}, extra=[member])
    with pytest.raises(InputError, match=r"liar\.eval, member samples/1_epoch_1\.json: "):
        bayeserr.load(path)


def test_archive_total_limit(tmp_path, monkeypatch):
    path = _log(tmp_path / "many.eval")
    monkeypatch.setattr(archive, "MAX_ARCHIVE_BYTES", 500)
    with pytest.raises(InputError, match=r"many\.eval, member .*inflates past 500 bytes in total"):
        bayeserr.load(path)


# ================================================================ archives: malformed
def _bad_crc(tmp_path):
    payload = json.dumps(_sample(1)).encode()
    return _log(tmp_path / "x.eval", samples={"samples/2_epoch_1.json": _sample(2)},
                extra=[_member("samples/1_epoch_1.json", payload, zipfile.ZIP_STORED, crc=zlib.crc32(payload) ^ 7)])


def _bad_crc_zstd(tmp_path):
    payload = json.dumps(_sample(1)).encode()
    return _log(tmp_path / "x.eval", samples={"samples/2_epoch_1.json": _sample(2)},
                extra=[_member("samples/1_epoch_1.json", payload, archive.ZSTD_METHOD,
                               crc=zlib.crc32(payload) ^ 7)])


def _corrupt_zstd(tmp_path):
    payload = json.dumps(_sample(1)).encode()
    return _log(tmp_path / "x.eval", samples={"samples/2_epoch_1.json": _sample(2)},
                extra=[_member("samples/1_epoch_1.json", payload, archive.ZSTD_METHOD,
                               raw=b"\x28\xb5\x2f\xfdjunk" * 9)])


def _truncated_zstd(tmp_path):
    import zstandard
    payload = json.dumps(_sample(1, input="z" * 5000)).encode()
    raw = zstandard.ZstdCompressor().compress(payload)
    return _log(tmp_path / "x.eval", samples={"samples/2_epoch_1.json": _sample(2)},
                extra=[_member("samples/1_epoch_1.json", payload, archive.ZSTD_METHOD,
                               raw=raw[: len(raw) // 2])])


def _truncated_deflate(tmp_path):
    payload = json.dumps(_sample(1, input="z" * 5000)).encode()
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    raw = c.compress(payload) + c.flush()
    return _log(tmp_path / "x.eval", samples={"samples/2_epoch_1.json": _sample(2)},
                extra=[_member("samples/1_epoch_1.json", payload, raw=raw[: len(raw) // 2])])


def _encrypted(tmp_path):
    return _log(tmp_path / "x.eval", samples={"samples/2_epoch_1.json": _sample(2)},
                extra=[_member("samples/1_epoch_1.json", json.dumps(_sample(1)).encode(), flags=0x1)])


def _bzip2(tmp_path):
    return _log(tmp_path / "x.eval", samples={"samples/2_epoch_1.json": _sample(2)},
                extra=[_member("samples/1_epoch_1.json", json.dumps(_sample(1)).encode(), zipfile.ZIP_BZIP2)])


def _samples(tmp_path, sample):
    return _log(tmp_path / "x.eval", samples={"samples/1_epoch_1.json": sample, "samples/2_epoch_1.json": _sample(2)})


def _bad_header(tmp_path):
    path = tmp_path / "x.eval"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("samples/1_epoch_1.json", json.dumps(_sample(1)))
        z.writestr("header.json", b'{"eval": {"task": "t", "model": "m"')
    return path


def _not_a_zip(tmp_path):
    path = tmp_path / "x.eval"
    path.write_bytes(b"PK\x03\x04 this is not really a zip")
    return path


MALFORMED = {
    "bad CRC": (_bad_crc, r"x\.eval, member samples/1_epoch_1\.json: cannot be decompressed \(BadZipFile: Bad CRC-32"),
    "bad CRC zstd": (_bad_crc_zstd, r"x\.eval, member samples/1_epoch_1\.json: bad CRC-32"),
    "corrupt zstd": (_corrupt_zstd, r"x\.eval, member samples/1_epoch_1\.json: cannot be decompressed \(ZstdError"),
    "truncated zstd": (_truncated_zstd, r"x\.eval, member samples/1_epoch_1\.json: inflates to \d+ bytes, not the"),
    "truncated deflate": (_truncated_deflate, r"x\.eval, member samples/1_epoch_1\.json: cannot be decompressed"),
    "encrypted": (_encrypted, r"x\.eval, member samples/1_epoch_1\.json: the member is encrypted"),
    "bzip2": (_bzip2, r"x\.eval, member samples/1_epoch_1\.json: compression method 12 is not supported"),
    "sample is a list": (lambda p: _samples(p, [1, 2]),
                         r"member samples/1_epoch_1\.json: the sample is list \[1, 2\], not a JSON object"),
    "sample is null": (lambda p: _samples(p, None),
                       r"member samples/1_epoch_1\.json: the sample is NoneType None"),
    "epoch null": (lambda p: _samples(p, _sample(1, epoch=None)),
                   r"samples/1_epoch_1\.json: sample 1 has epoch NoneType None"),
    "epoch text": (lambda p: _samples(p, _sample(1, epoch="two")),
                   r"sample 1 has epoch str 'two'; an epoch is a whole number"),
    "id missing": (lambda p: _samples(p, {"epoch": 1, "scores": {}}), r"the sample id is NoneType None"),
    "scores a list": (lambda p: _samples(p, _sample(1, scores=[1])), r"sample 1 has 'scores' of list"),
    "invalid JSON sample": (lambda p: _samples(p, b'{"id": 1, "epoch": '), r"samples/1_epoch_1\.json: not valid JSON"),
    "invalid UTF-8 sample": (lambda p: _samples(p, b'{"id": 1, "input": "\xff\xfe\xfa"}'),
                             r"samples/1_epoch_1\.json: not UTF-8 text"),
    "deep JSON sample": (lambda p: _samples(p, b"[" * 200_000), r"samples/1_epoch_1\.json: not valid JSON"),
    "invalid JSON header": (_bad_header, r"x\.eval, member header\.json: not valid JSON"),
    "not a zip": (_not_a_zip, r"x\.eval: not a readable \.eval archive"),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_malformed_eval_logs(tmp_path, case, cli):
    build, message = MALFORMED[case]
    path = build(tmp_path)
    with pytest.raises(InputError, match=message):
        bayeserr.load(path)
    _cli_fails(cli, "report", path, expect=["x.eval"])


def test_malformed_json_logs(tmp_path):
    path = tmp_path / "log.json"
    path.write_bytes(b'{"eval": {"task": "t", "model": "m"}, "samples": {"1": 2}}')
    with pytest.raises(InputError, match=r"log\.json: 'samples' is dict"):
        bayeserr.load(path)
    path.write_bytes(json.dumps({"eval": {"task": "t", "model": "m"}, "samples": [_sample(1), None]}).encode())
    with pytest.raises(InputError, match=r"log\.json, samples\[1\]: the sample is NoneType None"):
        bayeserr.load(path)
    path.write_bytes(b'{"eval": {"task": "t", "model": "m"}, "samples": [\xff]}')
    with pytest.raises(InputError, match=r"log\.json: not UTF-8 text"):
        bayeserr.load(path)


def _lmeval(tmp_path, lines):
    folder = tmp_path / "org__m"
    folder.mkdir(exist_ok=True)
    path = folder / "samples_arc_2025-01-01T00-00-00.000000.jsonl"
    path.write_text("\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n")
    return path


@pytest.mark.parametrize("bad, message", [
    ('{"doc_id": 3, "filter": "none", "acc": ', r"line 4: not valid JSON"),
    ({"filter": "none", "acc": 1}, r"line 4: the record has no 'doc_id'"),
    ("[1, 2]", r"line 4: list \[1, 2\] rather than a JSON object"),
])
def test_lmeval_bad_line(tmp_path, cli, bad, message):
    good = [{"doc_id": i, "filter": "none", "acc": i % 2} for i in range(3)]
    path = _lmeval(tmp_path, good + [bad] + [{"doc_id": 9, "filter": "none", "acc": 1}])
    with pytest.raises(InputError, match=r"samples_arc_2025-01-01T00-00-00\.000000\.jsonl, " + message):
        bayeserr.load(tmp_path)
    _cli_fails(cli, "report", path, expect=["line 4"])


def test_lmeval_bad_score_names_the_line(tmp_path):
    lines = [{"doc_id": i, "filter": "none", "acc": 1} for i in range(4)]
    lines[2]["acc"] = "high"
    _lmeval(tmp_path, lines)
    with pytest.raises(InputError, match=r"is not a number in 1 row\(s\) \(org__m/samples_arc_.*\.jsonl line 3\)"):
        bayeserr.load(tmp_path)


# ================================================================ reading once: pipes and stdin
def test_fifo_with_numeric_ids_is_read_once(tmp_path):
    if not hasattr(os, "mkfifo"):
        pytest.skip("no named pipes on this platform")
    fifo = tmp_path / "x.csv"
    os.mkfifo(fifo)
    text = "model,question_id,score\n" + "".join(f"{m},{i:03d},{i % 2}\n" for m in "AB" for i in range(1, 7))

    def writer():
        with open(fifo, "w") as fh:
            fh.write(text)

    result = {}

    def reader():
        try:
            result["ds"] = bayeserr.load(fifo)
        except Exception as exc:  # reported below
            result["error"] = exc

    threads = [threading.Thread(target=f, daemon=True) for f in (writer, reader)]
    for t in threads:
        t.start()
    threads[1].join(timeout=30)
    hung = threads[1].is_alive()
    if hung:  # release a reader blocked on a second open, then fail
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
    assert not hung, "load() hung on a pipe (read it twice?)"
    assert "error" not in result, result.get("error")
    assert list(result["ds"]["question"].values)[:2] == ["001", "002"]


@pytest.mark.parametrize("payload, input_format", [
    (GOOD.encode(), "auto"),
    (GOOD.replace(",", "\t").encode(), "auto"),
    (gzip.compress(GOOD.encode()), "auto"),
    (pd.read_csv(io.StringIO(GOOD)).to_json(orient="records", lines=True).encode(), "auto"),
    (GOOD.replace(",", ";").encode(), None),  # a format pandas would misread: explicit hint below
    (GOOD.encode(), "csv"),
])
def test_standard_input(monkeypatch, payload, input_format):
    fake = io.TextIOWrapper(io.BytesIO(payload))
    monkeypatch.setattr(sys, "stdin", fake)
    if input_format is None:
        with pytest.raises(InputError, match="standard input: no 'model' column"):
            bayeserr.load("-")
        return
    ds = bayeserr.load("-", input_format=input_format)
    assert ds.attrs["source"] == "standard input" and ds["score"].shape == (2, 6, 1)


def test_standard_input_parquet_and_logs(monkeypatch):
    buf = io.BytesIO()
    pd.read_csv(io.StringIO(GOOD)).to_parquet(buf)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(buf.getvalue())))
    assert bayeserr.load("-")["score"].shape == (2, 6, 1)
    with pytest.raises(InputError, match="inspect logs are read from a file or a folder, not standard input"):
        bayeserr.load("-", input_format="inspect")


def test_standard_input_through_the_cli(tmp_path):
    import subprocess
    proc = subprocess.run([sys.executable, "-m", "bayeserr.cli", "report", "-", "--format", "json",
                           "--bayes", "off"], input=GOOD.encode(), capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["rows"]["read"] == 12


def test_explicit_table_format_for_an_odd_name(tmp_path):
    path = _write(tmp_path, GOOD, "results.dat")
    with pytest.raises(InputError, match="cannot tell the format.*--input-format"):
        bayeserr.load(path)
    assert bayeserr.load(path, input_format="csv")["score"].shape == (2, 6, 1)


# ================================================================ row numbers with --models
def test_row_numbers_refer_to_the_file_with_models(tmp_path, cli):
    text = "model,question_id,score\n" + "A,q1,1\nA,q2,0\nB,q1,1\nB,q2,2\nC,q1,1\nC,q2,0\n"
    path = _write(tmp_path, text)
    with pytest.raises(InputError, match=r"outside \[0, 1\] in 1 row\(s\) \(data rows 4, counting from 1 after"):
        bayeserr.load(path, models=["B", "C"])
    _cli_fails(cli, "compare", path, "B", "C", expect=["data rows 4,"])
    lines = "\n".join(json.dumps({"model": m, "question_id": q, "score": s})
                      for m, q, s in [("A", 1, 1), ("A", 2, 0), ("B", 1, 1), ("B", 2, None)])
    with pytest.raises(InputError, match=r"missing in 1 row\(s\) \(lines 5\)"):
        bayeserr.load(_write(tmp_path, "\n" + lines + "\n", "r.jsonl"), models=["B"])


# ================================================================ API misuse
@pytest.mark.parametrize("source, message", [
    (None, "got NoneType None"),
    (42, "got int 42"),
    ("", "needs the path of a results file"),
    ("   ", "needs the path of a results file"),
    ([], "at least one input"),  # a list of inputs is several inputs (tests/data/test_inputs.py)
    (b"r.csv", "got bytes"),
    (pd.Series([1, 2]), "got Series"),
    (pd.DataFrame(), "no columns at all"),
    (pd.DataFrame(columns=["model", "question_id", "score"]), "the DataFrame has no rows"),
    (pd.DataFrame({"a": [1]}), "no 'model' column"),
])
def test_load_misuse(source, message):
    with pytest.raises(InputError, match=message):
        bayeserr.load(source)


def test_load_misuse_of_paths_and_arguments(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InputError, match="a folder with no Inspect logs"):
        bayeserr.load(empty)
    (empty / "r.csv").write_text(GOOD)
    with pytest.raises(InputError, match="a folder with no Inspect logs"):
        bayeserr.load(empty)
    with pytest.raises(InputError, match="a folder, not a results file"):
        bayeserr.load(empty, input_format="csv")
    good = _write(tmp_path, GOOD)
    header_only = _write(tmp_path, "model,question_id,score\n", "h.csv")
    with pytest.raises(InputError, match="h.csv: no data rows"):
        bayeserr.load(header_only)
    with pytest.raises(InputError, match=r"the file is empty \(no header line\)"):
        bayeserr.load(_write(tmp_path, "", "e.csv"))
    with pytest.raises(InputError, match="r.jsonl: no columns at all"):
        bayeserr.load(_write(tmp_path, "\n\n", "r.jsonl"))
    for kwargs, message in [
        ({"model_col": 3}, "--model-col takes a non-empty name"),
        ({"score_col": ""}, "--score-col takes a non-empty name"),
        ({"models": 5}, "models takes a list of model names; got int 5"),
        ({"models": [None]}, "models takes model names"),
        ({"input_format": "xlsx"}, "--input-format str 'xlsx' is unknown"),
        ({"input_format": None}, "--input-format NoneType None is unknown"),
        ({"duplicate_runs": "newest"}, "duplicate_runs must be one of"),
        ({"dropped": 5}, "dropped takes .reason, count. pairs"),
        ({"name": 7}, "name takes a non-empty name"),
    ]:
        with pytest.raises(InputError, match=message):
            bayeserr.load(good, **kwargs)
    # a single model name is a list of one; int column names are compared as text
    assert bayeserr.load(good, models="A")["model"].values.tolist() == ["A"]
    df = pd.read_csv(good).set_axis([0, 1, 2], axis=1)
    assert bayeserr.load(df, model_col="0", question_col="1", score_col="2")["score"].shape == (2, 6, 1)


def test_bad_text_files_are_input_errors(tmp_path):
    path = tmp_path / "r.csv"
    path.write_bytes(b"model,question_id,score\nA,q1,1\nA,q\xff\xfe,0\n")
    with pytest.raises(InputError, match="r.csv: could not be read as csv"):
        bayeserr.load(path)
    bad = tmp_path / "r.parquet"
    bad.write_bytes(b"PAR1 not really")
    with pytest.raises(InputError, match="r.parquet: could not be read as parquet"):
        bayeserr.load(bad)
    gz = tmp_path / "r.csv.gz"
    gz.write_bytes(gzip.compress(GOOD.encode())[:30])
    with pytest.raises(InputError, match="r.csv.gz"):
        bayeserr.load(gz)


# ================================================================ size
def test_dense_cube_limit(tmp_path, monkeypatch):
    path = _write(tmp_path, GOOD)
    monkeypatch.setattr(memory, "MAX_CUBE_BYTES", 64)
    with pytest.raises(InputError, match=r"r\.csv: the score array would need 96 bytes \(2 models × 6 questions "
                                         r"× 1 samples × 8 bytes\), more than the limit .*--models"):
        bayeserr.load(path)
    assert bayeserr.load(path, models=["A"])["score"].shape == (1, 6, 1)
    monkeypatch.setattr(memory, "MAX_CUBE_BYTES", 8 << 30)
    monkeypatch.setattr(memory, "available_memory", lambda: 80)
    with pytest.raises(InputError, match="more than the memory available now"):
        bayeserr.load(path)


def test_ids_are_read_as_categories(tmp_path):
    """Identifier columns are read as categories (text): leading zeros stay,
    and a million-row file holds each id string once."""
    text = "model,question_id,cluster_id,score\n" + "".join(
        f"m{m},{i:03d},{i // 2:02d},{(i + m) % 2}\n" for m in range(2) for i in range(6))
    df = data.read_table(_write(tmp_path, text), ("model", "question_id", "cluster_id"), categorical=True)
    assert all(isinstance(df[c].dtype, pd.CategoricalDtype) for c in ("model", "question_id", "cluster_id"))
    ds = bayeserr.load(tmp_path / "r.csv")
    assert list(ds["question"].values[:2]) == ["000", "001"] and ds["cluster"].values[0] == "00"
    assert np.isfinite(ds["score"].values).sum() == 12
