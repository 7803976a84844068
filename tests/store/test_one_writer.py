"""One writer per memory: write leases (file and row), idempotent commits, one conversations row."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from memcore.embed import HashingEmbedder
from memcore.errors import MemoryBusy
from memcore.settings import Settings
from memcore.store import LanceStore
from memcore.store.lease import Lease
from memcore.types import Event, MemoryItem
from memcore.workbench import Workbench

ROOT = Path(__file__).resolve().parents[2]
EMB = HashingEmbedder()
SYSTEMS = ["naive_rag_session", "xmemory", "memweaver"]
ENV = {"HF_HUB_OFFLINE": "1", "MEMCORE_EMBEDDER": "hashing", "MEMCORE_LLM_PROVIDER": "offline",
       "MEMCORE_CACHE": "", "PYTHONPATH": str(ROOT)}


def _env() -> dict[str, str]:
    return {**os.environ, **ENV}


def _workbench(store: Path, monkeypatch) -> Workbench:
    for k, v in ENV.items():
        monkeypatch.setenv(k, v)
    return Workbench(Settings(store_uri=str(store)))


def _cli(store: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "memcore.cli", "ingest", "demo", "--store", str(store), *args],
                            cwd=ROOT, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _snapshot(store: LanceStore) -> dict:
    """Everything an ingest writes, as sorted tuples (comparable between stores)."""
    store.refresh()
    out: dict = {}
    for name in store.table_names():
        df = store.rows(name)
        if name.startswith("mem_"):
            out[name] = sorted(zip(df["space"], df["id"], df["valid_from"], df["valid_to"], df["text"], strict=True))
    ev = store.rows("events")
    out["events"] = sorted(zip(ev["space"], ev["step"], ev["seq"], ev["kind"], ev["reason"], strict=True))
    ln = store.rows("links")
    out["links"] = sorted(zip(ln["space"], ln["item_id"], ln["source_id"], ln["step"], strict=True))
    ck = store.checkpoints()
    out["checkpoints"] = sorted(zip(ck["key"], ck["step"], ck["done"], strict=True))
    calls = store.llm_calls()
    out["llm_calls"] = sorted(zip(calls["system"], calls["role"], calls["step"], strict=True))
    out["conversations"] = sorted(store.rows("conversations")["conv_id"])
    out["turns"] = len(store.rows("turns"))
    return out


def test_two_processes_ingesting_one_memory_write_it_once(tmp_path, monkeypatch):
    shared, alone = tmp_path / "shared", tmp_path / "alone"
    wb = _workbench(shared, monkeypatch)
    conv = wb.load_demo()
    # Hold the first memory's lease so both processes are surely waiting at the same point, then let go.
    with wb.store.lease(wb.space(SYSTEMS[0], conv), conv.id):
        procs = [_cli(shared, "--systems", ",".join(SYSTEMS)) for _ in range(2)]
        lines: list[list[str]] = [[], []]
        errs: list[list[str]] = [[], []]
        pumps = [threading.Thread(target=lambda i=i, p=p: lines[i].extend(p.stdout)) for i, p in enumerate(procs)]
        pumps += [threading.Thread(target=lambda i=i, p=p: errs[i].extend(p.stderr)) for i, p in enumerate(procs)]
        for t in pumps:
            t.start()
        ref = _workbench(alone, monkeypatch)  # the reference: one ingest in this process, while they start
        rconv = ref.load_demo()
        for name in SYSTEMS:
            ref.ingest(name, rconv)
        ref.ledger.flush()
        started = time.monotonic()  # both wait for the lease: each reports it on standard error at once
        while time.monotonic() - started < 120 and not all(any(x.startswith("waiting:") for x in e) for e in errs):
            time.sleep(0.1)
        assert all(any(x.startswith("waiting:") for x in e) for e in errs), (lines, errs)
        assert all(p.poll() is None for p in procs), lines
    for t in pumps:
        t.join(timeout=120)
    assert [p.wait(timeout=30) for p in procs] == [0, 0], (lines, errs)
    text = "".join("".join(ls) for ls in lines)
    for name in SYSTEMS:  # each memory was built by exactly one of the two processes
        assert text.count(f"{name} on demo: already complete") == 1, text
        assert text.count(f"{name} on demo:") == 2, text

    got, want = _snapshot(LanceStore(str(shared), dim=EMB.dim)), _snapshot(ref.store)
    assert got.keys() == want.keys()
    for k in want:
        assert got[k] == want[k], k
    assert got["conversations"] == ["demo"] and len(got["llm_calls"]) > 0


def test_no_wait_fails_at_once_while_another_holds_the_lease(tmp_path, monkeypatch):
    wb = _workbench(tmp_path / "s", monkeypatch)
    conv = wb.load_demo()
    other = LanceStore(str(tmp_path / "s"), dim=EMB.dim)  # another holder (its own file handle)
    with other.lease(wb.space("naive_rag", conv), conv.id, "memory naive_rag/demo"):
        t0 = time.monotonic()
        with pytest.raises(MemoryBusy) as err:
            wb.ingest("naive_rag", conv, wait=False)
        assert time.monotonic() - t0 < 2
        msg = str(err.value)
        assert "memory naive_rag/demo is being built by another process" in msg
        assert f"pid {os.getpid()}" in msg and "--wait" in msg
        with pytest.raises(MemoryBusy, match="gave up after waiting"):
            wb.ingest("naive_rag", conv, wait=True, wait_timeout=0.3)
        assert wb.store.checkpoint(wb.space("naive_rag", conv), conv.id) is None
        from typer.testing import CliRunner

        from memcore.cli import app

        res = CliRunner().invoke(app, ["ingest", "demo", "-s", "naive_rag", "--store", str(tmp_path / "s"), "--no-wait"])
        assert isinstance(res.exception, MemoryBusy), res.output  # `memcore` prints it and exits 2
    assert wb.ingest("naive_rag", conv, wait=False).complete  # free again


def test_a_killed_holder_releases_its_file_lock(tmp_path):
    code = ("import sys, time; from memcore.store.lease import Lease; "
            "held = Lease(sys.argv[1], 'sp|c', 'memory s/c', wait=False).acquire(); print('held', flush=True); "
            "time.sleep(60)")
    p = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], cwd=ROOT, env=_env(), stdout=subprocess.PIPE,
                         text=True)
    assert p.stdout.readline().strip() == "held"
    with pytest.raises(MemoryBusy, match=f"pid {p.pid}"):
        Lease(str(tmp_path), "sp|c", "memory s/c", wait=False).acquire()
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    with Lease(str(tmp_path), "sp|c", "memory s/c", wait=True, timeout=5) as lease:
        assert lease.held


def item(iid: str, text: str, step: int, sources=(), kind: str = "episode") -> MemoryItem:
    return MemoryItem(id=iid, kind=kind, text=text, system="s", conv_id="c", embedding=EMB.embed([text])[0].tolist(),
                      sources=list(sources), turn_ids=[], created_step=step, updated_step=step)


def ev(step: int, reason: str) -> Event:
    return Event(step=step, kind="created", item_ids=[], reason=reason, system="s", conv_id="c")


def _rows(store: LanceStore) -> tuple:
    store.refresh()
    versions = store.item_versions("sp", "c").sort_values(["kind", "id", "valid_from"])
    return (versions[["kind", "id", "valid_from", "valid_to"]].values.tolist(),
            [(e.step, e.reason) for e in store.events("sp", "c")],
            sorted(store.rows("links")[["item_id", "source_id", "step"]].values.tolist()),
            len(store.checkpoints()))


def test_replaying_a_commit_adds_no_rows(tmp_path):
    store = LanceStore(str(tmp_path / "db"), dim=EMB.dim)
    b1 = dict(space="sp", system="s", conv_id="c", step=2,
              upserts=[item("episode-1", "Ana adopted a puppy", 1, ["D1:1"]), item("episode-2", "Ben paints", 2, ["D1:2"])],
              deletes=[], events=[ev(1, "a"), ev(2, "b")], state={"n": 1})
    other = LanceStore(str(tmp_path / "db"), dim=EMB.dim)  # a second process: its handles go stale below
    store.commit(**b1)
    store.commit(**b1)
    for name in ("mem_episode", "events", "links", "checkpoints"):
        other.table(name)
    after1 = _rows(store)
    assert len(after1[0]) == 2 and len(after1[1]) == 2 and len(after1[2]) == 2
    updated = item("episode-1", "Ana adopted a puppy named Biscuit", 4, ["D1:1", "D1:4"])
    b2 = dict(space="sp", system="s", conv_id="c", step=4, upserts=[updated], deletes=[("episode", "episode-2")],
              events=[ev(3, "c"), ev(4, "d")], state={"n": 2})
    store.commit(**b2)
    once = _rows(store)
    store.commit(**b2)
    assert _rows(store) == once
    assert once[0] == [["episode", "episode-1", 1, 4], ["episode", "episode-1", 4, 2**31 - 1],
                       ["episode", "episode-2", 2, 4]]
    other.commit(**b1)  # e.g. a writer that lost its lease redoes the same batches
    other.commit(**b2)
    assert _rows(store) == once
    assert [i.text for i in store.items("sp", "c", "episode")] == ["Ana adopted a puppy named Biscuit"]


def test_row_lease_busy_renewed_released_and_taken_over_after_expiry(tmp_path):
    store = LanceStore(str(tmp_path / "db"), dim=EMB.dim)
    store.lease_mode = "row"  # the remote-store path, on a local folder
    with store.lease("sp", "c", "memory s/c", ttl=0.6) as held:
        assert held.mode == "row"
        time.sleep(1.5)  # past the ttl: renewals keep it
        with pytest.raises(MemoryBusy, match=f"pid {os.getpid()}"):
            Lease(store.uri, "sp|c", "memory s/c", mode="row", wait=False).acquire()
    with Lease(store.uri, "sp|c", "memory s/c", mode="row", wait=False) as again:  # released: free
        assert again.held
    with store.lease("sp", "c", "memory s/c", ttl=0.5) as frozen:
        frozen._stop.set()  # the holder stops renewing (hung, partitioned)
        frozen._thread.join()
        with pytest.raises(MemoryBusy):
            Lease(store.uri, "sp|c", "memory s/c", mode="row", wait=False).acquire()
        with Lease(store.uri, "sp|c", "memory s/c", mode="row", wait=True, timeout=5, poll=0.1) as taker:
            assert taker.held and not frozen.renew_now() and frozen.lost
            with pytest.raises(MemoryBusy, match="lost the write lease"):
                store.commit("sp", "s", "c", 1, [item("episode-1", "x", 1)], [], [], {})
    assert "mem_episode" not in store.table_names()


def test_row_lease_racing_claims_have_one_winner(tmp_path):
    uri = str(tmp_path / "db")
    LanceStore(uri, dim=EMB.dim)
    def claim(lease: Lease, barrier: threading.Barrier, won: list) -> None:
        barrier.wait()
        try:
            won.append(lease.acquire())
        except MemoryBusy:
            pass

    for rnd in range(3):
        barrier, won = threading.Barrier(4), []
        leases = [Lease(uri, f"sp|race{rnd}", "memory race", mode="row", wait=False) for _ in range(4)]
        threads = [threading.Thread(target=claim, args=(x, barrier, won)) for x in leases]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(won) == 1
        for x in won:
            x.release()


def test_save_conversation_writes_once_and_keeps_one_row(tmp_path):
    from memcore.datasets import load_demo

    store = LanceStore(str(tmp_path / "db"), dim=EMB.dim)
    conv = load_demo()
    store.save_conversation(conv)
    v = store.table("conversations").version
    store.save_conversation(conv)  # unchanged: no write
    assert store.table("conversations").version == v
    store.table("conversations").add(store.rows("conversations"))  # duplicates left by an older memcore
    assert list(store.conversations()["conv_id"]) == ["demo"]
    conv.source = "changed"
    store.save_conversation(conv)
    assert store.rows("conversations")[["conv_id", "source"]].values.tolist() == [["demo", "changed"]]
