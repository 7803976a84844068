"""MemWeaver system: experience routing at the thresholds, DBSCAN groups, retrieval budgets, resume."""

from __future__ import annotations

import numpy as np
import pytest

from memcore.datasets import load_demo
from memcore.embed import HashingEmbedder
from memcore.llm.fake import FakeLLM
from memcore.settings import Settings
from memcore.systems.memweaver.experience import cohesion, dbscan_groups, route
from memcore.workbench import Workbench


def bench(tmp_path, provider=None) -> Workbench:
    settings = Settings(store_uri=str(tmp_path / "store"), llm_provider="offline", embedder="hashing")
    return Workbench(settings, embedder=HashingEmbedder(), provider=provider)


def at_cos(c: float, dim: int = 8, axis: int = 1) -> np.ndarray:
    """A unit vector with cosine `c` to e0 (the rest of its length on e_axis)."""
    v = np.zeros(dim, dtype=np.float32)
    v[0], v[axis] = c, np.sqrt(1 - c * c)
    return v


# ---------------------------------------------------------------- routing
@pytest.mark.parametrize("c,decision", [(0.95, "join"), (0.80, "join"), (0.79, "router"), (0.5, "router"),
                                        (0.49, "pending")])
def test_route_thresholds(c: float, decision: str) -> None:
    cents = {"cluster-1": at_cos(1.0), "cluster-2": at_cos(0.0, axis=2)}
    r = route(at_cos(c), cents, join=0.8, low=0.5, top=5)
    assert r.decision == decision
    assert r.best == "cluster-1" and r.best_sim == pytest.approx(c, abs=1e-5)
    if decision == "router":
        assert set(r.shortlist) == {"cluster-1"}


def test_router_shortlist_is_top_k_above_the_low_threshold() -> None:
    cents = {f"cluster-{i}": at_cos(s, axis=1 + i) for i, s in enumerate([0.75, 0.7, 0.65, 0.6, 0.55, 0.52, 0.3])}
    r = route(np.eye(8, dtype=np.float32)[0], cents, join=0.8, low=0.5, top=5)
    assert r.decision == "router" and list(r.shortlist) == [f"cluster-{i}" for i in range(5)]
    assert route(np.eye(8)[0], {}, 0.8, 0.5, 5).decision == "pending"


def test_dbscan_groups_clusters_then_noise() -> None:
    a = [at_cos(1.0), at_cos(0.95), at_cos(0.9)]
    e3, e4 = np.eye(8, dtype=np.float32)[3], np.eye(8, dtype=np.float32)[4]
    b = [e3, 0.99 * e3 + np.sqrt(1 - 0.99**2) * e4]
    lone = [np.eye(8, dtype=np.float32)[6]]
    groups = dbscan_groups(np.stack(a + b + lone), eps=0.3, min_samples=2)
    assert groups == [[0, 1, 2], [3, 4], [5]]
    assert cohesion(np.stack(a)) > 0.9


def _system_with_cluster(tmp_path, router_reply: str):
    conv = load_demo()
    fake = FakeLLM(by_role={"mw_router": {"cluster_id": router_reply, "reason": "scripted"}},
                   fallback="offline")  # experiences (mw_experience) from the offline engine
    wb = bench(tmp_path, provider=fake)
    sys_ = wb.system("memweaver", conv, restore=False)
    ids = [t.turn_id for t in conv.turns[:5]]
    sys_._turn_vecs = {ids[0]: at_cos(1.0), ids[1]: at_cos(1.0), ids[2]: at_cos(0.9),
                       ids[3]: at_cos(0.65), ids[4]: at_cos(0.3)}
    sys_.exp.clusters["cluster-1"] = {"members": ids[:2], "buffer": [], "center_text": "t", "experiences": []}
    sys_.exp._cent["cluster-1"] = at_cos(1.0)
    return sys_, ids, fake


@pytest.mark.parametrize("router_reply,routed", [("cluster-1", True), ("none", False)])
def test_turns_join_go_to_the_router_or_pend(tmp_path, router_reply: str, routed: bool) -> None:
    sys_, ids, fake = _system_with_cluster(tmp_path, router_reply)
    for t in ids[2:]:
        sys_.exp.route_turn(t)
    events = sys_._take_events()
    by_turn = {e.item_ids[-1]: e for e in events}
    assert by_turn[ids[2]].data["decision"] == "joined"  # 0.9 >= 0.8
    assert len(fake.calls("mw_router")) == 1  # only the 0.65 turn
    assert fake.calls("mw_router")[0].inputs["_sims"] == {"cluster-1": pytest.approx(0.65, abs=1e-4)}
    assert by_turn[ids[3]].data["decision"] == ("routed" if routed else "pending")
    assert by_turn[ids[4]].data["decision"] == "pending" and ids[4] in sys_.exp.pending  # 0.3 < 0.5
    members = sys_.exp.clusters["cluster-1"]["members"]
    assert (ids[3] in members) is routed and ids[2] in members


@pytest.mark.parametrize("buffer", [4, 5])
def test_add_buffer_reaching_its_size_triggers_reinduction(tmp_path, buffer: int) -> None:
    sys_, ids, fake = _system_with_cluster(tmp_path, "none")
    sys_.config.buffer = sys_.exp.cfg.buffer = buffer  # 4: the paper's App. B (default); 5: the public code
    more = [t.turn_id for t in sys_.conv.turns[5:5 + buffer]]
    sys_._turn_vecs.update({t: at_cos(0.95) for t in more})
    for t in more[:-1]:
        sys_.exp.route_turn(t)
    sys_.exp.process_window()
    assert not fake.calls("mw_experience") and len(sys_.exp.clusters["cluster-1"]["buffer"]) == buffer - 1
    sys_.exp.window = [more[-1]]
    sys_.exp.process_window()  # the buffer reaches `buffer`: centroid and experiences re-induced
    assert len(fake.calls("mw_experience")) == 1
    assert sys_.exp.clusters["cluster-1"]["buffer"] == []


