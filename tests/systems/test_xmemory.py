"""xMemory: construction events, restructuring, Stage I selection, Stage II uncertainty gating."""

from __future__ import annotations

import numpy as np
import pytest

from memcore.embed import HashingEmbedder
from memcore.llm.fake import FakeLLM
from memcore.settings import Settings
from memcore.systems.xmemory import XMemoryConfig, XMemorySystem
from memcore.systems.xmemory import retrieval as xr
from memcore.systems.xmemory import trace as xtr
from memcore.systems.xmemory.offline import c_tf_idf, offline_boundary
from memcore.systems.xmemory.proxy import TermIndex, sentence_supports, support_uncertainty
from memcore.workbench import Workbench

# ------------------------------------------------------------------ Stage I


def test_knn_graph_keeps_top_k_positive_edges() -> None:
    M = np.array([[1.0, 0.0], [0.8, 0.6], [0.0, 1.0], [-1.0, 0.0]])
    g = xr.knn_graph(M, k=2)
    assert g[0] == {1: pytest.approx(0.8)}  # row 2 (cos 0) is among the top 2 but dropped; row 3 is not
    assert all(w > 0 for nb in g for w in nb.values())
    assert len(xr.knn_graph(np.eye(5), k=2)[0]) == 0  # orthogonal: no positive edges


def test_stage_one_picks_a_diverse_set_on_a_toy_graph() -> None:
    # Candidates a1..a3 form a dense, highly relevant cluster; b1, b2 a second cluster; c is isolated.
    ids = ["a1", "a2", "a3", "b1", "b2", "c"]
    rel = [1.0, 0.95, 0.9, 0.5, 0.45, 0.6]
    nbrs = [{1: 0.9, 2: 0.9}, {0: 0.9, 2: 0.9}, {0: 0.9, 1: 0.9}, {4: 0.9}, {3: 0.9}, {}]
    picks = xr.greedy_select(rel, nbrs, alpha=0.7, budget=5)
    assert [ids[p.index] for p in picks] == ["a1", "b1", "c"]  # top-3 by score would be a1, a2, a3
    assert picks[-1].covered == pytest.approx(1.0)  # stopped at full coverage, under the budget of 5
    assert picks[0].coverage == pytest.approx(1.0) and picks[1].coverage == pytest.approx(1.9 / 2.8)
    assert [ids[p.index] for p in xr.greedy_select(rel, nbrs, alpha=0.7, budget=2)] == ["a1", "b1"]
    assert [ids[p.index] for p in xr.greedy_select(rel, nbrs, alpha=0.0, budget=3)] == ["a1", "a2", "a3"]


# ----------------------------------------------------------------- Stage II
def _scorer(h: dict[str, float], h0: float = 1.0):
    calls: list[list[str]] = []

    def score(eps: list[str]) -> tuple[float, str]:
        calls.append(list(eps))
        return (h0 if not eps else h[eps[0]]), ""

    return score, calls


def test_stage_two_includes_expands_and_stops_early_on_a_low_gain_probe() -> None:
    score, calls = _scorer({"e1": 0.5, "e2": 0.9, "e3": 1.6, "e4": 0.1, "e5": 0.1})
    ranked = [(f"e{i}", 1.0 - i / 10) for i in range(1, 6)]
    res = xr.stage_two(ranked, score)
    got = {p.id: p.decision for p in res.probes}
    assert got == {"e1": "include+messages", "e2": "include", "e3": "skip"}  # gains 0.5, 0.1, -0.6
    assert res.probes[0].gain == pytest.approx(0.5) and res.probes[0].H_before == 1.0
    assert "among the first 3" in res.probes[-1].stop and res.unprobed == ["e4", "e5"]
    assert calls[0] == [] and len(calls) == 4  # baseline (semantics only) + three probes


def test_stage_two_stops_at_the_second_low_gain_probe_after_the_first_three() -> None:
    score, _ = _scorer({"e1": 0.5, "e2": 0.9, "e3": 0.8, "e4": 1.2, "e5": 0.7, "e6": 1.5, "e7": 0.1})
    res = xr.stage_two([(f"e{i}", 1.0) for i in range(1, 8)], score)
    dec = [p.decision for p in res.probes]
    assert dec == ["include+messages", "include", "include", "include", "include+messages", "skip"]
    assert res.probes[3].gain == pytest.approx(-0.2)  # low gain but > -0.4: included, counted as low
    assert res.probes[-1].stop == "2 low-gain probes" and res.unprobed == ["e7"]


