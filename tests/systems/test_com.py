"""CoM: the gate, relative-drop truncation, max length, and the trace on hand-made embeddings."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from memcore.settings import Settings
from memcore.systems import make_config
from memcore.systems.com import EXTENDED
from memcore.systems.com.chains import grow_chain, unit
from memcore.types import Conversation, Question, Turn
from memcore.workbench import Workbench

Q = np.array([1.0, 0.0, 0.0, 0.0])
# name: (vector, text). a, b relevant and close; c relevant but pointing elsewhere; d, e off-topic.
TOY = {
    "a": ([0.9, 0.436, 0.0, 0.0], "alpha rowing club at the lake"),
    "b": ([0.8, 0.6, 0.0, 0.0], "bravo rowing race on the lake"),
    "c": ([0.6, -0.8, 0.0, 0.0], "charlie rowing gloves were expensive"),
    "d": ([0.0, 0.0, 1.0, 0.0], "delta cooking pasta tonight"),
    "e": ([0.05, 0.0, 0.2, 0.98], "echo weather is rainy"),
}


def gate(m: np.ndarray, chain: list[np.ndarray], q: np.ndarray = Q) -> float:
    """Reference gate: cos(m, q) * cos(m, mean of the chain), written independently of the module."""
    c = np.mean(chain, axis=0)
    cos = lambda x, y: float(x @ y / np.linalg.norm(x) / np.linalg.norm(y))  # noqa: E731
    return cos(m, q) * cos(m, c)


def test_gate_grows_then_stops_on_relative_drop() -> None:
    names = list(TOY)
    emb = unit(np.array([TOY[n][0] for n in names]))
    rel = emb @ Q
    ch = grow_chain(emb, rel, 0, beta=0.5, max_len=8, ids=names)
    assert [names[m] for m in ch.members] == ["a", "b"]
    # step 1 picks b with the reference gate; step 2's best (c) falls below 0.5 x gate(b)
    g_b = gate(emb[1], [emb[0]])
    assert ch.gates[1] == pytest.approx(g_b)
    s1, s2 = ch.steps
    assert s1["chosen"] == "b" and not s1["stopped"]
    assert {c["id"] for c in s1["candidates"]} == {"b", "c", "d", "e"}
    row_c = next(c for c in s2["candidates"] if c["id"] == "c")
    assert row_c["gate"] == pytest.approx(gate(emb[2], [emb[0], emb[1]]), abs=1e-4)
    assert row_c["relevance"] == pytest.approx(rel[2], abs=1e-4)
    assert s2["stopped"] and s2["chosen"] is None and s2["best"] == "c"
    assert s2["gate"] < 0.5 * g_b and "beta" in s2["stop_reason"]
    assert ch.stop_step == 2 and names[ch.rejected] == "c"


def test_low_beta_lets_the_chain_run_to_the_pool_end() -> None:
    names = list(TOY)
    emb = unit(np.array([TOY[n][0] for n in names]))
    ch = grow_chain(emb, emb @ Q, 0, beta=0.0, max_len=8, ids=names)
    assert sorted(names[m] for m in ch.members) == sorted(names)
    assert ch.stop_reason == "pool empty" and ch.rejected is None


def test_max_length_truncates() -> None:
    rng = np.random.default_rng(0)
    emb = unit(np.array([1.0, 0.1, 0, 0]) + 0.01 * rng.standard_normal((12, 4)))
    ch = grow_chain(emb, emb @ Q, 0, beta=0.5, max_len=4)
    assert len(ch.members) == 4 and ch.stop_reason == "max length 4 reached" and ch.stop_step == 4


class ToyEmbedder:
    """Vectors chosen by hand: a text gets the vector of the TOY entry whose text it contains."""

    name = "toy-4"
    dim = 4

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = []
        for t in texts:
            vec = next((v for v, txt in TOY.values() if txt in t), None)
            out.append(Q if vec is None else vec)
        return unit(np.array(out, dtype=np.float64)).astype(np.float32)


@pytest.fixture
def toy(tmp_path) -> tuple[Workbench, Conversation, Question]:
    turns = [Turn("toy", f"D1:{i + 1}", i, 1, "1:00 pm on 8 May, 2023", "2023-05-08T13:00:00",
                  "Ann" if i % 2 == 0 else "Bob", txt) for i, (_, txt) in enumerate(TOY.values())]
    q = Question("toy:q0", "toy", "rowing", "lake", ["D1:2"], 4)
    conv = Conversation("toy", ["Ann", "Bob"], turns, [q], source="test")
    wb = Workbench(Settings(store_uri=str(tmp_path / "s"), llm_provider="offline", embedder="hashing"),
                   embedder=ToyEmbedder())
    wb.ingest("com", conv)
    return wb, conv, q


def test_system_trace_keeps_chains_steps_and_candidates(toy) -> None:
    wb, conv, q = toy
    tr = wb.system("com", conv, K=5, L=2).retrieve(q)
    chains = tr.structure["chains"]
    assert [c["anchor"] for c in chains] == ["D1:1", "D1:2"]  # a then b: ordered by relevance
    assert chains[0]["members"] == ["D1:1", "D1:2"] and chains[1]["members"] == ["D1:2", "D1:1"]
    assert chains[0]["steps"][-1]["stopped"] and chains[0]["stop_step"] == 2
    assert tr.structure["K"] == 5 and tr.structure["L"] == 2 and tr.structure["beta"] == 0.5
    # both chains hold a and b: items keep the duplicates, the rendered context does not
    assert [i.id for i in tr.items] == ["D1:1", "D1:2", "D1:2", "D1:1"]
    assert tr.context.count("alpha rowing") == 1 and tr.context_turn_ids() == ["D1:1", "D1:2"]
    chain_c = {c.id: c for c in tr.candidates if c.stage == "chains"}
    assert chain_c["D1:3"].reason == "gate dropped below beta * previous at step 2 of chain 1"
    assert chain_c["D1:4"].reason == "never the best gate" and not chain_c["D1:4"].kept
    assert chain_c["D1:1"].kept and chain_c["D1:1"].data["chains"] == [1, 2]
    pool = [c for c in tr.candidates if c.stage == "pool"]
    assert len(pool) == 5 and all(c.kept for c in pool) and [c.data["anchor"] for c in pool[:3]] == [True, True, False]


def test_pool_cut_at_k_is_visible(toy) -> None:
    wb, conv, q = toy
    tr = wb.system("com", conv, K=3, L=1).retrieve(q)
    pool = [c for c in tr.candidates if c.stage == "pool"]
    assert [c.kept for c in pool] == [True, True, True, False, False]
    assert pool[-1].reason == "ranked below the top 3 by dense search"
    assert {c.id for c in tr.candidates if c.stage == "chains"} == {c.id for c in pool[:3]}


def test_lexical_pool_keeps_cosine_relevance(toy) -> None:
    wb, conv, q = toy
    tr = wb.system("com", conv, retriever="lexical").retrieve(q)
    assert any("still cos(m, q)" in n for n in tr.notes)
    assert set(tr.context_turn_ids()) <= {"D1:1", "D1:2", "D1:3"}  # only turns with "rowing" are in the pool
    first = tr.structure["chains"][0]
    vec = dict(zip([f"D1:{i + 1}" for i in range(len(TOY))], [v for v, _ in TOY.values()], strict=True))
    cos_q = float(unit(np.array([vec[first["anchor"]]]))[0] @ Q)
    assert first["anchor_relevance"] == pytest.approx(cos_q, abs=1e-3)  # cosine, not the BM25 score
    assert first["anchor_score"] != pytest.approx(cos_q, abs=1e-3)


def test_extended_mode_is_opt_in_and_respects_the_budget(toy) -> None:
    wb, conv, q = toy
    paper = wb.system("com", conv).retrieve(q)
    assert not paper.structure["extended"] and "backfill" not in paper.stages
    q1 = Question("toy:q1", "toy", "What did Bob say about rowing?", "", [], 4)
    chains_only = wb.system("com", conv, **{**EXTENDED, "word_budget": 0, "K": 2, "L": 1}).retrieve(q1)
    budget = len(chains_only.context.split()) + 12  # room for one more turn, not for all
    ext = wb.system("com", conv, **{**EXTENDED, "word_budget": budget, "K": 2, "L": 1}).retrieve(q1)
    assert ext.structure["extended"] and ext.stages == ["pool", "chains", "backfill"]
    assert len(chains_only.context.split()) < len(ext.context.split()) <= budget
    assert "[8 May 2023]" in ext.context
    assert any(f"speaker boost {EXTENDED['speaker_boost']} for ['Bob']" in n for n in ext.notes)
    back = [c for c in ext.candidates if c.stage == "backfill"]
    assert any(c.kept for c in back) and any(c.reason == f"word budget {budget} reached" for c in back)


@pytest.mark.parametrize("bad", [{"K": 0}, {"beta": 1.5}, {"max_len": 0}, {"date_style": "iso"}])
def test_invalid_settings_are_rejected(bad: dict) -> None:
    with pytest.raises(ValueError):
        make_config("com", **bad)
