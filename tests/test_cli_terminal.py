"""Terminal output from dataset text carries no control characters (issue 24): `memcore ask` on a chat whose
turns and question hold BEL, BS, CR, VT, FF, ESC and DEL prints them as visible escapes."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from memcore.cli import app
from memcore.text.terminal import visible

CONTROLS = "\x07\x08\r\x0b\x0c\x1b\x7f\x9b\u202e"


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMCORE_STORE", str(tmp_path / "store"))
    monkeypatch.setenv("MEMCORE_EMBEDDER", "hashing")
    monkeypatch.setenv("MEMCORE_LLM_PROVIDER", "offline")


def test_visible_escapes_controls_and_keeps_newline_and_tab():
    assert visible("a\x07b\tc\nd\x1b[2Je\x7f\u202e") == "a\\x07b\tc\nd\\x1b[2Je\\x7f\\u202e"


def test_ask_prints_dataset_text_without_control_characters(tmp_path):
    chat = tmp_path / "chat.jsonl"
    lines = [
        {"conversation": "c", "session": 1, "date": "2024-03-01 10:00", "speaker": "Ann",
         "text": f"I bought a red bike{CONTROLS} yesterday."},
        {"conversation": "c", "session": 1, "speaker": "Bob", "text": f"Nice\x1b[2J bike{CONTROLS}!"},
        {"type": "question", "conversation": "c", "id": "c:q0", "question": f"What colour{CONTROLS} is the bike?",
         "answer": f"red{CONTROLS}", "evidence": ["D1:1"]},
    ]
    chat.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    res = CliRunner().invoke(app, ["ask", "c:q0", "--source", str(chat), "-s", "naive_rag", "-r", "lexical"])
    assert res.exit_code == 0, res.output
    assert "red bike" in res.output and "\\x07" in res.output
    leaked = [c for c in CONTROLS if c in res.output]
    assert not leaked, [hex(ord(c)) for c in leaked]


def test_ingest_and_eval_print_conversation_ids_without_control_characters(tmp_path):
    chat = tmp_path / "chat.jsonl"
    lines = [{"conversation": f"c{CONTROLS}", "session": 1, "date": "2024-03-01 10:00", "speaker": "Ann",
              "text": "I bought a red bike."},
             {"type": "question", "conversation": f"c{CONTROLS}", "question": "Bike colour?", "answer": "red",
              "evidence": ["D1:1"]}]
    chat.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    res = CliRunner().invoke(app, ["ingest", str(chat), "-s", "naive_rag"])
    assert res.exit_code == 0, res.output
    assert "c\\x07" in res.output and not [c for c in CONTROLS if c in res.output]
    res = CliRunner().invoke(app, ["eval", "--dataset", "jsonl", "--file", str(chat), "--systems", "naive_rag",
                                   "--out", str(tmp_path / "r.json")])
    assert res.exit_code == 0, res.output
    assert not [c for c in CONTROLS if c in res.output]