def test_stage_two_stops_at_ten_episodes() -> None:
    score, _ = _scorer({f"e{i}": 0.2 for i in range(12)})
    res = xr.stage_two([(f"e{i}", 1.0) for i in range(12)], score)
    assert len(res.probes) == 10 and all(p.decision == "include+messages" for p in res.probes)
    assert "10 episodes included" in res.stop and res.unprobed == ["e10", "e11"]


def test_mean_nll_uses_the_first_20_tokens() -> None:
    assert xr.mean_nll([-0.5, -1.5]) == pytest.approx(1.0)
    assert xr.mean_nll([-1.0] * 20 + [-100.0] * 5) == pytest.approx(1.0)
    assert xr.mean_nll(None) is None and xr.mean_nll([]) is None


def test_episode_priority_adds_half_the_parent_semantic_score() -> None:
    ranked = xr.episode_priority({"a": 0.0, "b": 1.0, "c": 0.5}, {"a": 1.0})
    assert ranked == [("b", pytest.approx(1.0)), ("a", pytest.approx(0.5)), ("c", pytest.approx(0.5))]


# ------------------------------------------------------------ offline roles
def test_offline_boundary_rules() -> None:
    base = {"n_messages": 5, "new_messages": ["Ana: ok"], "max_messages": 15, "gap_minutes": 30}
    assert offline_boundary({**base, "n_messages": 0})["should_end"] is False
    assert "time gap" in offline_boundary({**base, "minutes_since_last": 45})["reason"]
    assert "transition" in offline_boundary({**base, "new_messages": ["Ben: By the way, I moved!"]})["reason"]
    assert "length" in offline_boundary({**base, "n_messages": 15})["reason"]
    history = [f"[8 May, 2023] Ana: puppy {i}" for i in range(5)]
    shift = {**base, "history": history, "new_messages": ["[8 May, 2023] Ben: tax forms"]}
    # the rule embeds the rendered turns as the system embeds turns ("Speaker: text") and compares itself
    assert "topic change" in offline_boundary(shift, Axes())["reason"]
    same = offline_boundary({**shift, "new_messages": ["[8 May, 2023] Ana: puppy 9"]}, Axes())
    assert same["should_end"] is False and "cos 1.00" in same["reason"]
    assert "cos" not in offline_boundary(shift)["reason"]  # no embedder, no topic rule


class Axes:
    """Turns about puppies on one axis, the rest on another; sees only "Speaker: text"."""

    dim = 2

    def embed(self, texts: list[str]) -> np.ndarray:
        assert not any(t.startswith("[") for t in texts)
        return np.array([[1.0, 0.0] if "puppy" in t else [0.0, 1.0] for t in texts], dtype=np.float32)


def test_c_tf_idf_prefers_words_specific_to_the_theme() -> None:
    mine = ["Ana adopted a puppy named Biscuit", "Biscuit is a golden retriever puppy"]
    others = ["Ana ran the Lisbon half-marathon", "Ana started pottery with Ben"]
    kws = c_tf_idf(mine, others, k=2)
    assert "ana" not in kws and set(kws) <= {"biscuit", "puppy", "golden", "retriever", "adopted", "named"}


def test_support_uncertainty_drops_when_the_context_supports_the_answer() -> None:
    q = "What breed is Biscuit?"
    assert support_uncertainty(q, "Biscuit is a golden retriever.") < support_uncertainty(q, "Ben likes pottery.")


_INDEX = TermIndex.build(["Ana: I adopted a puppy named Biscuit", "Ben: pottery is fun", "Ana: Lisbon was great",
                          "Ben: how is Biscuit?", "Ana: my pottery bowl broke", "Ben: see you soon"], ["Ana", "Ben"])
_Q = "When did Ana adopt Biscuit?"
_SEM = "[8 May, 2023] Ana has a dog named Biscuit."
_ANSWER = "[8 May, 2023] Ana & Ben: Ana adopted Biscuit last week (the week before 8 May 2023). Ben is happy."
_UNRELATED = "[9 May, 2023] Ana & Ben: Ben went to a pottery class with Ana. They talked for an hour."


def test_proxy_an_episode_with_the_answer_lowers_uncertainty_more_than_an_unrelated_one() -> None:
    h0 = support_uncertainty(_Q, _SEM, _INDEX)
    gain_answer = h0 - support_uncertainty(_Q, f"{_SEM}\n{_ANSWER}", _INDEX)
    gain_unrelated = h0 - support_uncertainty(_Q, f"{_SEM}\n{_UNRELATED}", _INDEX)
    assert gain_answer > 0.25  # question terms next to the answer type (a date): messages too
    assert -0.4 < gain_unrelated < 0  # never exactly 0: small negative (included, but a low-gain probe)
    assert 0 < h0 < 2.0  # continuous: the semantic supports the question partly (no date in its text)


