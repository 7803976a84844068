"""Files that cannot be read as datasets, and repeated ids (issue 24 item 1): one DatasetError naming the file
and the fix (the CLI: one line, exit 2) instead of a traceback, a blocked read or a wrong result."""

from __future__ import annotations

import copy
import json
import os
import pathlib
import subprocess
import sys
from pathlib import Path

import pytest

from memcore.datasets import DEMO_PATH, DatasetWarning, load_dataset, load_demo
from memcore.errors import DatasetError

ROOT = Path(__file__).resolve().parents[2]
LME = json.loads((ROOT / "tests" / "fixtures" / "longmemeval_small.json").read_text(encoding="utf-8"))


def _cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    env = {**os.environ, "MEMCORE_EMBEDDER": "hashing", "MEMCORE_LLM_PROVIDER": "offline", "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "memcore.cli", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)


# ---- repeated ids ---------------------------------------------------------------------------------------


def _lme_pair(tmp_path: Path, same: bool) -> Path:
    a = copy.deepcopy(LME[0])
    b = copy.deepcopy(a)
    if not same:
        b["haystack_sessions"][1][0]["content"] = "My degree is in Fine Arts; I want to paint."
        b["answer"] = "Fine Arts"
    p = tmp_path / "lme.json"
    p.write_text(json.dumps([a, b]), encoding="utf-8")
    return p


@pytest.mark.parametrize("same", [False, True])
def test_a_repeated_longmemeval_question_id_is_an_error_naming_both_items(tmp_path, same):
    with pytest.raises(DatasetError) as e:
        load_dataset(_lme_pair(tmp_path, same))
    msg = str(e.value)
    assert "[1] (e47becba)" in msg and "also used at [0] (e47becba)" in msg and "question_id" in msg


def test_lenient_gives_a_different_item_its_own_id_and_memory_and_skips_an_identical_one(tmp_path):
    with pytest.warns(DatasetWarning, match=r"loaded as 'e47becba~2'.*1 repeated question_id"):
        convs = load_dataset(_lme_pair(tmp_path, same=False), lenient=True)
    assert [c.id for c in convs] == ["e47becba", "e47becba~2"]
    second = convs[1]
    assert second.questions[0].id == "e47becba~2" and second.questions[0].answer == "Fine Arts"
    assert "Fine Arts" in second.turns[2].text and second.metadata["dataset_id"] == "e47becba"
    with pytest.warns(DatasetWarning, match="same content; lenient: skipped"):
        assert len(load_dataset(_lme_pair(tmp_path, same=True), lenient=True)) == 1


def test_eval_of_a_file_with_a_repeated_id_exits_2_and_scores_nothing(tmp_path):
    res = _cli("eval", "--dataset", "longmemeval", "--file", str(_lme_pair(tmp_path, same=False)),
               "--systems", "naive_rag", "--store", str(tmp_path / "store"), "--out", str(tmp_path / "r.json"))
    assert res.returncode == 2, res.stdout + res.stderr
    assert "also used at [0]" in res.stderr and "Traceback" not in res.stderr
    assert not (tmp_path / "r.json").exists()


def test_a_repeated_locomo_sample_id_is_an_error(tmp_path):
    raw = json.loads(DEMO_PATH.read_text(encoding="utf-8"))
    flat = {k: v for k, v in raw.items() if k not in ("sample_id", "qa")}
    sample = {"sample_id": "s1", "conversation": flat, "qa": raw["qa"]}
    other = copy.deepcopy(sample)
    other["qa"] = other["qa"][:1]
    p = tmp_path / "locomo10.json"
    p.write_text(json.dumps([sample, other]), encoding="utf-8")
    with pytest.raises(DatasetError, match=r"\[1\]: sample_id 's1' is also used at \[0\]"):
        load_dataset(p)
    with pytest.warns(DatasetWarning):
        convs = load_dataset(p, lenient=True)
    assert [c.id for c in convs] == ["s1", "s1~2"] and [len(c.questions) for c in convs] == [len(raw["qa"]), 1]


def test_a_repeated_chat_question_id_is_an_error_naming_both_lines(tmp_path):
    p = tmp_path / "c.jsonl"
    p.write_text('{"speaker": "A", "text": "I have a red bike.", "date": "2024-03-01 10:00"}\n'
                 '{"type": "question", "id": "q1", "question": "Bike colour?", "answer": "red"}\n'
                 '{"type": "question", "id": "q1", "question": "Bike owner?", "answer": "A"}\n', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"line 3: question id 'q1' is also used at line 2"):
        load_dataset(p)


# ---- files that are no readable dataset ---------------------------------------------------------------


def test_deep_nesting_is_a_message_not_a_recursion_error(tmp_path):
    p = tmp_path / "deep.json"
    p.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    with pytest.raises(DatasetError, match="nests too deeply"):
        load_dataset(p)
    q = tmp_path / "deep.jsonl"
    q.write_text('{"a": ' * 100_000 + "1" + "}" * 100_000 + "\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="line 1 nests too deeply"):
        load_dataset(q)
    res = _cli("ingest", str(p), "--store", str(tmp_path / "store"))
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert res.stderr.strip().count("\n") == 0 and str(p) in res.stderr and "Fix:" in res.stderr


def test_an_unreadable_file_is_named_with_the_fix(tmp_path, monkeypatch):
    p = tmp_path / "locked.json"
    p.write_text(DEMO_PATH.read_text(encoding="utf-8"), encoding="utf-8")
    real_open = pathlib.Path.open

    def refuse(self, *a, **k):  # root reads any file whatever its mode: refuse as the kernel would for others
        if self == p:
            raise PermissionError(13, "Permission denied", str(self))
        return real_open(self, *a, **k)

    monkeypatch.setattr(pathlib.Path, "open", refuse)
    with pytest.raises(DatasetError, match=r"locked.json: cannot be read \(permission denied\). Fix: make it readable"):
        load_dataset(p)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
@pytest.mark.parametrize("name", ["pipe.json", "pipe.jsonl"])
def test_a_fifo_is_refused_at_once_without_blocking(tmp_path, name):
    fifo = tmp_path / name
    os.mkfifo(fifo)
    res = _cli("ingest", str(fifo), "--store", str(tmp_path / "store"), timeout=60)  # the old code blocked here
    assert res.returncode == 2, res.stderr
    assert "is a FIFO (named pipe), not a regular file" in res.stderr and res.stderr.strip().count("\n") == 0
    with pytest.raises(DatasetError, match="FIFO"):
        load_dataset(fifo, fmt="locomo")


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le", "utf-32-be"])
def test_utf16_and_utf32_with_or_without_bom_are_read(tmp_path, encoding):
    p = tmp_path / "demo.json"
    p.write_bytes(DEMO_PATH.read_text(encoding="utf-8").encode(encoding))
    [conv] = load_dataset(p)
    assert conv.turns == load_demo().turns


def test_a_file_that_does_not_decode_names_the_detected_encoding(tmp_path):
    p = tmp_path / "bad.json"
    p.write_bytes('{"a": 1}'.encode("utf-16-le") + b"\x00\xd8")  # a lone surrogate
    with pytest.raises(DatasetError, match="is not UTF-16-LE text"):
        load_dataset(p)


@pytest.mark.parametrize("value", ['"just a string"', "42", "null", "true"])
def test_a_top_level_scalar_gets_a_message_without_python_argument_names(tmp_path, value):
    p = tmp_path / "x.json"
    p.write_text(value, encoding="utf-8")
    with pytest.raises(DatasetError) as e:
        load_dataset(p)
    assert "fmt=" not in str(e.value) and "top level is" in str(e.value) and "LoCoMo" in str(e.value)


def test_a_conversation_id_already_stored_with_other_turns_is_refused(tmp_path):
    """LongMemEval S and M share question ids with different haystacks: the second file's item must not be
    answered from the memory built for the first (the ingest would find it complete)."""
    from memcore.errors import StoreError
    from memcore.settings import Settings
    from memcore.workbench import Workbench

    wb = Workbench(Settings(store_uri=str(tmp_path / "s"), embedder="hashing", llm_provider="offline"))
    first = tmp_path / "s.json"
    first.write_text(json.dumps([LME[0]]), encoding="utf-8")
    [conv] = wb.load(first)
    assert wb.ingest("naive_rag", conv).complete
    relabelled = copy.deepcopy(LME[0])
    relabelled["answer"] = "a Business degree"  # the same haystack: questions may change
    first.write_text(json.dumps([relabelled]), encoding="utf-8")
    assert wb.load(first)[0].questions[0].answer == "a Business degree"
    other = _lme_pair(tmp_path, same=False)
    data = json.loads(other.read_text(encoding="utf-8"))[1:]
    (tmp_path / "m.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(StoreError, match="'e47becba' is already in .* with other turns"):
        wb.load(tmp_path / "m.json")
    res = _cli("ask", "e47becba", "--source", str(tmp_path / "m.json"), "--store", str(tmp_path / "s"))
    assert res.returncode == 2 and "with other turns" in res.stderr
    res = _cli("eval", "--dataset", "longmemeval", "--file", str(tmp_path / "m.json"), "--systems", "naive_rag",
               "--store", str(tmp_path / "s"), "--out", str(tmp_path / "r.json"))  # eval does not go through load
    assert res.returncode == 2 and "with other turns" in res.stderr and not (tmp_path / "r.json").exists()
