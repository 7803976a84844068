"""MemWeaver graph memory: time normalisation, entity resolution, dedup, session review, rebuild."""

from __future__ import annotations

import pytest

from memcore.embed import HashingEmbedder
from memcore.llm.fake import FakeLLM
from memcore.settings import Settings
from memcore.systems.memweaver.graph import GraphMemory, name_similarity
from memcore.systems.memweaver.offline_time import offline_time, time_expressions
from memcore.types import Conversation, Turn
from memcore.workbench import Workbench


def conv_of(lines: list[tuple[int, str, str, str]], conv_id: str = "mw") -> Conversation:
    """A conversation from (session, date, speaker, text) lines."""
    turns, counters = [], {}
    for i, (s, date, spk, text) in enumerate(lines):
        counters[s] = counters.get(s, 0) + 1
        turns.append(Turn(conv_id, f"D{s}:{counters[s]}", i, s, date, "2023-05-08T10:00:00", spk, text))
    return Conversation(conv_id, sorted({t.speaker for t in turns}), turns, [], source="test")


def bench(tmp_path, provider=None) -> Workbench:
    settings = Settings(store_uri=str(tmp_path / "store"), llm_provider="offline", embedder="hashing")
    return Workbench(settings, embedder=HashingEmbedder(), provider=provider)


# ------------------------------------------------------------------ time
@pytest.mark.parametrize("text,expected", [
    ("I went to Paris last year.", "2022"),
    ("I went to a support group yesterday.", "7 May, 2023"),
    ("We move next month.", "June, 2023"),
    ("I ran a race on 20 May 2022.", "20 May, 2022"),
    ("It opened in March 2021.", "March, 2021"),
    ("I love painting.", ""),
])
def test_relative_and_absolute_times_are_normalised(text: str, expected: str) -> None:
    out = offline_time({"text": text, "date": "1:56 pm on 8 May, 2023", "relation": "x y z"})
    assert out["absolute_time"] == expected


def test_time_role_prefers_the_relations_own_sentence() -> None:
    """The rule finds the relation's sentence itself (the relation's target, by redoing the turn's extraction):
    the system passes a real model's inputs only."""
    text = "I painted a sunset last year. I start a new job next month."
    base = {"text": text, "date": "8 May, 2023", "speaker": "Ana", "speakers": ["Ana", "Ben"],
            "dialogue": f"Date/Time: 8 May, 2023\nSpeaker Ana says: {text}"}
    assert offline_time({**base, "relation": "Ana start new job"}) == {"absolute_time": "June, 2023"}
    assert offline_time({**base, "relation": "Ana painted sunset"}) == {"absolute_time": "2022"}
    assert offline_time({**base, "relation": "Ana knows Ben"}) == {"absolute_time": ""}  # two candidates
    assert [v for _, v in time_expressions("3 weeks ago", "8 May, 2023")] == ["the week of 17 April, 2023"]


def test_time_role_runs_through_the_llm_client(tmp_path) -> None:
    wb = bench(tmp_path)
    res = wb.llm.run("mw_time", {"dialogue": "Speaker Ana says: I went to Rome last year.", "relation": "Ana went to Rome",
                                 "date": "8 May, 2023", "text": "I went to Rome last year."}, stage="construction")
    assert res.ok and res.output.absolute_time == "2022"
    assert res.prompt_tokens > 0


# -------------------------------------------------------- entity resolution
def test_mel_and_melanie_merge_only_above_the_threshold() -> None:
    ratio = name_similarity("Mel", "Melanie")
    assert ratio == pytest.approx(0.6)
    g = GraphMemory()
    g.add_entity("entity-1", "Melanie")
    below = g.resolve("Mel", ratio - 0.01)
    assert below.entity_id == "entity-1" and below.method == "similarity"
    assert below.similarity == pytest.approx(ratio)
    above = g.resolve("Mel", ratio + 0.01)
    assert above.entity_id is None and above.method == "new"
    assert g.resolve("  melanie ", 0.99).method == "exact"