def test_proxy_sentence_support_parts() -> None:
    sup = dict((s, p) for p, s in sentence_supports(_Q, f"{_SEM}\n{_ANSWER}\n{_UNRELATED}", _INDEX))
    assert "Ben went to a pottery class with Ana." not in sup  # only a speaker's name: no support
    dated = next(p for s, p in sup.items() if "adopted Biscuit last week" in s)
    undated = sup["Ana has a dog named Biscuit."]
    assert dated > undated > 0  # answer type (date) in the sentence and more question terms matched
    once = support_uncertainty(_Q, _SEM, _INDEX)
    twice = support_uncertainty(_Q, f"{_SEM}\n{_SEM}", _INDEX)
    assert twice > once  # a repeated sentence adds no support, only words
    assert _INDEX.idf("adopt") > _INDEX.idf("biscuit") > _INDEX.idf("ana") > 0 and TermIndex().idf("x") == 1.0


def test_stage_two_with_the_proxy_keeps_the_paper_thresholds() -> None:
    eps = {"answer": _ANSWER, "unrelated": _UNRELATED, "later": "[10 May, 2023] Ana adopted Biscuit."}

    def score(ids: list[str]) -> tuple[float, str]:
        return support_uncertainty(_Q, "\n".join([_SEM, *(eps[i] for i in ids)]), _INDEX), ""

    res = xr.stage_two([("answer", 1.0), ("unrelated", 0.9), ("later", 0.8)], score)
    assert [(p.id, p.decision) for p in res.probes] == [("answer", "include+messages"), ("unrelated", "include")]
    assert "among the first 3" in res.stop and res.unprobed == ["later"]  # the unrelated probe stopped it


# ------------------------------------------------------------ the system
def test_ingest_builds_the_hierarchy_with_scored_events(workbench, tiny_conv) -> None:
    rep = workbench.ingest("xmemory", tiny_conv)
    assert rep.complete and {"episode", "semantic", "theme"} <= set(rep.counts)
    sys_ = workbench.system("xmemory", tiny_conv)
    sems, themes = sys_.memory.of_kind("semantic"), sys_.memory.of_kind("theme")
    members = {s for t in themes for s in t.metadata["members"]}
    assert members == {s.id for s in sems} and all(s.metadata["theme"] in sys_.memory for s in sems)
    assert all(s.sources and sys_.memory.get(s.sources[0]).kind == "episode" for s in sems)
    events = workbench.store.events(sys_.space, tiny_conv.id)
    theme_evs = [e for e in events if e.item_kind == "theme" and e.kind in ("created", "linked")] + [
        e for e in events if e.kind == "linked" and "attached" in e.reason]
    assert theme_evs and all({"f_before", "f_after", "candidates"} <= set(e.data) for e in theme_evs)
    ck = workbench.store.checkpoint(sys_.space, tiny_conv.id)
    assert ck["state"]["theme_count"] == len(themes) and "reassignment_ratio" in ck["state"]


def test_retrieve_trace_is_the_hierarchy_path(workbench, tiny_conv) -> None:
    ans = workbench.ask("xmemory", tiny_conv, tiny_conv.questions[0])
    tr = ans.trace
    assert tr.stages == ["semantic_pool", "themes", "semantics", "episodes", "messages"]
    assert {c.stage for c in tr.candidates} <= set(tr.stages) and all(c.turn_ids for c in tr.candidates)
    st = tr.structure
    assert {"themes", "semantics", "episodes", "messages", "uncertainty", "reassignment_ratio",
            "net_reassignment_ratio", "theme_count", "path"} <= set(st)
    assert 0 <= st["net_reassignment_ratio"] <= st["reassignment_ratio"] <= 1
    assert st["uncertainty"].startswith("proxy:") and any("logprobs" in n for n in tr.notes)
    assert {i.kind for i in tr.items} <= {"semantic", "episode", "turn"}  # no theme summaries in the prompt
    assert "D1:3" in tr.context_turn_ids()
    assert tr.context.startswith("Semantic memories:") and "Episodic memories:" in tr.context
    for e in st["episodes"]:
        assert e["decision"] in ("include", "include+messages", "skip", "not probed")


