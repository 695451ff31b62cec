"""Eval-log readers: Inspect AI (.eval zip, zstd .eval, .json, folders) and
lm-evaluation-harness samples, through the API and the CLI."""

import json
import shutil
import struct
import zipfile
import zlib
from pathlib import Path

import numpy as np
import pytest

import bayeserr
from bayeserr.data.readers import (
    detect,
    inspect_value_to_float,
    read_inspect,
    read_lmeval,
)

from ...conftest import SHARED

LOGS = SHARED / "data" / "inspect-logs"
DONE = "2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval"
UNFINISHED = "2025-02-11T15-17-00-05-00_popularity_dPiJifoWeEQBrfWsAopzWr.eval"


def log(name):
    path = LOGS / name
    if not path.exists():
        pytest.skip("../shared/data/inspect-logs absent")
    return path


def test_inspect_ten_sample_log_matches_inspects_own_numbers(cli_json):
    m = bayeserr.score(bayeserr.load(log(DONE)))["openai/gpt-4o-mini"]
    assert m.mean == pytest.approx(0.8) and m.se_clt == pytest.approx(0.13333333, abs=1e-6)
    header = json.loads(zipfile.ZipFile(log(DONE)).read("header.json"))
    metrics = header["results"]["scores"][0]["metrics"]
    assert m.mean == pytest.approx(metrics["accuracy"]["value"])
    assert m.se_clt == pytest.approx(metrics["stderr"]["value"])
    rep = cli_json("report", log(DONE))
    assert rep["rows"] == {"read": 10, "used": 10, "dropped": []}


def test_unfinished_log_gives_a_clear_message(cli):
    res = cli("report", log(UNFINISHED))
    assert res.exit_code == 2 and "unfinished" in res.output and "Traceback" not in res.output


def test_folder_skips_unscored_logs_and_counts_them(tmp_path, cli_json):
    for name in (DONE, UNFINISHED):
        shutil.copy(log(name), tmp_path / name)
    rep = cli_json("report", tmp_path)
    assert rep["rows"]["used"] == 10 and rep["rows"]["read"] == 20
    assert rep["rows"]["dropped"] == [{"reason": f"unscored log {UNFINISHED}", "count": 10}]


def test_json_log_metadata_cluster_and_letter_mapping():
    path = log("2025-05-12T20-28-13-04-00_popularity.json")
    df, _ = read_inspect(path)
    assert len(df) == 3 and set(df["sample"]) == {1}
    df, _ = read_inspect(log("mmlu-summary-choices.eval"), cluster_field="subject")
    assert df.loc[0, "cluster_id"] == "college_physics" and df.loc[0, "score"] == 0.0  # 'I'
    assert [inspect_value_to_float(v, "x") for v in ("C", "I", "P", "N", "yes", "False", 0.25, True)] == \
        [1, 0, 0.5, 0, 1, 0, 0.25, 1]
    with pytest.raises(bayeserr.InputError, match="Pick another --scorer"):
        inspect_value_to_float("maybe", "x")


def _zstd_copy(src: Path, dst: Path):
    """Rewrite an archive with every member Zstandard-compressed (zip method
    93), as newer Inspect writes them; zipfile cannot write this itself."""
    import zstandard
    members = [(i.filename, zipfile.ZipFile(src).read(i)) for i in zipfile.ZipFile(src).infolist()]
    out, central = bytearray(), bytearray()
    for name, data in members:
        comp = zstandard.ZstdCompressor().compress(data)
        crc, fname = zlib.crc32(data), name.encode()
        offset = len(out)
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 63, 0, 93, 0, 0, crc, len(comp), len(data), len(fname), 0)
        out += fname + comp
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 63, 63, 0, 93, 0, 0, crc, len(comp),
                               len(data), len(fname), 0, 0, 0, 0, 0, offset) + fname
    eocd = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(members), len(members), len(central), len(out), 0)
    dst.write_bytes(bytes(out + central + eocd))


def test_zstd_compressed_eval_archive(tmp_path):
    dst = tmp_path / "zstd.eval"
    _zstd_copy(log(DONE), dst)
    assert {i.compress_type for i in zipfile.ZipFile(dst).infolist()} == {93}
    a, _ = read_inspect(dst)
    b, _ = read_inspect(log(DONE))
    assert a.sort_values("question_id").reset_index(drop=True).equals(
        b.sort_values("question_id").reset_index(drop=True))


# ------------------------------------------------------------------ lm-eval
def _lmeval_output(root: Path, model: str, scores: dict, task="arc_easy", filters=("none",)):
    """An lm-evaluation-harness output folder in its exact shape."""
    folder = root / model.replace("/", "__")
    folder.mkdir(parents=True)
    (folder / "results_2025-01-01T00-00-00.000000.json").write_text(json.dumps(
        {"results": {task: {"acc,none": float(np.mean(scores["acc"]))}}, "model_name": model,
         "config": {"model": "hf", "model_args": f"pretrained={model}"}}))
    lines = []
    for f in filters:
        for i, (acc, acc_norm) in enumerate(zip(scores["acc"], scores["acc_norm"])):
            lines.append(json.dumps({
                "doc_id": i, "doc": {"question": f"q{i}"}, "target": 0,
                "arguments": [[f"Q{i}", " A"]], "resps": [[[-1.2, False]]], "filtered_resps": [[-1.2, False]],
                "filter": f, "metrics": ["acc", "acc_norm"], "doc_hash": "h", "prompt_hash": "p",
                "target_hash": "t", "acc": acc, "acc_norm": acc_norm}))
    (folder / f"samples_{task}_2025-01-01T00-00-00.000000.jsonl").write_text("\n".join(lines) + "\n")


def test_lmeval_folder_with_two_models(tmp_path, cli_json, cli):
    rng = np.random.default_rng(0)
    a = (rng.random(40) < 0.7).astype(float)
    b = (rng.random(40) < 0.5).astype(float)
    _lmeval_output(tmp_path, "org/model-a", {"acc": a, "acc_norm": 1 - a})
    _lmeval_output(tmp_path, "org/model-b", {"acc": b, "acc_norm": 1 - b})
    assert detect(tmp_path) == "lm-eval"
    rep = cli_json("report", tmp_path)
    means = {m["model"]: m["mean"] for m in rep["models"]}
    assert means == {"org/model-a": pytest.approx(a.mean()), "org/model-b": pytest.approx(b.mean())}
    c = rep["comparisons"][0]
    assert c["n_questions"] == 40 and c["mcnemar"] is not None
    norm = cli_json("report", tmp_path, "--metric", "acc_norm")
    assert {m["model"]: m["mean"] for m in norm["models"]}["org/model-a"] == pytest.approx(1 - a.mean())
    res = cli("report", tmp_path, "--metric", "accc")
    assert res.exit_code == 2 and "Did you mean 'acc'" in res.output


def test_lmeval_filters_are_chosen_and_counted(tmp_path):
    _lmeval_output(tmp_path, "m", {"acc": [1, 0, 1], "acc_norm": [1, 1, 1]}, filters=("strict", "flexible"))
    with pytest.raises(bayeserr.InputError, match="--filter"):
        read_lmeval(tmp_path)
    df, dropped = read_lmeval(tmp_path, filt="strict")
    assert len(df) == 3 and dropped == [("other lm-eval filter", 3)]
