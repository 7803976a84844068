"""Baselines: naive RAG over turns and sessions keeps the top k, full context keeps every turn."""

from __future__ import annotations

import pytest

from memcore.settings import Settings
from memcore.systems.base import render_context
from memcore.types import Conversation, Question, Turn
from memcore.workbench import Workbench

TEXTS = [  # (session, speaker, text)
    (1, "Ann", "I adopted a kayak from the rowing club."),
    (1, "Bob", "Cooking pasta tonight with fresh basil."),
    (1, "Ann", "The weather was rainy all week."),
    (2, "Bob", "My kayak trip on the lake was calm."),
    (2, "Ann", "Gardening tomatoes this summer."),
    (2, "Bob", "A kayak paddle broke at the lake today."),
]
DATES = {1: "1:00 pm on 8 May, 2023", 2: "3:00 pm on 20 May, 2023"}


@pytest.fixture(scope="module")
def toy(tmp_path_factory) -> tuple[Workbench, Conversation]:
    turns = [Turn("toy", f"D{s}:{i + 1}", i, s, DATES[s], "2023-05-08T13:00:00", spk, txt)
             for i, (s, spk, txt) in enumerate(TEXTS)]
    conv = Conversation("toy", ["Ann", "Bob"], turns, [], source="test")
    wb = Workbench(Settings(store_uri=str(tmp_path_factory.mktemp("s") / "s"), llm_provider="offline",
                            embedder="hashing"))
    for name in ("naive_rag", "naive_rag_session", "full_context"):
        wb.ingest(name, conv)
    return wb, conv


def q(text: str) -> Question:
    return Question("toy:q", "toy", text, "", [], 4)


def test_turn_rag_keeps_top_k_in_conversation_order(toy) -> None:
    wb, conv = toy
    tr = wb.system("naive_rag", conv, retriever="lexical", k=2, pool=6).retrieve(q("kayak lake"))
    kayak = {"D1:1", "D2:4", "D2:6"}
    search = [c for c in tr.candidates if c.stage == "search"]
    kept = [c.id for c in search if c.kept]
    assert tr.stages == ["search"] and len(kept) == 2 and [c.kept for c in search[:2]] == [True, True]
    assert set(kept) <= kayak and "D1:1" not in kept  # the two turns naming both words
    assert [i.id for i in tr.items] == sorted(kept)  # conversation order, not rank order
    dropped = [c for c in search if not c.kept]
    assert dropped and all(c.reason == "ranked below the top 2" for c in dropped)
    assert tr.structure == {"k": 2, "retriever": "lexical"}


def test_session_rag_keeps_whole_sessions(toy) -> None:
    wb, conv = toy
    tr = wb.system("naive_rag_session", conv, retriever="lexical", k=1).retrieve(q("kayak paddle lake"))
    assert tr.stages == ["search"] and len(tr.items) == 1
    assert tr.items[0].turn_ids == ["D2:4", "D2:5", "D2:6"]
    assert "Bob: A kayak paddle broke at the lake today." in tr.items[0].text
    dropped = [c for c in tr.candidates if not c.kept]
    assert [c.reason for c in dropped] == ["session ranked below the top 1"]
    assert dropped[0].turn_ids == ["D1:1", "D1:2", "D1:3"]


def test_full_context_has_every_turn_with_its_metadata(toy) -> None:
    wb, conv = toy
    tr = wb.system("full_context", conv).retrieve(q("anything"))
    assert [i.id for i in tr.items] == [t.turn_id for t in conv.turns]
    assert [i.rank for i in tr.items] == list(range(1, len(TEXTS) + 1))
    last = tr.items[-1]
    assert last.text == "Bob: A kayak paddle broke at the lake today." and last.origin == "transcript"
    assert last.metadata == {"date": DATES[2], "speaker": "Bob", "session": 2}
    context = render_context(tr.items)
    assert all(txt in context for _, _, txt in TEXTS)


@pytest.mark.parametrize("how", ["turns_mean", "text"])
def test_session_vector_is_the_mean_of_its_turns_or_the_block_text(toy, how) -> None:
    import numpy as np

    wb, conv = toy
    wb.ingest("naive_rag_session", conv, session_vector=how)
    sys_ = wb.system("naive_rag_session", conv, session_vector=how)
    sess = sorted(wb.store.items(sys_.space, conv.id, "session"), key=lambda i: i.turn_ids[0])
    ids, mat = wb.store.turn_matrix(conv.id)
    for item in sess:
        if how == "turns_mean":
            mean = mat[[ids.index(t) for t in item.turn_ids]].mean(axis=0)
            want = mean / np.linalg.norm(mean)
        else:
            want = wb.embedder.embed([item.text])[0]
        assert np.allclose(item.embedding, want, atol=1e-6)
    with pytest.raises(ValueError, match="session_vector"):
        wb.system("naive_rag_session", conv, session_vector="first_turn")