def test_stage_two_uses_token_logprobs_when_the_model_returns_them(tmp_path, tiny_conv) -> None:
    wb = Workbench(Settings(store_uri=str(tmp_path / "s"), llm_provider="fake", embedder="hashing"),
                   embedder=HashingEmbedder(), provider=FakeLLM(logprobs=[-0.5, -1.5], fallback="offline"))  # replies: offline
    tr = wb.ask("xmemory", tiny_conv, tiny_conv.questions[0]).trace
    st = tr.structure
    assert st["uncertainty"] == "logprobs" and st["H0"] == pytest.approx(1.0)
    first = st["episodes"][0]
    assert first["H_after"] == pytest.approx(1.0) and first["gain"] == pytest.approx(0.0)
    assert first["decision"] == "include" and "low-gain" in first["stop"]
    assert not any("proxy" in n for n in tr.notes)


def test_stage_one_graph_scope(workbench, tiny_conv) -> None:
    workbench.ingest("xmemory", tiny_conv)
    level = workbench.system("xmemory", tiny_conv)
    joint = workbench.system("xmemory", tiny_conv, knn_scope="joint")
    themes = [t.id for t in level.memory.of_kind("theme")]
    sems = [s.id for s in level.memory.of_kind("semantic")]
    pos_l, g_l = xtr._graph(level.memory, level.config, level.retrieval_cache, "theme", 10)
    pos_j, g_j = xtr._graph(joint.memory, joint.config, joint.retrieval_cache, "theme", 10)
    assert set(pos_l) == set(themes) and set(pos_j) == set(themes) | set(sems)
    ids_l, ids_j = {i: x for x, i in pos_l.items()}, {i: x for x, i in pos_j.items()}

    def theme_edges(pos: dict[str, int], g: list[dict[int, float]], ids: dict[int, str]) -> set:
        return {(t, ids[u]) for t in themes for u in g[pos[t]] if ids[u] in themes}

    # a theme's neighbours among themes and semantics are fewer themes: the joint graph is sparser per level
    assert theme_edges(pos_j, g_j, ids_j) <= theme_edges(pos_l, g_l, ids_l)
    tr = joint.retrieve(tiny_conv.questions[0])
    assert tr.structure["knn_graph"].startswith("joint") and level.retrieve(
        tiny_conv.questions[0]).structure["knn_graph"].startswith("level")


def test_split_reassigns_semantics_and_records_f(workbench, tiny_conv) -> None:
    sys_ = XMemorySystem(workbench.runtime, tiny_conv)
    dim = workbench.embedder.dim
    a, b = np.zeros(dim), np.zeros(dim)
    a[0], b[0], b[1] = 1.0, np.cos(np.deg2rad(50)), np.sin(np.deg2rad(50))  # cos(a, b) = 0.64 < 0.66
    for i in range(13):
        sem = sys_.new_item("semantic", f"fact {i}", [], ["D1:1"], vector=a if i % 2 == 0 else b, theme="")
        sys_.attach(sem)
    evs = sys_._take_events()
    split = [e for e in evs if e.kind == "split"]
    assert len(split) == 1 and split[0].data["f_after"] > split[0].data["f_before"]
    assert split[0].data["candidates"] and split[0].data["chosen"].startswith("components")
    moved = [e for e in evs if e.kind == "moved"]
    assert len(moved) == 1 and len(moved[0].item_ids) == 6
    themes = sys_.memory.of_kind("theme")
    assert sorted(len(t.metadata["members"]) for t in themes) == [6, 7]
    assert sys_.reassignment_ratio() == pytest.approx(6 / 13)
    st = sys_.state()
    assert st["theme_count"] == 2 and len(st["moved"]) == 6
    other = XMemorySystem(workbench.runtime, tiny_conv)
    other.load_state(st)
    assert other.moved == sys_.moved and other.stats["splits"] == 1


def _attach_all(sys_: XMemorySystem, vecs: list[np.ndarray]) -> None:
    for i, v in enumerate(vecs):
        sys_.attach(sys_.new_item("semantic", f"fact {i}", [], ["D1:1"], vector=v, theme=""))


def test_no_theme_grows_past_the_size_cap(workbench, tiny_conv) -> None:
    sys_ = XMemorySystem(workbench.runtime, tiny_conv)
    rng = np.random.default_rng(1)
    base = np.zeros(workbench.embedder.dim)
    base[0] = 1.0
    vecs = [base + 0.02 * rng.standard_normal(len(base)) for _ in range(30)]  # one tight topic
    _attach_all(sys_, [v / np.linalg.norm(v) for v in vecs])
    sizes = [len(t.metadata["members"]) for t in sys_.memory.of_kind("theme")]
    assert sum(sizes) == 30 and max(sizes) <= sys_.config.max_theme and len(sizes) >= 3
    assert sys_.stats["new_theme"] == 1 and sys_.stats["attached"] == 29  # every other theme came from a split


