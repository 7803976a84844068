"""Resume equals an uninterrupted run, event for event, for every registered system.

An ingest stopped at several points (after one turn, mid-session, at a session end, near the
end) and resumed, and an ingest killed between commits and resumed, must leave the store
exactly as one uninterrupted ingest does: the same events (every field, in order), the same
item versions, the same answer traces and the same LLM-call ledger.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import numpy as np
import pytest

from memcore.datasets import load_demo
from memcore.embed import HashingEmbedder
from memcore.ingest import ingest_conversation
from memcore.settings import Settings
from memcore.systems import get_system, load_all, make_config
from memcore.types import Conversation
from memcore.workbench import Workbench

pytestmark = pytest.mark.slow

SYSTEMS = list(load_all())
# MemWeaver's routing thresholds are set for MiniLM: with the hashing embedder no turn would ever join a
# cluster, so a second case lowers them to exercise joins, add buffers and re-induction across a resume
MW_HASHING = {"eps": 0.7, "join_sim": 0.4, "route_sim": 0.2}
CASES = [(name, {}) for name in SYSTEMS] + [("memweaver", MW_HASHING)]
IDS = [name + ("-hashing-thresholds" if cfg else "") for name, cfg in CASES]
# demo sessions end after turns 24, 50, 74 and 90: one turn, mid-session 1, a session end, mid-session 3, near the end
STOPS = (1, 13, 24, 62, 89)
KILL_AT = 37  # mid-session 2: the checkpoint is at 24, turns 25..37 are done and then lost
FLUSH_AT = 33  # the ledger's batch of 200 fills up here: the calls of turns 25..33 reach the store
LEDGER_FIELDS = ("role", "stage", "step", "prompt_tokens", "completion_tokens", "cache_hit", "ok", "error",
                 "attempt", "provider", "model")


class Killed(BaseException):
    """Stands for SIGKILL: nothing after it runs (no commit, no flush, no cleanup)."""


def bench(path: Any) -> Workbench:
    """A workbench on its own store: offline engine, hashing embedder."""
    return Workbench(Settings(store_uri=str(path), llm_provider="offline", embedder="hashing"),
                     embedder=HashingEmbedder())


def ingest_with_stops(wb: Workbench, name: str, conv: Conversation, stops: tuple[int, ...], **cfg: Any) -> None:
    """Ingest in pieces: stop after each turn count in `stops`, then resume to the end."""
    for n in stops:
        done: list[int] = []
        rep = wb.ingest(name, conv, progress=lambda d, t, e, done=done: done.append(d),
                        should_stop=lambda done=done, n=n: bool(done) and done[-1] >= n, **cfg)
        assert not rep.complete and rep.turns_done == n, (name, n, rep)
    assert wb.ingest(name, conv, **cfg).complete


def commit_steps(conv: Conversation, commit_every: int = 50) -> list[int]:
    """The steps an uninterrupted ingest commits at (memcore.ingest: session ends, every 50 turns, finish)."""
    out, since = [], 0
    for i, t in enumerate(conv.turns):
        since += 1
        if i + 1 == len(conv.turns) or conv.turns[i + 1].session != t.session or since >= commit_every:
            out.append(i + 1)
            since = 0
    return out + [len(conv.turns) + 1]


# ------------------------------------------------------------------ fingerprints
def events_of(wb: Workbench, space: str, conv_id: str) -> list[dict]:
    return [{"step": e.step, "kind": e.kind, "item_kind": e.item_kind, "item_ids": list(e.item_ids),
             "turn_id": e.turn_id, "reason": e.reason, "data": e.data} for e in wb.store.events(space, conv_id)]


def versions_of(wb: Workbench, space: str, conv_id: str) -> dict[tuple, dict]:
    """Every stored item version by (kind, id, valid_from): all its fields, the vector as an array."""
    out = {}
    for name in sorted(n for n in wb.store.table_names() if n.startswith("mem_")):
        for r in wb.store.rows(name, space=space, conv_id=conv_id).to_dict("records"):
            r = {k: (list(v) if isinstance(v, np.ndarray) and k != "vector" else v) for k, v in r.items()}
            r["vector"] = np.asarray(r["vector"], dtype=np.float64)
            out[(r["kind"], r["id"], int(r["valid_from"]))] = r
    return out


def state_at(versions: dict[tuple, dict], step: int) -> dict[tuple, dict]:
    """The versions in memory at `step` (valid_from <= step < valid_to)."""
    return {k: v for k, v in versions.items() if v["valid_from"] <= step < v["valid_to"]}


def current_items(wb: Workbench, name: str, conv: Conversation, cfg: dict) -> list[tuple]:
    sys_ = wb.system(name, conv, **cfg)
    return sorted((it.kind, it.id, it.text, tuple(it.turn_ids), tuple(it.sources),
                   json.dumps(it.metadata, sort_keys=True, default=str), it.created_step, it.updated_step)
                  for it in sys_.memory.items.values())


def answers_of(wb: Workbench, name: str, conv: Conversation, cfg: dict) -> list[dict]:
    sys_ = wb.system(name, conv, **cfg)
    out = []
    for q in conv.questions:
        a = sys_.answer(q)
        tr = a.trace.to_dict()
        out.append({"text": a.text, "items": tr["items"], "candidates": tr["candidates"], "stages": tr["stages"],
                    "structure": tr["structure"], "context": tr["context"], "notes": tr["notes"],
                    "errors": tr["errors"]})
    return out


def ledger_of(wb: Workbench, name: str, conv_id: str) -> tuple[Counter, dict]:
    """The stored LLM calls of one system and conversation: every record (as a multiset) and totals
    (calls, prompt and completion tokens) per stage and role."""
    wb.ledger.flush()
    df = wb.store.llm_calls(system=name, conv_id=conv_id)
    recs = Counter(tuple(r[f] for f in LEDGER_FIELDS) for r in df.to_dict("records"))
    totals: dict[tuple, list[int]] = {}
    for r in df.to_dict("records"):
        t = totals.setdefault((r["stage"], r["role"]), [0, 0, 0])
        t[0] += 1
        t[1] += int(r["prompt_tokens"])
        t[2] += int(r["completion_tokens"])
    return recs, totals


def fingerprint(wb: Workbench, name: str, conv: Conversation, cfg: dict) -> dict:
    """Everything a resume must reproduce: events, item versions, current items, answers, ledger."""
    space = wb.space(name, conv, **cfg)
    return {"events": events_of(wb, space, conv.id), "versions": versions_of(wb, space, conv.id),
            "items": current_items(wb, name, conv, cfg), "answers": answers_of(wb, name, conv, cfg),
            "ledger": ledger_of(wb, name, conv.id)}


def same_version(a: dict, b: dict, close: bool = True) -> bool:
    """Equal fields (valid_to too unless `close` is False), vectors within 1e-6."""
    skip = {"vector"} | (set() if close else {"valid_to"})
    return a.keys() == b.keys() and all(a[k] == b[k] for k in a if k not in skip) and bool(
        np.allclose(a["vector"], b["vector"], atol=1e-6))


def assert_same(got: dict, want: dict, name: str, commits: list[int]) -> None:
    """Field by field, with the first difference named. Item versions: the store keeps one version per
    step an item changed at (WorkingMemory.seal), so a resumed run, which commits at other steps, must
    store exactly the same versions, valid_to included; the memory at each commit step is checked too."""
    ge, we = got["events"], want["events"]
    diff = [i for i, (a, b) in enumerate(zip(ge, we, strict=False)) if a != b]
    assert len(ge) == len(we) and not diff, (
        f"{name}: {len(ge)} vs {len(we)} events; differing steps "
        f"{sorted({we[i]['step'] for i in diff})}; first: {diff and (ge[diff[0]], we[diff[0]])}")
    gv, wv = got["versions"], want["versions"]
    assert wv.keys() == gv.keys(), (f"{name}: versions missing: {sorted(wv.keys() - gv.keys())[:5]}, "
                                    f"extra: {sorted(gv.keys() - wv.keys())[:5]}")
    bad = [k for k in wv if not same_version(gv[k], wv[k])]
    assert not bad, f"{name}: versions differ: {bad[:5]}"
    for c in commits:
        gs, ws = state_at(gv, c), state_at(wv, c)
        assert gs.keys() == ws.keys(), f"{name}: memory at step {c} differs: {sorted(gs.keys() ^ ws.keys())[:5]}"
    assert got["items"] == want["items"], f"{name}: current items differ"
    for i, (a, b) in enumerate(zip(got["answers"], want["answers"], strict=True)):
        assert a == b, f"{name}: answer to question {i} differs"
    (grecs, gtot), (wrecs, wtot) = got["ledger"], want["ledger"]
    assert gtot == wtot, f"{name}: ledger totals differ: {gtot} vs {wtot}"
    assert grecs == wrecs, f"{name}: ledger records differ: {grecs - wrecs} / {wrecs - grecs}"


# ------------------------------------------------------------------------ tests
@pytest.fixture(scope="module")
def conv() -> Conversation:
    return load_demo()


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory, conv) -> dict[str, dict]:
    out = {}
    for case, (name, cfg) in zip(IDS, CASES, strict=True):
        wb = bench(tmp_path_factory.mktemp("whole"))  # one store per case: ledger rows carry no config
        assert wb.ingest(name, conv, **cfg).complete
        out[case] = fingerprint(wb, name, conv, cfg)
    return out


@pytest.mark.parametrize(("name", "cfg"), CASES, ids=IDS)
def test_stopped_and_resumed_equals_uninterrupted(name, cfg, conv, uninterrupted, tmp_path, request) -> None:
    wb = bench(tmp_path / "stopped")
    ingest_with_stops(wb, name, conv, STOPS, **cfg)
    assert_same(fingerprint(wb, name, conv, cfg), uninterrupted[request.node.callspec.id], name,
                commit_steps(conv))


def start_dying(wb: Workbench, name: str, conv: Conversation, cfg: dict, exc: BaseException) -> tuple[int, int]:
    """Ingest until turn KILL_AT is done, then raise `exc` from the system (no commit after it).

    The ledger flushes at turn FLUSH_AT as if its batch had filled up: the calls of the lost steps up
    to there reach the store, later ones stay in memory. Returns the checkpoint step and the number
    of stored calls of steps after it.
    """
    sys_ = get_system(name)(wb.runtime, conv, make_config(name, **cfg))
    on_turn = sys_.on_turn

    def dying(turn) -> None:
        on_turn(turn)
        if turn.index + 1 == FLUSH_AT:
            wb.ledger.flush()
        if turn.index + 1 == KILL_AT:
            raise exc

    sys_.on_turn = dying
    with pytest.raises(type(exc)):
        ingest_conversation(sys_, wb.store, wb.ledger)
    step = wb.store.checkpoint(sys_.space, conv.id)["step"]
    return step, len(wb.store.llm_calls(system=name, conv_id=conv.id, after_step=step))


@pytest.mark.parametrize(("name", "cfg"), CASES, ids=IDS)
def test_killed_between_commits_and_resumed_equals_uninterrupted(name, cfg, conv, uninterrupted, tmp_path,
                                                                  request) -> None:
    """A kill after some commits: the rerun (a new process) rolls back the partial batch - items,
    events, links and the stored LLM calls of the lost steps - and ends identical."""
    path = tmp_path / "killed"
    step, _ = start_dying(bench(path), name, conv, cfg, Killed())
    assert step == 24
    resumed = bench(path)  # a new process: the killed one's memory and unflushed ledger are gone
    rep = resumed.ingest(name, conv, **cfg)
    assert rep.complete and rep.resumed_from == 24
    assert_same(fingerprint(resumed, name, conv, cfg), uninterrupted[request.node.callspec.id], name,
                commit_steps(conv))


def test_crashed_and_resumed_in_the_same_process_equals_uninterrupted(conv, uninterrupted, tmp_path) -> None:
    """A crash (an exception out of the ingest) and a resume with the same workbench: its ledger still
    holds the lost steps' unflushed calls, which must not reach the store after the rollback."""
    wb = bench(tmp_path / "crashed")
    step, stored = start_dying(wb, "xmemory", conv, {}, RuntimeError("endpoint gone"))
    assert step == 24 and stored > 0
    assert any(r.step > FLUSH_AT for r in wb.ledger.records[wb.ledger._flushed:])  # unflushed lost calls
    rep = wb.ingest("xmemory", conv)
    assert rep.complete and rep.resumed_from == 24
    assert_same(fingerprint(wb, "xmemory", conv, {}), uninterrupted["xmemory"], "xmemory", commit_steps(conv))


