"""`memcore eval` on a BEAM chat.json with no --dataset (auto is the default), a JSONL file read as auto instead of
the old 'invalid JSON ... re-download' message, and `memcore sweep --lenient`."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from memcore.cli import app
from tests.datasets.test_beam_locomo_plus import write_beam

runner = CliRunner()


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMCORE_STORE", str(tmp_path / "store"))
    monkeypatch.setenv("MEMCORE_EMBEDDER", "hashing")
    monkeypatch.setenv("MEMCORE_LLM_PROVIDER", "offline")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def test_eval_a_beam_chat_json_without_dataset(tmp_path) -> None:
    chat = write_beam(tmp_path / "beam")
    out = tmp_path / "r.json"
    res = runner.invoke(app, ["eval", "-f", str(chat), "-s", "naive_rag", "--categories",
                              "knowledge update,event ordering", "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert "rubric[offline rule]" in res.output and "knowledge update" in res.output
    assert "2 rubric question(s) (BEAM) scored by the offline rubric rule" in res.output
    data = json.loads(out.read_text())
    assert data["dataset"]["name"] == "auto" and data["dataset"]["format"] == "beam"
    from memcore.store import LanceStore

    rows = LanceStore(str(tmp_path / "store")).results(data["run_id"], None, traces=False)
    by_cat = {r["category"]: r for r in rows}
    assert set(by_cat) == {"knowledge update", "event ordering"}
    # the BEAM scores are per row; the CORRECT / WRONG judge leaves rubric questions out (no misleading 0)
    assert by_cat["knowledge update"]["rubric_rule"] is not None and by_cat["knowledge update"]["judge"] is None
    assert by_cat["event ordering"]["event_order"] is not None and by_cat["knowledge update"]["event_order"] is None
    assert by_cat["knowledge update"]["evidence_recall"] is not None
    summary = data["systems"]["naive_rag"]
    assert summary["overall"]["rubric_rule"] is not None and summary["overall"]["ci"]["rubric_rule"]["n"] == 2
    assert data["judge"]["prompt_versions"]["rubric"].startswith("offline rubric rule")
    assert (tmp_path / "r.csv").read_text().splitlines()[0].count("rubric_rule") >= 1


def test_eval_reads_a_jsonl_file_without_dataset(tmp_path) -> None:
    lines = [{"conversation": "c", "session": 1, "date": "2024-03-01 10:00", "speaker": "A", "text": "I live in Oslo."},
             {"conversation": "c", "speaker": "B", "text": "Nice."},
             {"type": "question", "conversation": "c", "question": "Where does A live?", "answer": "Oslo",
              "evidence": ["D1:1"]}]
    chat = tmp_path / "chat.jsonl"
    chat.write_text("\n".join(json.dumps(x) for x in lines), encoding="utf-8")
    res = runner.invoke(app, ["eval", "-f", str(chat), "-s", "naive_rag", "--no-judge", "-o", str(tmp_path / "r.json")])
    assert res.exit_code == 0, res.output
    wrong = runner.invoke(app, ["eval", "-d", "locomo", "-f", str(chat), "-s", "naive_rag", "--no-judge",
                                "-o", str(tmp_path / "w.json")])
    assert wrong.exit_code != 0 and "pass --dataset jsonl" in str(wrong.exception)


def test_sweep_takes_lenient(tmp_path) -> None:
    lines = [{"conversation": "c", "session": 1, "date": "2024-03-01 10:00", "speaker": "A", "text": "I live in Oslo."},
             {"conversation": "c", "speaker": "B", "text": "Nice."},
             {"type": "question", "conversation": "c", "question": "Where does A live?", "answer": "Oslo",
              "evidence": ["D1:1", "D7:3"]}]  # D7:3 names no turn
    chat = tmp_path / "chat.jsonl"
    chat.write_text("\n".join(json.dumps(x) for x in lines), encoding="utf-8")
    args = ["sweep", "naive_rag", "--grid", "k=1,2", "-f", str(chat), "--no-judge", "-o", str(tmp_path / "s.json")]
    strict = runner.invoke(app, args)
    assert strict.exit_code != 0 and "D7:3" in str(strict.exception) and "--lenient" in str(strict.exception)
    lenient = runner.invoke(app, [*args, "--lenient"])
    assert lenient.exit_code == 0, lenient.output
    assert "warning:" in lenient.output and "D7:3" in lenient.output
    assert json.loads((tmp_path / "s.json").read_text())["points_done"] == 2
