"""The MemorySystem protocol is the interface: ingest needs nothing else, the memory space is a pure
function, a turn has one embedded text, and an ingest stores its conversation at most once."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from memcore.embed import HashingEmbedder
from memcore.ingest import ingest_conversation
from memcore.ingest.context import IngestContext
from memcore.settings import Settings
from memcore.systems import BaseSystem, get_system, load_all, make_config
from memcore.systems.base import turn_row, turn_trace_item
from memcore.systems.protocol import MemorySystem, SystemConfig, memory_space, query_field
from memcore.testing import OnlyProtocol
from memcore.workbench import Workbench

SYSTEMS = list(load_all())


def bench(path: Any) -> Workbench:
    return Workbench(Settings(store_uri=str(path), llm_provider="offline", embedder="hashing"),
                     embedder=HashingEmbedder())


def stored(wb: Workbench, name: str, conv: Any) -> tuple[list, list, list]:
    mem = wb.memory(name, conv)
    events = [(e.step, e.kind, e.item_kind, tuple(e.item_ids), e.reason) for e in mem.events()]
    items = sorted((it.kind, it.id, it.text, tuple(it.turn_ids), it.updated_step, tuple(np.round(it.embedding, 6)))
                   for kind in get_system(name).kinds for it in mem.items(kind))
    wb.ledger.flush()
    calls = sorted((r["role"], r["stage"], r["step"], r["prompt_tokens"]) for r in mem.llm_calls().to_dict("records"))
    return events, items, calls


@pytest.mark.parametrize("name", SYSTEMS)
def test_ingest_uses_only_the_protocol(name, tiny_conv, tmp_path) -> None:
    direct = bench(tmp_path / "direct")
    assert direct.ingest(name, tiny_conv).complete
    wb = bench(tmp_path / "proxied")
    cfg = make_config(name)
    part = ingest_conversation(OnlyProtocol(get_system(name)(wb.runtime, tiny_conv, cfg)), wb.store, wb.ledger,
                               stop_after=4)
    assert (part.turns_done, part.complete) == (4, False)
    rest = ingest_conversation(OnlyProtocol(get_system(name)(wb.runtime, tiny_conv, cfg)), wb.store, wb.ledger)
    assert rest.complete and rest.resumed_from == 4
    assert isinstance(get_system(name)(wb.runtime, tiny_conv, cfg), MemorySystem)
    assert stored(wb, name, tiny_conv) == stored(direct, name, tiny_conv)


def test_pending_batch_embeds_deferred_items_and_drains(workbench, tiny_conv) -> None:
    sys_ = get_system("memweaver")(workbench.runtime, tiny_conv, make_config("memweaver"))
    ctx = IngestContext(tiny_conv, workbench.ledger)
    for t in tiny_conv.turns[:3]:
        sys_.ingest(t, ctx.turn(t))
    deferred = {i for i, it in sys_.memory.items.items() if it.embedding is None}  # created with embed=False
    assert deferred
    ups, dels, state = sys_.pending_batch()
    assert ups and all(it.embedding is not None for it in ups)
    assert state == sys_.state()
    for it in ups:
        if it.id in deferred:  # embedded from its text, in working memory too
            assert np.allclose(it.embedding, workbench.embedder.embed([it.text])[0], atol=1e-6)
            assert sys_.memory.items[it.id].embedding is not None
    assert sys_.pending_batch()[:2] == ([], [])  # drained


def test_space_is_a_pure_function_of_name_config_embedder_llm(workbench, tiny_conv, monkeypatch) -> None:
    spaces = {}
    for name in SYSTEMS:
        sys_ = get_system(name)(workbench.runtime, tiny_conv, make_config(name))
        spaces[name] = sys_.space
        assert sys_.space == memory_space(name, sys_.config, workbench.embedder.name,
                                          (workbench.llm.provider.name, workbench.llm.provider.model))
    # Workbench.space builds no system
    monkeypatch.setattr(BaseSystem, "__init__", lambda *a, **k: pytest.fail("Workbench.space built a system"))
    assert {n: workbench.space(n, tiny_conv) for n in SYSTEMS} == spaces
    # query-only fields (the retriever) keep the space; construction fields, embedder and LLM change it
    cfg = SystemConfig()
    base = memory_space("x", cfg, "hashing-256", ("offline", "m"))
    assert memory_space("x", SystemConfig(retriever="lexical"), "hashing-256", ("offline", "m")) == base
    assert memory_space("x", cfg, "minilm", ("offline", "m")) != base
    assert memory_space("x", cfg, "hashing-256", ("openai", "m")) != base
    assert workbench.space("recmem", tiny_conv, theta_sim=0.31) != workbench.space("recmem", tiny_conv)


@dataclass
class ProbeConfig(SystemConfig):
    theta: float = 0.4
    k: int = 3
    mode: str = "paper"
    top: int = query_field(5)


def test_space_strings_are_stable() -> None:
    """Stored memories are found by their space, so the same inputs must keep giving the same string:
    these are the spaces BaseSystem.space computed for them before memory_space existed (c4f39dd)."""
    emb, llm = "hashing-256", ("offline", "offline-engine")
    assert memory_space("naive_rag", SystemConfig(), emb, llm) == "naive_rag-f017f38c"
    assert memory_space("probe", ProbeConfig(), emb, llm) == "probe-145464a0"
    assert memory_space("probe", ProbeConfig(theta=0.5, top=9, retriever="hybrid"), emb, llm) == "probe-4fa7e2a6"


def test_one_embedded_text_per_turn(workbench, tiny_conv) -> None:
    t = tiny_conv.turns[0]
    assert t.embed_text == f"{t.speaker}: {t.content}" and t.render() == f"[{t.session_date}] {t.embed_text}"
    assert turn_trace_item(turn_row(t), 1.0, 1).text == t.embed_text
    workbench.ingest("naive_rag", tiny_conv)
    ids, mat = workbench.store.turn_matrix(tiny_conv.id)
    want = workbench.embedder.embed([x.embed_text for x in tiny_conv.turns])
    assert ids == [x.turn_id for x in tiny_conv.turns] and np.allclose(mat, want, atol=1e-6)


def test_conversation_is_saved_once(workbench, tiny_conv, tmp_path, monkeypatch) -> None:
    calls: list[str] = []
    real = workbench.store.save_conversation
    monkeypatch.setattr(workbench.store, "save_conversation", lambda c: (calls.append(c.id), real(c))[1])
    workbench.ingest("naive_rag", tiny_conv)  # never loaded: the ingest stores it (with its turns)
    assert calls == ["tiny"] and list(workbench.store.conversations()["conv_id"]) == ["tiny"]
    workbench.ingest("naive_rag_session", tiny_conv)
    workbench.ingest("naive_rag", tiny_conv)  # already complete
    assert calls == ["tiny"]
    assert workbench.conversation("tiny") == tiny_conv