def test_rollback_keeps_other_spaces_calls(conv, tmp_path) -> None:
    """Ledger rows carry no memory space: rolling back one configuration's ingest keeps the calls of
    another configuration of the same system that stopped before, also those of later steps."""
    wb = bench(tmp_path / "two")
    done: list[int] = []
    wb.ingest("memweaver", conv, progress=lambda d, t, e: done.append(d), should_stop=lambda: done[-1] >= 30,
              **MW_HASHING)
    other = ledger_of(wb, "memweaver", conv.id)[0]
    step, stored = start_dying(wb, "memweaver", conv, {}, Killed())
    assert step == 24 and stored > 0
    fresh = bench(tmp_path / "two")
    fresh.store.rollback(fresh.space("memweaver", conv), conv.id, step)
    after = ledger_of(fresh, "memweaver", conv.id)[0]
    assert other <= after and all(k[2] <= step for k in after - other)


def test_replay_holds_each_item_from_the_step_it_was_created(uninterrupted) -> None:
    """The store's state at the step of a `created` event holds the item: replay and resume then agree
    whatever the commit points."""
    missing = {}
    for case, fp in uninterrupted.items():
        stored = {k[1] for k in fp["versions"]}
        for e in fp["events"]:
            state = {k[1] for k in state_at(fp["versions"], e["step"])}
            missing.update({(case, i, e["step"]): 1 for i in e["item_ids"]
                            if e["kind"] == "created" and i in stored and i not in state})
    assert not missing, sorted(missing)[:10]