# -------------------------------------------------------- ingest and state
def test_ingest_builds_all_kinds_and_resumes_identically(tmp_path) -> None:
    conv = load_demo()
    full = bench(tmp_path / "a")
    full.ingest("memweaver", conv)
    split = bench(tmp_path / "b")
    from memcore.ingest import ingest_conversation
    from memcore.systems import get_system, make_config

    s1 = get_system("memweaver")(split.runtime, conv, make_config("memweaver"))
    ingest_conversation(s1, split.store, split.ledger, stop_after=23)
    s2 = get_system("memweaver")(split.runtime, conv, make_config("memweaver"))
    rep = ingest_conversation(s2, split.store, split.ledger)
    assert rep.resumed_from == 23 and rep.complete
    a = full.system("memweaver", conv)
    assert full.store.kind_counts(a.space, conv.id) == split.store.kind_counts(a.space, conv.id)
    assert set(full.store.kind_counts(a.space, conv.id)) >= {"entity", "relation", "passage"}
    texts = sorted(r.text for r in a.memory.of_kind("relation"))
    assert texts == sorted(r.text for r in split.system("memweaver", conv).memory.of_kind("relation"))


# --------------------------------------------------------------- retrieval
@pytest.fixture
def demo_system(tmp_path):
    conv = load_demo()
    wb = bench(tmp_path)
    wb.ingest("memweaver", conv)
    return wb, conv


def test_retrieval_budgets_and_forced_global_passages(demo_system) -> None:
    wb, conv = demo_system
    sys_ = wb.system("memweaver", conv, keep_triples=8, triple_selector=False)
    q = conv.questions[0]
    tr = sys_.retrieve(q)
    kinds = [i.kind for i in tr.items]
    assert kinds.count("relation") <= 8 and kinds.count("passage") == 6 and kinds.count("experience") <= 6
    st = tr.structure
    assert [p["why"] for p in st["passages"]][:2] == ["forced-global", "forced-global"]
    assert sum(p["why"] == "forced-global" for p in st["passages"]) == 2
    glob = sys_.search_items("passage", q.text, 18)
    assert [p["id"] for p in st["passages"][:2]] == [it.id for it, _ in glob[:2]]
    assert st["budgets"]["used"]["triples"] == kinds.count("relation")
    seeds = [c for c in tr.candidates if c.stage == "seed_triples" and c.kept]
    assert len(seeds) == 6 and all(e["seed"] for e in st["subgraph"]["edges"] if e["id"] in {c.id for c in seeds})
    assert {c.stage for c in tr.candidates} <= set(tr.stages)
    assert set(tr.stages) == {"seed_triples", "expanded_triples", "passages", "experiences"}
    exp_kept = [c for c in tr.candidates if c.stage == "expanded_triples" and c.kept]
    assert len(exp_kept) == kinds.count("relation") and all(c.turn_ids for c in exp_kept)
    node_ids = {n["id"] for n in st["subgraph"]["nodes"]}
    assert all(e["source"] in node_ids and e["target"] in node_ids for e in st["subgraph"]["edges"])
    assert tr.context.startswith("Knowledge graph") and "Passages:" in tr.context
    from memcore.systems.memweaver.view import memweaver_subgraph
    from memcore.viz.graph import graph_html

    view = memweaver_subgraph(st)
    assert len(view["nodes"]) == len(st["subgraph"]["nodes"]) and "<html" in graph_html(view).lower()


@pytest.mark.parametrize("mode", ["dense", "lexical", "hybrid"])
def test_default_budgets_in_every_retriever(demo_system, mode: str) -> None:
    wb, conv = demo_system
    sys_ = wb.system("memweaver", conv, retriever=mode)
    for q in conv.questions[:3]:
        tr = sys_.retrieve(q)
        kinds = [i.kind for i in tr.items]
        assert kinds.count("relation") <= 36 and kinds.count("passage") <= 6 and kinds.count("experience") <= 6
        assert tr.retriever == mode and tr.context_turn_ids()


def test_answer_uses_the_assembled_context(demo_system) -> None:
    wb, conv = demo_system
    ans = wb.ask("memweaver", conv, conv.questions[0])
    assert ans.text and ans.trace.context and "answer" in ans.usage


def test_offline_judgements_say_so_in_event_reasons(demo_system) -> None:
    """Shown reasons name the offline engine; the stored text does not (it is the same for every provider)."""
    from memcore.viz.replay import event_reason

    wb, conv = demo_system
    sys_ = wb.system("memweaver", conv)
    events = wb.store.events(sys_.space, conv.id)
    judged = [e for e in events if e.data.get("decision") in ("cluster-created", "incoherent", "routed", "denied")
              or (e.item_kind == "experience" and e.kind == "created")]
    assert judged
    for e in judged:
        assert "offline engine" not in e.reason and "offline engine: " in event_reason(e, wb.llm.is_offline), e
    kinds = {(e.item_kind, e.kind) for e in events}
    assert {("entity", "created"), ("relation", "created"), ("passage", "created"), ("passage", "linked")} <= kinds
    linked = next(e for e in events if e.item_kind == "passage" and e.kind == "linked")
    assert all(r["method"] in ("exact", "similarity", "new") for r in linked.data["resolution"].values())
