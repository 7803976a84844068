"""`memcore mcp` driven by the official SDK's own client: over stdio and streamable HTTP a scripted 30-message
conversation with recalls in between builds the same memory (events and items) as `memcore ingest --follow` of
the same messages written as a JSONL log, and, up to its last turn, as a plain `memcore ingest` of that file; a
server killed with SIGKILL mid-conversation loses and duplicates nothing when the client reconnects and
continues; bad arguments and failed LLM calls are one-line MCP tool errors."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from memcore.cli.mcp import build_server
from memcore.embed import HashingEmbedder
from memcore.llm.fake import FakeLLM
from memcore.settings import Settings
from memcore.workbench import Workbench

ROOT = Path(__file__).resolve().parents[1]
SYSTEMS = "naive_rag,xmemory"
CONV = "live-chat"
TOPICS = ["my dog Rex", "the trip to Lisbon", "learning the cello", "a new job at the bakery", "the garden roses"]


def messages() -> list[dict[str, Any]]:
    """30 messages in two sessions: (speaker, text, session, time on each session's first, message id)."""
    out = []
    for i in range(30):
        s = 1 if i < 15 else 2
        n = i + 1 if s == 1 else i - 14
        m = {"speaker": "Alice" if i % 2 == 0 else "Bob", "text": f"Message {i + 1} is about {TOPICS[i % 5]}, "
             f"detail {i * 7 % 11}.", "chat_session": s, "message_id": f"D{s}:{n}"}
        if n == 1:
            m["time"] = "2024-03-01 10:00" if s == 1 else "2024-03-08 18:30"
        out.append(m)
    return out


def write_jsonl(path: Path, msgs: list[dict[str, Any]]) -> Path:
    """The same messages as a JSONL chat log of conversation CONV."""
    with path.open("w") as f:
        for m in msgs:
            rec = {"conversation": CONV, "session": m["chat_session"], "speaker": m["speaker"], "text": m["text"]}
            if "time" in m:
                rec["date"] = m["time"]
            f.write(json.dumps(rec) + "\n")
    return path


def env() -> dict[str, str]:
    """The child's environment: this worktree's memcore, offline, the hashing embedder (no model load)."""
    return {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
            "MEMCORE_EMBEDDER": "hashing", "MEMCORE_LLM_PROVIDER": "offline"}


def cli(*args: str) -> subprocess.CompletedProcess:
    """Run `memcore ...` in a child process."""
    return subprocess.run([sys.executable, "-m", "memcore.cli", *args], env=env(), capture_output=True, text=True,
                          timeout=600, stdin=subprocess.DEVNULL)


def workbench(store: Path) -> Workbench:
    """A workbench reading `store` with the settings the children use."""
    return Workbench(Settings(store_uri=str(store), llm_provider="offline", embedder="hashing"),
                     embedder=HashingEmbedder())


def snapshot(store: Path, conv_id: str, upto: int | None = None) -> dict[str, Any]:
    """Per system: the events (up to step `upto`) and the items (as at step `upto`, vectors left out) of its memory
    of `conv_id`, and the conversation's turns."""
    wb = workbench(store)
    conv = wb.conversation(conv_id)
    out: dict[str, Any] = {"turns": [(t.turn_id, t.session, t.session_date, t.timestamp, t.speaker, t.text)
                                     for t in conv.turns]}
    for name in SYSTEMS.split(","):
        mem = wb.memory(name, conv)
        events = [asdict(e) for e in mem.events() if upto is None or e.step <= upto]
        for e in events:
            e["conv_id"] = "-"
        items = {}
        for kind in sorted(mem.kind_counts(upto)):
            rows = [asdict(it) for it in mem.items(kind, at_step=upto, with_vectors=False)]
            for r in rows:
                r["conv_id"], r["embedding"] = "-", None
            items[kind] = sorted(rows, key=lambda r: r["id"])
        out[name] = {"events": events, "items": items}
    return out


async def drive(client: Client, msgs: list[dict[str, Any]], session_id: str = "chat") -> list[str]:
    """Remember each message, recalling every fifth; returns the recall trace ids."""
    traces = []
    for i, m in enumerate(msgs):
        r = await client.call_tool("remember", {**m, "session_id": session_id})
        assert not r.is_error, r.content
        assert r.structured_content["turn_id"] == m["message_id"]
        if (i + 1) % 5 == 0:
            r = await client.call_tool("recall", {"query": f"What about {TOPICS[i % 5]}?", "session_id": session_id})
            assert not r.is_error, r.content
            got = r.structured_content["systems"]
            assert set(got) == set(SYSTEMS.split(",")) and all(v["trace_id"] for v in got.values())
            assert got["naive_rag"]["items"] and all(it["turn_ids"] for it in got["naive_rag"]["items"])
            traces.append(got["naive_rag"]["trace_id"])
    return traces


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> dict[str, Any]:
    """`memcore ingest --follow` and plain `memcore ingest` of the 30 messages written as a JSONL log."""
    root = tmp_path_factory.mktemp("ref")
    log = write_jsonl(root / "chat.jsonl", messages())
    r = cli("ingest", str(log), "--follow", "--idle-exit", "1", "--store", str(root / "follow"), "-s", SYSTEMS)
    assert r.returncode == 0, r.stderr
    assert "30 turn(s) remembered" in r.stdout
    r = cli("ingest", str(log), "--store", str(root / "plain"), "-s", SYSTEMS)
    assert r.returncode == 0, r.stderr
    return {"follow": snapshot(root / "follow", CONV), "plain30": snapshot(root / "plain", CONV, upto=30)}


def test_follow_equals_plain_ingest_up_to_the_last_turn(reference) -> None:
    """A followed log's memory is a plain ingest's as of its last turn (no end-of-conversation step yet)."""
    assert reference["follow"] == reference["plain30"]
    assert reference["follow"]["xmemory"]["items"]  # the comparison covers items, not only events


def test_stdio_conversation_builds_the_memory_ingest_builds(tmp_path, reference) -> None:
    store = tmp_path / "store"

    async def main() -> list[str]:
        params = StdioServerParameters(command=sys.executable, args=["-m", "memcore.cli", "mcp", "--store",
                                       str(store), "--systems", SYSTEMS], env=env(), cwd=str(tmp_path))
        async with Client(params) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert names == {"remember", "recall", "answer", "memory_status"}
            traces = await drive(client, messages())
            st = (await client.call_tool("memory_status", {"session_id": "chat"})).structured_content
            assert st["turns"] == 30 and st["last_message_id"] == "D2:15"
            assert all(s["built_turns"] == 30 for s in st["systems"].values())
            ans = (await client.call_tool("answer", {"query": "What is Alice learning?", "session_id": "chat"}))
            assert not ans.is_error and ans.structured_content["provider"].startswith("offline")
            return traces

    traces = asyncio.run(main())
    assert len(traces) == 6
    assert snapshot(store, CONV) == reference["follow"]
    from memcore.live.log import find_call
    call = find_call(workbench(store).store, traces[-1])
    assert call is not None and call["tool"] == "recall" and call["result"]["trace"]["items"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_http(store: Path, port: int, cwd: Path) -> subprocess.Popen:
    """`memcore mcp --http` in a child, once it answers on the port."""
    p = subprocess.Popen([sys.executable, "-m", "memcore.cli", "mcp", "--http", "--port", str(port), "--store",
                          str(store), "--systems", SYSTEMS], env=env(), cwd=str(cwd), stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    t0 = time.monotonic()
    while time.monotonic() - t0 < 180:
        if p.poll() is not None:
            raise AssertionError(p.stderr.read().decode() if p.stderr else "server exited")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return p
        time.sleep(0.2)
    p.kill()
    raise AssertionError("server did not listen")


def test_streamable_http_conversation_builds_the_memory_ingest_builds(tmp_path, reference) -> None:
    store, port = tmp_path / "store", free_port()
    server = start_http(store, port, tmp_path)
    try:
        async def main() -> None:
            async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                await drive(client, messages())
        asyncio.run(main())
    finally:
        server.terminate()
        server.wait(30)
    assert snapshot(store, CONV) == reference["follow"]


def test_kill_9_mid_conversation_then_reconnect_loses_and_duplicates_nothing(tmp_path, reference) -> None:
    store, port = tmp_path / "store", free_port()
    msgs = messages()
    server = start_http(store, port, tmp_path)
    try:
        async def first_part() -> None:
            async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                await drive(client, msgs[:12])
                # the 13th message is in flight when the server dies
                call = asyncio.ensure_future(client.call_tool("remember", {**msgs[12], "session_id": "chat"}))
                await asyncio.sleep(0.05)
                server.send_signal(signal.SIGKILL)
                try:
                    await asyncio.wait_for(call, 20)
                except Exception:
                    pass
        try:
            asyncio.run(first_part())
        except Exception:
            pass
        server.wait(30)
        server = start_http(store, port, tmp_path)

        async def second_part() -> None:
            async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                st = (await client.call_tool("memory_status", {"session_id": "chat"})).structured_content
                done = st["turns"]
                assert done in (12, 13) and st["last_message_id"] == msgs[done - 1]["message_id"]
                # a client unsure whether its last message arrived resends it: its message id stores it once
                await drive(client, msgs[done - 1:])
        asyncio.run(second_part())
    finally:
        server.terminate()
        server.wait(30)
    assert snapshot(store, CONV) == reference["follow"]


def run_tool(server: Any, name: str, args: dict[str, Any]) -> Any:
    async def main() -> Any:
        async with Client(server) as client:
            return await client.call_tool(name, args)
    return asyncio.run(main())


@pytest.mark.parametrize(("tool", "args", "says"), [
    ("recall", {}, "query: Field required"),
    ("recall", {"query": ""}, "query: String should have at least 1 character"),
    ("recall", {"query": 3}, "query: Input should be a valid string"),
    ("remember", {"text": "hi"}, "give speaker"),
    ("remember", {"text": "hi", "speaker": "A", "time": "someday"}, "time 'someday'"),
    ("remember", {"text": "hi", "speaker": "A", "chat_session": 3}, "session 3"),
    ("remember", {"text": "hi", "speaker": "A", "session_id": "no spaces"}, "session_id"),
    ("answer", {"query": "anything?"}, "has no messages yet"),
])
def test_invalid_arguments_are_one_line_mcp_errors(workbench, tool, args, says) -> None:
    r = run_tool(build_server(workbench, ["naive_rag"]), tool, args)
    text = r.content[0].text
    assert r.is_error and says in text and "\n" not in text
    assert "someday" not in text or tool == "remember"  # values are echoed only where they are the reason


def test_a_failed_llm_call_is_an_mcp_error_naming_the_fix_and_builds_nothing(tmp_path) -> None:
    fake = FakeLLM(by_role={"mw_entities": RuntimeError("model down (HTTP 503)")}, fallback="offline")  # the rest: rules
    wb = Workbench(Settings(store_uri=str(tmp_path / "s"), llm_provider="fake", embedder="hashing"),
                   embedder=HashingEmbedder(), provider=fake)
    server = build_server(wb, ["memweaver"])
    r = run_tool(server, "remember", {"text": "I adopted a dog named Rex.", "speaker": "Alice",
                                      "time": "2024-03-01 10:00", "message_id": "m1"})
    text = r.content[0].text
    assert r.is_error and "model down" in text and "call again" in text and "\n" not in text
    conv = wb.conversation("live-default")
    assert [t.turn_id for t in conv.turns] == ["m1"]  # the message is kept ...
    mem = wb.memory("memweaver", conv)
    assert mem.status() == (0, False) and not mem.events() and not mem.kind_counts()  # ... nothing built from it
    fake.by_role.clear()  # the provider is fixed: resending the same message builds its memory once
    r = run_tool(server, "remember", {"text": "I adopted a dog named Rex.", "speaker": "Alice", "message_id": "m1"})
    assert not r.is_error and r.structured_content["stored"] is False
    assert mem.status()[0] == 1 and len(wb.conversation("live-default").turns) == 1 and mem.kind_counts()