def test_entities_added_between_resolutions_are_found_as_in_a_graph_built_at_once() -> None:
    """The alias index grows with each new alias (no rebuild per entity): resolving after every addition finds
    what a graph given the same entities at once finds."""
    names = ["Melanie", "Caroline", "Mel's sister", "Oscar", "Carolyn", "Melany", "Oskar", "Caro", "Melania"]
    grown, got = GraphMemory(), []
    for i, n in enumerate(names):
        grown.add_entity(f"e{i}", n)
        query = names[(i + 3) % len(names)][:-1]
        fresh = GraphMemory()
        for j, m in enumerate(names[: i + 1]):
            fresh.add_entity(f"e{j}", m)
        r, f = grown.resolve(query, 0.6), fresh.resolve(query, 0.6)
        assert (r.entity_id, r.method, r.matched, r.similarity) == (f.entity_id, f.method, f.matched, f.similarity)
        got.append(r.method)
    assert "similarity" in got  # the queries do match aliases: the comparison is not between two "new"s


@pytest.mark.parametrize("threshold,merged", [(0.59, True), (0.61, False)])
def test_system_merges_mel_into_melanie_by_threshold(tmp_path, threshold: float, merged: bool) -> None:
    conv = conv_of([(1, "8 May, 2023", "Melanie", "I painted a lake sunrise."),
                    (1, "8 May, 2023", "Caroline", "Hey Mel! I love the lake sunrise.")])
    wb = bench(tmp_path)
    wb.ingest("memweaver", conv, entity_sim=threshold)
    sys_ = wb.system("memweaver", conv, entity_sim=threshold)
    names = {e.text for e in sys_.memory.of_kind("entity")}
    assert ("Mel" not in names) is merged
    events = wb.store.events(sys_.space, conv.id)
    mel = [e for e in events if e.kind == "merged" and e.data.get("alias") == "Mel"]
    assert bool(mel) is merged
    if merged:
        assert mel[0].data["similarity"] == pytest.approx(0.6)
        assert "Mel" in sys_.memory.get(mel[0].item_ids[0]).metadata["aliases"]


# ------------------------------------------------------------------- dedup
def test_duplicate_triples_are_dropped(tmp_path) -> None:
    conv = conv_of([(1, "8 May, 2023", "Ana", "I adopted a puppy named Biscuit."),
                    (1, "8 May, 2023", "Ben", "Nice!"),
                    (1, "8 May, 2023", "Ana", "I adopted a puppy named Biscuit.")])
    wb = bench(tmp_path)
    wb.ingest("memweaver", conv)
    sys_ = wb.system("memweaver", conv)
    rels = sys_.memory.of_kind("relation")
    keys = [(r.metadata["src_id"], r.metadata["rel"], r.metadata["tgt_id"], r.metadata["time"]) for r in rels]
    assert len(keys) == len(set(keys)) and rels
    dups = [e for e in wb.store.events(sys_.space, conv.id) if e.data.get("decision") == "deduplicated"]
    assert len(dups) == len(rels)  # every triple of the third turn was a duplicate
    assert all(e.turn_id == "D1:3" for e in dups)
    assert all("D1:3" in r.metadata["also_turns"] for r in rels)


# ------------------------------------------------------------------ review
def test_review_deny_removes_a_relation(tmp_path) -> None:
    def deny_first(role, inputs, messages):
        rid = inputs["relations"][0]["id"]
        return {"add": [], "update": [], "deny": [{"relation_id": rid, "reason": "not in the dialogue"}]}

    fake = FakeLLM(by_role={"mw_review": deny_first}, fallback="offline")  # the rest of construction: offline
    conv = conv_of([(1, "8 May, 2023", "Ana", "I adopted a puppy named Biscuit."),
                    (1, "8 May, 2023", "Ben", "I started a pottery class at the community center.")])
    wb = bench(tmp_path, provider=fake)
    wb.ingest("memweaver", conv)
    sys_ = wb.system("memweaver", conv)
    [call] = fake.calls("mw_review")
    denied = call.inputs["relations"][0]["id"]
    assert denied not in sys_.memory
    assert denied not in {r.id for r in wb.store.items(sys_.space, conv.id, "relation")}
    assert not any(k == denied for *_, k in sys_.graph.g.edges(keys=True))
    ev = [e for e in wb.store.events(sys_.space, conv.id) if e.kind == "deleted" and denied in e.item_ids]
    assert ev and "denied by session review" in ev[0].reason and "not in the dialogue" in ev[0].reason
    assert len(call.inputs["relations"]) - 1 == len(sys_.memory.of_kind("relation"))