def test_incoherent_split_needs_a_gain_unless_configured(workbench, tiny_conv) -> None:
    dim = workbench.embedder.dim
    rng = np.random.default_rng(2)
    vecs = []
    for axis in (40, 50):  # two other, tight themes, so f weighs the split against neighbours
        for _ in range(4):
            v = np.zeros(dim)
            v[axis], v[axis + 1] = 1.0, 0.05 * rng.standard_normal()
            vecs.append(v / np.linalg.norm(v))
    for i in range(9):  # 9 members, each a mix of a shared axis and a private one: mean pairwise cos < 0.72
        v = np.zeros(dim)
        v[0], v[1 + i] = 1.0, 0.9 + 0.01 * rng.standard_normal()
        vecs.append(v / np.linalg.norm(v))
    counts = {}
    for gate in (True, False):
        sys_ = XMemorySystem(workbench.runtime, tiny_conv, XMemoryConfig(coherence_split_needs_gain=gate))
        _attach_all(sys_, vecs)
        evs = sys_._take_events()
        counts[gate] = (len(sys_.memory.of_kind("theme")), [e for e in evs if e.kind == "split"],
                        [e for e in evs if "rejected" in e.reason])
    themes, splits, rejected = counts[True]
    assert themes == 3 and not splits and rejected  # f falls for every candidate: the gated split is rejected
    themes, splits, rejected = counts[False]
    assert themes >= 4 and splits and "mean pairwise cos" in splits[0].data["trigger"]


def test_net_reassignment_counts_semantics_away_from_their_first_theme(workbench, tiny_conv) -> None:
    sys_ = XMemorySystem(workbench.runtime, tiny_conv)
    dim = workbench.embedder.dim
    a, b = np.zeros(dim), np.zeros(dim)
    a[0], b[0], b[1] = 1.0, np.cos(np.deg2rad(50)), np.sin(np.deg2rad(50))
    _attach_all(sys_, [a if i % 2 == 0 else b for i in range(13)])
    sems = sys_.memory.of_kind("semantic")
    away = [s for s in sems if s.metadata["theme"] != s.metadata["first_theme"]]
    assert len(away) == 6 and sys_.net_reassignment_ratio() == pytest.approx(6 / 13)
    assert sys_.state()["net_reassignment_ratio"] == pytest.approx(6 / 13, abs=1e-4)


def test_a_finished_memory_restored_to_answer_has_its_term_index_and_answers_the_same(tmp_path, tiny_conv) -> None:
    from memcore.testing.contract import contract_workbench

    contract_workbench(tmp_path).ingest("xmemory", tiny_conv)
    held = contract_workbench(tmp_path)  # a new process's workbench: Ask's hold restores the finished memory
    assert held.hold("xmemory", tiny_conv)
    sys_ = held.system("xmemory", tiny_conv)
    eps = sys_.memory.of_kind("episode")
    assert sys_.retrieval_cache.terms is not None and sys_.retrieval_cache.terms[0] == len(eps)
    seen = {t for e in eps for t in e.turn_ids}
    turns = [t for t in tiny_conv.turns if t.turn_id in seen]
    want = TermIndex.build([t.embed_text for t in turns], {t.speaker for t in turns})
    got = sys_.retrieval_cache.terms[1]
    assert (got.df, got.n, got.speakers) == (want.df, want.n, want.speakers)
    primed = held.ask("xmemory", tiny_conv, tiny_conv.questions[0])
    cold = contract_workbench(tmp_path)
    cold.system("xmemory", tiny_conv).retrieval_cache.terms = None  # as before: the first question builds it
    unprimed = cold.ask("xmemory", tiny_conv, tiny_conv.questions[0])
    assert primed.text == unprimed.text and primed.trace.structure == unprimed.trace.structure
    assert [(i.id, i.score) for i in primed.trace.items] == [(i.id, i.score) for i in unprimed.trace.items]


def test_a_replay_restore_at_a_step_builds_no_term_index(tmp_path, tiny_conv) -> None:
    from memcore.testing.contract import contract_workbench

    wb = contract_workbench(tmp_path)
    wb.ingest("xmemory", tiny_conv)
    sys_ = wb.system("xmemory", tiny_conv, restore=False)
    sys_.restore(at_step=3, checkpoint=wb.store.checkpoint(wb.space("xmemory", tiny_conv), tiny_conv.id))
    assert sys_.retrieval_cache.terms is None
