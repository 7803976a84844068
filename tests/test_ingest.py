"""Ingest is resumable and idempotent: kills and crashes never duplicate or lose items."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

from memcore.ingest import ingest_conversation
from memcore.systems import get_system, make_config
from tests.conftest import make_conversation


def snapshot(wb, sys_, kinds=("session",)):
    items = sorted((i.id, i.text, tuple(i.turn_ids)) for k in kinds for i in wb.store.items(sys_.space, "tiny", k))
    events = [(e.step, e.kind, tuple(e.item_ids)) for e in wb.store.events(sys_.space, "tiny")]
    return items, events


def new_system(wb, conv, name="naive_rag_session"):
    return get_system(name)(wb.runtime, conv, make_config(name))


def test_stop_and_resume_equals_uninterrupted(workbench, tiny_conv, tmp_path):
    full = new_system(workbench, tiny_conv)
    ingest_conversation(full, workbench.store, workbench.ledger)
    expected = snapshot(workbench, full)
    # a second store, interrupted twice
    from memcore.embed import HashingEmbedder
    from memcore.settings import Settings
    from memcore.workbench import Workbench

    wb2 = Workbench(Settings(store_uri=str(tmp_path / "s2"), llm_provider="offline"), embedder=HashingEmbedder())
    r1 = ingest_conversation(new_system(wb2, tiny_conv), wb2.store, wb2.ledger, stop_after=3)
    assert (r1.turns_done, r1.complete) == (3, False)
    r2 = ingest_conversation(new_system(wb2, tiny_conv), wb2.store, wb2.ledger, stop_after=4)
    assert r2.resumed_from == 3 and not r2.complete
    r3 = ingest_conversation(new_system(wb2, tiny_conv), wb2.store, wb2.ledger)
    assert r3.complete and r3.resumed_from == 7
    assert snapshot(wb2, new_system(wb2, tiny_conv)) == expected
    again = ingest_conversation(new_system(wb2, tiny_conv), wb2.store, wb2.ledger)
    assert again.skipped and snapshot(wb2, new_system(wb2, tiny_conv)) == expected


def test_crash_between_items_and_checkpoint_leaves_no_duplicates(workbench, tiny_conv, monkeypatch):
    sys_ = new_system(workbench, tiny_conv)
    real = workbench.store.save_checkpoint
    calls = {"n": 0}

    def flaky(*a, **kw):
        calls["n"] += 1
        if calls["n"] == 2:  # items of the second batch are written, its checkpoint is not
            raise RuntimeError("power cut")
        return real(*a, **kw)

    monkeypatch.setattr(workbench.store, "save_checkpoint", flaky)
    with pytest.raises(RuntimeError):
        ingest_conversation(sys_, workbench.store, workbench.ledger)
    monkeypatch.setattr(workbench.store, "save_checkpoint", real)
    ingest_conversation(new_system(workbench, tiny_conv), workbench.store, workbench.ledger)
    items, events = snapshot(workbench, sys_)
    assert [i[0] for i in items] == ["session-1", "session-2"]
    assert [e[2] for e in events] == [("session-1",), ("session-2",)]


SCRIPT = textwrap.dedent("""
    import os, signal, sys
    sys.path.insert(0, {root!r})
    from tests.conftest import make_conversation
    from memcore.embed import HashingEmbedder
    from memcore.settings import Settings
    from memcore.workbench import Workbench
    wb = Workbench(Settings(store_uri={store!r}, llm_provider="offline"), embedder=HashingEmbedder())
    kill_at = int(sys.argv[1])
    def progress(done, total, events):
        if done == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
    wb.ingest("naive_rag_session", make_conversation(), progress=progress)
""")


def test_sigkill_midway_then_rerun(tmp_path):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    store = str(tmp_path / "killed")
    script = tmp_path / "ingest.py"
    script.write_text(SCRIPT.format(root=root, store=store))
    proc = subprocess.run([sys.executable, str(script), "8"], capture_output=True, cwd=root, timeout=120)
    assert proc.returncode == -signal.SIGKILL
    proc = subprocess.run([sys.executable, str(script), "0"], capture_output=True, cwd=root, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    from memcore.embed import HashingEmbedder
    from memcore.settings import Settings
    from memcore.workbench import Workbench

    wb = Workbench(Settings(store_uri=store, llm_provider="offline"), embedder=HashingEmbedder())
    sys_ = new_system(wb, make_conversation())
    items, events = snapshot(wb, sys_)
    assert [i[0] for i in items] == ["session-1", "session-2"]
    assert len(events) == 2
    assert wb.store.has_turns("tiny") == 10


def test_ask_of_a_finished_memory_reads_no_checkpoint_until_an_ingest(workbench, tiny_conv, monkeypatch):
    """Workbench.ask reads the checkpoint once: a cached system restored from a finished ingest answers
    the next questions directly (the read was 4-16 ms of a 14-19 ms answer, issue 28)."""
    first = workbench.ask("naive_rag", tiny_conv, "Where did Ana go?")
    reads = []
    real = workbench.store.checkpoint
    monkeypatch.setattr(workbench.store, "checkpoint", lambda *a, **k: reads.append(a) or real(*a, **k))
    again = workbench.ask("naive_rag", tiny_conv, "Where did Ana go?")
    assert reads == [] and again.text == first.text
    workbench.ingest("naive_rag", tiny_conv)  # an ingest through this workbench drops the cached state
    workbench.ask("naive_rag", tiny_conv, "Where did Ana go?")
    assert reads


def test_prepare_embeds_the_shared_turns_once_and_ingest_then_finds_them(workbench, tiny_conv, monkeypatch):
    """The shared work (model load, turn embedding) is done and timed before any system, not in the first."""
    shared = workbench.prepare(tiny_conv)
    assert set(shared) == {"model load", "turn embedding"} and all(v >= 0 for v in shared.values())
    assert workbench.store.has_turns(tiny_conv.id) == len(tiny_conv.turns)
    seen = []
    real = workbench.embedder.embed
    monkeypatch.setattr(workbench.embedder, "embed", lambda texts: seen.extend(texts) or real(texts))
    ingest_conversation(new_system(workbench, tiny_conv, "full_context"), workbench.store, workbench.ledger)
    assert not set(seen) & {t.embed_text for t in tiny_conv.turns}
