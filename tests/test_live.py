"""memcore.live: a live conversation grows one message at a time and stays a valid stored conversation; a followed
JSONL log may only grow; `memcore mcp` with no options says what it serves."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memcore.errors import StoreError
from memcore.ingest.context import is_open
from memcore.live import LiveMemory
from memcore.live.follow import follow_once
from memcore.types import Turn


def test_turns_follow_the_jsonl_rules_and_a_resent_id_is_stored_once(workbench) -> None:
    live = LiveMemory(workbench, "live-a", ["naive_rag"])
    a = live.remember("Alice", "Hi, I moved to Porto.", "2024-03-01 10:00")
    b = live.remember("Bob", "Nice!", message_id="m2")
    c = live.remember("Alice", "New week.", "2024-03-08 09:00", session=2)
    again = live.remember("Bob", "Nice!", message_id="m2")
    assert [t.turn_id for t in (a.turn, b.turn, c.turn)] == ["D1:1", "m2", "D2:1"]
    assert b.turn.session_date == "2024-03-01 10:00" and c.turn.timestamp == "2024-03-08T09:00:00"
    assert again.new is False and again.turn == b.turn
    conv = workbench.conversation("live-a")
    assert len(conv.turns) == 3 and is_open(conv) and workbench.store.has_turns("live-a") == 3
    with pytest.raises(ValueError, match="another text"):
        live.remember("Bob", "Changed!", message_id="m2")
    with pytest.raises(ValueError, match="session 1"):
        live.remember("Bob", "Back in time", session=1)
    assert workbench.memory("naive_rag", conv).status() == (3, False)  # built to the newest turn, still open


def test_the_store_accepts_a_grown_live_conversation_never_a_changed_turn(workbench) -> None:
    live = LiveMemory(workbench, "live-b", ["naive_rag"])
    live.remember("Alice", "One.", "2024-03-01 10:00")
    conv = live.conversation()
    changed = Turn(**{**conv.turns[0].__dict__, "text": "Other."})
    with pytest.raises(StoreError, match="other turns"):
        workbench.store.save_conversation(conv.__class__(**{**conv.__dict__, "turns": [changed]}), extend=True)


def test_a_turn_row_left_by_a_killed_append_is_replaced(workbench) -> None:
    live = LiveMemory(workbench, "live-c", ["naive_rag"])
    live.remember("Alice", "One.", "2024-03-01 10:00")
    stale = Turn("live-c", "lost", 1, 1, "2024-03-01 10:00", "2024-03-01T10:00:00", "Bob", "never stored")
    workbench.store.save_turns([stale], workbench.embedder.embed([stale.embed_text]))  # the kill came here
    live.remember("Bob", "Two.")
    ids, _ = workbench.store.turn_matrix("live-c")
    assert ids == ["D1:1", "D1:2"]


def write(path: Path, lines: list[dict], tail: str = "") -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in lines) + tail)


def test_follow_adds_complete_lines_only_and_refuses_a_rewritten_history(workbench, tmp_path) -> None:
    log = tmp_path / "chat.jsonl"
    first = {"conversation": "c", "speaker": "Alice", "text": "One.", "date": "2024-03-01 10:00"}
    write(log, [first], tail='{"conversation": "c", "speaker": "Bob", "te')  # half a line
    assert follow_once(workbench, log, ["naive_rag"]) == 1
    write(log, [first, {"conversation": "c", "speaker": "Bob", "text": "Two."}])
    assert follow_once(workbench, log, ["naive_rag"]) == 1
    assert follow_once(workbench, log, ["naive_rag"]) == 0  # nothing new
    conv = workbench.conversation("c")
    assert [t.text for t in conv.turns] == ["One.", "Two."]
    assert workbench.memory("naive_rag", conv).status() == (2, False)
    write(log, [{**first, "text": "Rewritten."}])
    with pytest.raises(StoreError, match="may only grow"):
        follow_once(workbench, log, ["naive_rag"])


def test_mcp_with_no_options_serves_the_default_system_and_says_so(monkeypatch, tmp_path) -> None:
    from memcore.cli import mcp as mcp_cli
    from memcore.cli.main import app

    served = {}

    class Server:
        def run(self, *args, **kwargs) -> None:
            served["run"] = (args, kwargs)

    monkeypatch.setattr(mcp_cli, "build_server", lambda wb, names, session: served.update(names=names) or Server())
    monkeypatch.setenv("MEMCORE_EMBEDDER", "hashing")
    r = CliRunner().invoke(app, ["mcp", "--store", str(tmp_path / "s"), "--provider", "offline"])
    assert r.exit_code == 0, r.output
    assert served == {"names": ["naive_rag"], "run": ((), {})}
    assert "serving naive_rag (the default; --systems picks others) on stdio" in r.output