def test_review_update_and_add(tmp_path) -> None:
    def review(role, inputs, messages):
        rid = inputs["relations"][0]["id"]
        return {"add": [{"source": "Ana", "relation": "owns", "target": "Biscuit"}],
                "update": [{"relation_id": rid, "time": "May, 2023", "reason": "session month"}], "deny": []}

    conv = conv_of([(1, "8 May, 2023", "Ana", "I adopted a puppy named Biscuit.")])
    wb = bench(tmp_path, provider=FakeLLM(by_role={"mw_review": review}, fallback="offline"))
    wb.ingest("memweaver", conv)
    sys_ = wb.system("memweaver", conv)
    rels = {r.text: r for r in sys_.memory.of_kind("relation")}
    assert "Ana owns Biscuit" in rels
    assert any(r.metadata["time"] == "May, 2023" for r in rels.values())


def test_offline_review_denies_near_duplicates() -> None:
    from memcore.systems.memweaver.offline import offline_review

    out = offline_review({"dialogue": ["D1:1 | Ana: I love my dog Rex.", "D1:2 | Ana: I really love Rex."],
                          "relations": [
                              {"id": "r1", "source": "Ana", "relation": "loves", "target": "Rex", "turn": "D1:1"},
                              {"id": "r2", "source": "Ana", "relation": "love", "target": "Rex",
                               "turn": "D1:2", "time": "May, 2023"},
                              {"id": "r3", "source": "Ana", "relation": "owns", "target": "castle tower", "turn": "D1:1"}]})
    assert {d["relation_id"] for d in out["deny"]} == {"r2", "r3"}
    assert out["update"] == [{"relation_id": "r1", "time": "May, 2023",
                              "reason": "offline: time taken from denied duplicate r2"}]


# ----------------------------------------------------------------- rebuild
def test_graph_is_rebuilt_from_stored_items(tmp_path, tiny_conv) -> None:
    wb = bench(tmp_path)
    wb.ingest("memweaver", tiny_conv)
    restored = wb.system("memweaver", tiny_conv)
    counts = restored.graph.counts()
    assert counts["nodes:entity"] == len(restored.memory.of_kind("entity"))
    assert counts["edges:relation"] == len(restored.memory.of_kind("relation"))
    assert counts["nodes:passage"] == len(tiny_conv.turns)
    for r in restored.memory.of_kind("relation"):
        row = wb.store.items(restored.space, tiny_conv.id, "relation")
        assert any(x.id == r.id and x.text == f"{r.metadata['src']} {r.metadata['rel']} {r.metadata['tgt']}"
                   for x in row)
        break


def test_alias_index_order_survives_a_restore(tmp_path) -> None:
    """`entities_named` lists entities in alias-index order (an experience's `about`), and the live run
    indexes a later alias of an old entity after newer entities' names, which the stored entities do not
    tell: the checkpoint keeps the order, so a restored system names entities as the live one did."""
    from memcore.datasets import load_demo
    from memcore.ingest import ingest_conversation
    from memcore.systems import get_system, make_config

    conv = load_demo()
    wb = bench(tmp_path)
    live = get_system("memweaver")(wb.runtime, conv, make_config("memweaver"))
    ingest_conversation(live, wb.store, wb.ledger)
    restored = wb.system("memweaver", conv)
    plain = GraphMemory()
    plain.rebuild(restored.memory.items.values())
    assert list(plain.aliases) != list(live.graph.aliases)  # the stored items alone lose the order
    assert list(restored.graph.aliases) == list(live.graph.aliases)
    assert restored.graph._alias_list == live.graph._alias_list
    text = " ".join(list(live.graph.aliases)[::-1])
    assert restored.entities_named(text) == live.entities_named(text)


def test_order_aliases_keeps_unknown_aliases_after_the_saved_ones() -> None:
    g = GraphMemory()
    g.add_entity("e1", "Ana", ["Annie"])
    g.add_entity("e2", "Bob")
    g.order_aliases(["bob", "gone", "annie"])
    assert list(g.aliases) == g._alias_list == ["bob", "annie", "ana"]
    assert g.aliases == {"bob": "e2", "annie": "e1", "ana": "e1"}
    assert g.resolve("Annie", 0.8).entity_id == "e1"
