"""RecMem: recurrence trigger, merge-first, consolidation, provenance, resume, retrieval."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from memcore.ingest import ingest_conversation
from memcore.ingest.context import IngestContext
from memcore.llm.fake import FakeLLM
from memcore.settings import Settings
from memcore.systems.recmem import RecMemConfig, RecMemSystem
from memcore.systems.recmem.config import Thresholds
from memcore.systems.recmem.offline import offline_merge
from memcore.types import Conversation, Question, Turn
from memcore.workbench import Workbench

TOPICS = ("puppy", "pottery", "marathon", "guitar")


class TopicEmbedder:
    """One axis per topic word present in the text (the last axis for texts without one)."""

    name = "topic-test"
    dim = len(TOPICS) + 1

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            hit = [j for j, w in enumerate(TOPICS) if w in t.lower()]
            for j in hit or [self.dim - 1]:
                out[i, j] = 1.0
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def topic_conv(sessions: list[list[str]], conv_id: str = "topics") -> Conversation:
    """Sessions of messages alternating Ana / Ben; each session on its own day in May 2023."""
    turns = []
    for s, msgs in enumerate(sessions, start=1):
        for j, text in enumerate(msgs, start=1):
            turns.append(Turn(conv_id, f"D{s}:{j}", len(turns), s, f"{s} May, 2023", f"2023-05-{s:02d}T10:00:00",
                              "Ana" if j % 2 else "Ben", text))
    qs = [Question(f"{conv_id}:q0", conv_id, "What is the puppy called?", "Biscuit", ["D1:1"], 4)]
    return Conversation(conv_id, ["Ana", "Ben"], turns, qs, source="test")


def pair(topic: str, n: int) -> list[str]:
    return [f"I took my {topic} out today, round {n}.", f"Your {topic} sounds great, round {n}!"]


def make(tmp_path, conv: Conversation, fake: FakeLLM | None = None, sub: str = "s",
         **cfg: object) -> RecMemSystem:
    settings = Settings(store_uri=str(tmp_path / sub), llm_provider="fake" if fake else "offline")
    wb = Workbench(settings, embedder=TopicEmbedder(), provider=fake)
    return RecMemSystem(wb.runtime, conv, RecMemConfig(**cfg))


def episode_reply(content: str = "Ana walks the puppy every day."):
    """A scripted recmem_episodes reply covering all messages it was given."""
    def reply(role: str, inputs: dict, messages: list) -> dict:
        tids = [m["turn_id"] for m in inputs["messages"]]
        return {"episodes": [{"title": "puppy walks", "content": content, "timestamp": "1 May 2023",
                              "turn_ids": tids}]}
    return reply


def facts_reply(role: str, inputs: dict, messages: list) -> dict:
    return {"facts": [{"text": "Ana has a puppy.", "type": "ENTITY_RELATION", "turn_ids": [inputs["turn_ids"][0]]},
                      {"text": "Ana walks the puppy daily.", "type": "user_event", "turn_ids": ["D99:1"]}]}


def feed(system: RecMemSystem, start: int = 0, stop: int | None = None) -> list:
    events, ctx = [], IngestContext(system.conv, system.llm.ledger)
    for t in system.conv.turns[start:stop]:
        events += system.ingest(t, ctx.turn(t))
    if stop is None:
        events += system.finish(ctx.end())
    return events


def test_preset_follows_the_source_and_explicit_values_win():
    auto = RecMemConfig()
    assert auto.preset == "auto" and auto.thresholds("locomo") == Thresholds("locomo", 0.7, 5, 0.7, False)
    assert auto.thresholds("longmemeval") == Thresholds("longmemeval", 0.6, 4, 0.6, False)
    assert auto.thresholds("jsonl").preset == "locomo"  # casual chats: the LoCoMo preset
    assert RecMemConfig(preset="longmemeval").thresholds("locomo").theta_sim == 0.6  # a named preset wins
    assert RecMemConfig(theta_count=7).thresholds("longmemeval").theta_count == 7
    with pytest.raises(ValueError, match="preset"):
        RecMemConfig(preset="nope").validate()
    with pytest.raises(ValueError, match="fact_maintenance"):
        RecMemConfig(fact_maintenance="nope").validate()


def test_one_theta_sim_gates_merge_and_recurrence_unless_split():
    swept = RecMemConfig(theta_sim=0.5).thresholds("locomo")
    assert (swept.theta_sim, swept.merge_gate, swept.split) == (0.5, 0.5, False)  # Eq. 6 uses theta_sim
    split = RecMemConfig(theta_sim=0.5, theta_merge=0.8).thresholds("locomo")
    assert (split.theta_sim, split.merge_gate, split.split) == (0.5, 0.8, True)


def test_system_uses_the_preset_of_its_conversation(tmp_path):
    conv = topic_conv([pair("puppy", 1)])
    conv.source = "longmemeval"
    system = make(tmp_path, conv)
    assert system.th.preset == "longmemeval" and system.th.theta_count == 4
    events = feed(system)
    assert events[-1].data["theta_sim"] == 0.6 and events[-1].data["preset"] == "longmemeval"


def test_units_pair_messages_by_position_and_leftover_stands_alone(tmp_path):
    conv = topic_conv([pair("puppy", 1) + ["odd puppy message"], pair("guitar", 1)])
    system = make(tmp_path, conv, theta_count=99)
    feed(system, 0, 1)
    assert system.buffer and not system.memory.of_kind("unit")  # first message waits for its pair
    feed(system, 1)
    units = system.memory.of_kind("unit")
    assert [u.turn_ids for u in units] == [["D1:1", "D1:2"], ["D1:3"], ["D2:1", "D2:2"]]
    assert units[0].text.startswith("Ana: I took my puppy") and "\nBen: Your puppy" in units[0].text
    assert units[0].metadata["layer"] == "subconscious" and units[0].timestamp.startswith("2023-05-01")


def test_fires_at_exactly_theta_count_similar_units(tmp_path):
    fake = FakeLLM(by_role={"recmem_episodes": episode_reply(), "recmem_refine": facts_reply})
    conv = topic_conv([pair("puppy", 1) + pair("pottery", 1) + pair("puppy", 2) + pair("guitar", 1)
                       + pair("puppy", 3) + pair("pottery", 2)])
    system = make(tmp_path, conv, fake, theta_count=3, theta_sim=0.7)
    feed(system, 0, 8)  # two puppy units so far
    assert not system.memory.of_kind("episode") and not fake.calls()
    assert len([u for u in system.memory.of_kind("unit") if "puppy" in u.text]) == 2
    assert not system.memory.of_kind("episode")
    events = feed(system, 8, 10)  # the third puppy unit arrives
    episodes = system.memory.of_kind("episode")
    assert len(episodes) == 1 and len(fake.calls("recmem_episodes")) == 1
    created = [e for e in events if e.kind == "created" and e.item_kind == "episode"][0]
    assert created.data["count"] == 3 and len(created.data["neighbours"]) == 2
    assert all(s >= 0.7 for s in created.data["similarities"])
    # the cluster went to the LLM in time order
    assert [m["turn_id"] for m in fake.calls("recmem_episodes")[0].inputs["messages"]] == \
        ["D1:1", "D1:2", "D1:5", "D1:6", "D1:9", "D1:10"]


def test_consolidated_units_leave_subconscious_with_provenance(tmp_path):
    fake = FakeLLM(by_role={"recmem_episodes": episode_reply(), "recmem_refine": facts_reply})
    conv = topic_conv([pair("puppy", 1) + pair("pottery", 1) + pair("puppy", 2) + pair("puppy", 3)])
    system = make(tmp_path, conv, fake, theta_count=3)
    events = feed(system)
    units = system.memory.of_kind("unit")
    assert [u.turn_ids for u in units] == [["D1:3", "D1:4"]]  # only pottery is left
    ep = system.memory.of_kind("episode")[0]
    assert ep.sources == ["unit-1", "unit-3", "D1:7", "D1:8"]
    assert ep.turn_ids == ["D1:1", "D1:2", "D1:5", "D1:6", "D1:7", "D1:8"]
    promoted = [e for e in events if e.kind == "promoted"][0]
    deleted = [e for e in events if e.kind == "deleted"][0]
    assert promoted.item_ids == deleted.item_ids == ["unit-1", "unit-3"] and promoted.data["to"] == [ep.id]
    facts = system.memory.of_kind("semantic")
    assert [f.text for f in facts] == ["Ana has a puppy.", "Ana walks the puppy daily."]
    assert all(f.sources == [ep.id] for f in facts)
    assert facts[0].turn_ids == ["D1:1"] and facts[1].turn_ids == ep.turn_ids  # unknown turn id -> all
    assert [f.metadata["fact_type"] for f in facts] == ["ENTITY_RELATION", "USER_EVENT"]
    fact_events = [e for e in events if e.kind == "created" and e.item_kind == "semantic"]
    assert [e.data["type"] for e in fact_events] == ["ENTITY_RELATION", "USER_EVENT"]
    assert all(e.data["episode"] == ep.id for e in fact_events)


@pytest.mark.parametrize("decision", [True, False])
def test_merge_follows_the_llm_decision(tmp_path, decision):
    merged = {"merge": decision, "reason": "same walks", "title": "puppy walks",
              "content": "Ana walks the puppy every day; on 2 May she walked it twice." if decision else ""}
    fake = FakeLLM(by_role={"recmem_episodes": episode_reply(), "recmem_refine": facts_reply,
                            "recmem_merge": [merged]})
    conv = topic_conv([pair("puppy", 1) + pair("puppy", 2), pair("puppy", 3)])
    system = make(tmp_path, conv, fake, theta_count=2)
    feed(system, 0, 4)
    ep = system.memory.of_kind("episode")[0]
    n_facts = len(system.memory.of_kind("semantic"))
    events = feed(system, 4)
    call = fake.calls("recmem_merge")[0]
    assert call.inputs["content"] == "Ana walks the puppy every day." and call.inputs["similarity"] == 1.0
    if decision:
        assert ep.text == merged["content"] and ep.turn_ids[-2:] == ["D2:1", "D2:2"]
        assert not system.memory.of_kind("unit")  # the merged unit is not stored
        ev = [e for e in events if e.kind == "merged"][0]
        assert ev.item_ids == [ep.id] and ev.data["similarity"] == 1.0 and ev.data["decision"] is True
        assert ep.updated_step == 6
        refine = fake.calls("recmem_refine")[-1].inputs  # semantics refined from the merged exchange
        assert len(fake.calls("recmem_refine")) == 2 and refine["turn_ids"] == ["D2:1", "D2:2"]
        assert refine["episode"] == merged["content"] and refine["raw"].startswith("[D2:1] (2 May 2023) Ana:")
        assert set(refine["known_facts"]) == {"Ana has a puppy.", "Ana walks the puppy daily."}
        assert len(system.memory.of_kind("semantic")) == n_facts  # known facts are not stored twice
    else:
        assert ep.text == "Ana walks the puppy every day." and "D2:1" not in ep.turn_ids
        unit = system.memory.of_kind("unit")[0]
        assert unit.turn_ids == ["D2:1", "D2:2"]
        ev = [e for e in events if e.kind == "created" and e.item_kind == "unit"][0]
        assert ev.data["merge_check"]["merge"] is False and ev.data["merge_check"]["episode"] == ep.id
        assert not [e for e in events if e.kind == "merged"]


def test_no_merge_check_below_theta_merge(tmp_path):
    fake = FakeLLM(by_role={"recmem_episodes": episode_reply(), "recmem_refine": facts_reply})
    conv = topic_conv([pair("puppy", 1) + pair("puppy", 2) + pair("guitar", 1)])
    system = make(tmp_path, conv, fake, theta_count=2)
    feed(system)
    assert not fake.calls("recmem_merge")  # guitar is orthogonal to the puppy episode


def test_no_merge_call_without_an_episode_and_units_counted_by_outcome(tmp_path):
    merged = {"merge": True, "reason": "same walks", "title": "puppy walks", "content": "Ana walks the puppy."}
    fake = FakeLLM(by_role={"recmem_episodes": episode_reply(), "recmem_refine": facts_reply,
                            "recmem_merge": [merged]})
    conv = topic_conv([pair("puppy", 1) + pair("guitar", 1) + pair("puppy", 2), pair("puppy", 3)])
    system = make(tmp_path, conv, fake, theta_count=2)
    events = feed(system, 0, 4)  # two units, no episode yet: stored without asking the LLM anything
    assert not fake.calls() and [e.data["merge_check"] for e in events if e.item_kind == "unit"] == [None, None]
    assert system.exchanges == {"units": 2, "merged": 0, "stored": 2, "consolidations": 0, "consolidated": 0}
    feed(system, 4)  # puppy 2 consolidates with puppy 1; puppy 3 merges into that episode
    assert [c.role for c in fake.calls()] == ["recmem_episodes", "recmem_refine", "recmem_merge",
                                              "recmem_refine"]
    assert system.exchanges == {"units": 4, "merged": 1, "stored": 2, "consolidations": 1, "consolidated": 2}
    assert system.retrieve(conv.questions[0]).structure["exchanges"] == system.exchanges


def snapshot(system: RecMemSystem) -> dict:
    store, space, cid = system.store, system.space, system.conv.id
    items = {k: sorted((i.id, i.text, tuple(i.sources), tuple(i.turn_ids)) for i in store.items(space, cid, k))
             for k in system.kinds}
    events = [(e.step, e.kind, tuple(e.item_ids), e.item_kind) for e in store.events(space, cid)]
    return {"items": items, "events": events}


def test_resume_after_partial_ingest_gives_the_same_memory(tmp_path):
    conv = topic_conv([
        pair("puppy", 1) + pair("pottery", 1) + pair("puppy", 2) + ["I love my puppy Biscuit."],
        pair("puppy", 3) + pair("marathon", 1) + pair("puppy", 4) + pair("pottery", 2),
        pair("pottery", 3) + pair("puppy", 5) + pair("pottery", 4) + pair("marathon", 2),
    ])
    whole = make(tmp_path, conv, sub="a", theta_count=3)
    assert ingest_conversation(whole, whole.store, whole.llm.ledger).complete
    expected = snapshot(whole)
    assert expected["items"]["episode"] and expected["items"]["semantic"]
    part = make(tmp_path, conv, sub="b", theta_count=3)
    assert not ingest_conversation(part, part.store, part.llm.ledger, stop_after=3).complete  # a half pair buffered
    assert part.store.checkpoint(part.space, conv.id)["state"]["buffer"] == [2]
    part2 = make(tmp_path, conv, sub="b", theta_count=3)
    assert not ingest_conversation(part2, part2.store, part2.llm.ledger, stop_after=9).complete
    part3 = make(tmp_path, conv, sub="b", theta_count=3)
    assert ingest_conversation(part3, part3.store, part3.llm.ledger).complete
    assert snapshot(part3) == expected
    assert part3.exchanges == whole.exchanges and whole.exchanges["units"] == 12  # counters survive resume


def test_retrieval_reads_three_stores_with_budgets(tmp_path):
    conv = topic_conv([pair("puppy", 1) + pair("pottery", 1) + pair("puppy", 2) + pair("puppy", 3)
                       + pair("guitar", 1)])
    system = make(tmp_path, conv, theta_count=3, k_sub=1, k_epi=5, k_sem=2)
    ingest_conversation(system, system.store, system.llm.ledger)
    tr = system.retrieve(conv.questions[0])
    origins = [i.origin for i in tr.items]
    assert set(origins) == {"subconscious", "episodic", "semantic"}
    assert origins.count("subconscious") == 1 and origins.count("episodic") == 1
    assert origins.count("semantic") == min(2, tr.structure["stores"]["semantic"])
    assert tr.structure["stores"] == {"subconscious": 2, "episodic": 1,
                                      "semantic": len(system.store.items(system.space, conv.id, "semantic"))}
    assert tr.structure["budgets"] == {"k_sub": 1, "k_epi": 5, "k_sem": 2}
    assert tr.stages == ["subconscious", "episodic", "semantic"]
    sub = [c for c in tr.candidates if c.stage == "subconscious"]
    assert [c.kept for c in sub] == [True, False] and "budget" in sub[1].reason
    assert "D1:1" in tr.context_turn_ids() and "## Episodes" in tr.context


def test_offline_merge_needs_shared_salient_words():
    base = {"title": "Ana: puppy, biscuit", "content": "On 1 May 2023, Ana adopted a puppy named Biscuit.",
            "speakers": ["Ana", "Ben"]}
    yes = offline_merge({**base, "messages": [
        {"speaker": "Ana", "text": "Biscuit the puppy learned to sit yesterday.", "date": "3 May 2023",
         "turn_id": "D3:1"}]})
    assert yes["merge"] and "biscuit" in yes["reason"]
    assert yes["content"].startswith(base["content"]) and "(2 May 2023)" in yes["content"]
    no = offline_merge({**base, "messages": [
        {"speaker": "Ben", "text": "My pottery teacher praised my bowl.", "date": "3 May 2023", "turn_id": "D3:2"}]})
    assert not no["merge"] and no["content"] == base["content"]
    chat = offline_merge({**base, "messages": [{"speaker": "Ben", "text": "Wow, so cool! Thanks!", "date": "",
                                                "turn_id": "D3:3"}]})
    assert not chat["merge"] and "small talk" in chat["reason"]


def test_failed_calls_build_nothing_and_the_ingest_says_so(tmp_path):
    from memcore.ingest import ingest_conversation

    fake = FakeLLM(by_role={"recmem_refine": RuntimeError("model down")},
                   fallback="offline")  # episodes and merge checks: offline
    conv = topic_conv([pair("puppy", 1) + pair("puppy", 2), pair("puppy", 3)])
    system = make(tmp_path, conv, fake, theta_count=2)
    rep = ingest_conversation(system, system.store, system.llm.ledger)
    assert not rep.complete and "recmem_refine" in rep.error and "model down" in rep.error
    assert "Rerun to resume" in rep.message
    ck = system.store.checkpoint(system.space, conv.id)
    assert ck is None or not ck["done"]
    assert all(it.created_step <= (ck["step"] if ck else 0)
               for k in system.kinds for it in system.store.items(system.space, conv.id, k))


def test_unusable_replies_fall_back_only_when_named(tmp_path):
    fake = FakeLLM(by_role={"recmem_episodes": "no json here", "recmem_merge": "nope"},
                   fallback="offline")  # refine: offline
    conv = topic_conv([pair("puppy", 1) + pair("puppy", 2), pair("puppy", 3)])
    system = make(tmp_path, conv, fake, theta_count=2)
    system.llm.unusable = "fallback"
    events = feed(system)
    assert system.llm.degraded >= 2
    ep = system.memory.of_kind("episode")[0]  # the verbatim fallback keeps every turn
    assert ep.turn_ids == ["D1:1", "D1:2", "D1:3", "D1:4"] and "I took my puppy out today, round 1." in ep.text
    created = [e for e in events if e.kind == "created" and e.item_kind == "episode"][0]
    assert "recmem_episodes" in created.data["llm_error"]
    unit = [e for e in events if e.kind == "created" and e.item_kind == "unit"][-1]
    assert unit.item_ids == ["unit-2"] and unit.data["merge_check"]["error"]  # failed merge: unit kept
    assert system.memory.get("unit-2").turn_ids == ["D2:1", "D2:2"]


def test_fact_maintenance_rewrites_the_known_fact_an_update_names(tmp_path):
    def refine(role: str, inputs: dict, messages: list) -> dict:
        if not inputs["known_facts"]:
            return {"facts": [{"text": "Ana walks the puppy once a day.", "type": "USER_EVENT"}]}
        n = inputs["known_facts"].index("Ana walks the puppy once a day.") + 1
        return {"facts": [], "updates": [{"fact": n, "text": "Since 2 May 2023 Ana walks the puppy twice a day.",
                                          "type": "TIME_ANCHORED_UPDATE", "turn_ids": ["D2:1"]}]}

    merged = {"merge": True, "reason": "same walks", "title": "puppy walks", "content": "Ana walks the puppy."}
    fake = FakeLLM(by_role={"recmem_episodes": episode_reply(), "recmem_refine": refine, "recmem_merge": [merged]})
    conv = topic_conv([pair("puppy", 1) + pair("puppy", 2), pair("puppy", 3)])
    system = make(tmp_path, conv, fake, theta_count=2, fact_maintenance="update")  # the option, not the paper's
    events = feed(system)
    facts = system.memory.of_kind("semantic")
    assert [f.text for f in facts] == ["Since 2 May 2023 Ana walks the puppy twice a day."]  # updated, not added
    assert "D2:1" in facts[0].turn_ids and facts[0].metadata["fact_type"] == "TIME_ANCHORED_UPDATE"
    upd = [e for e in events if e.kind == "updated" and e.item_kind == "semantic"]
    assert len(upd) == 1 and upd[0].data["old_text"] == "Ana walks the puppy once a day."
    assert system.facts == {"added": 1, "updated": 1}
    assert "that known fact's number" in fake.calls("recmem_refine")[-1].inputs["maintenance"]


def test_fact_maintenance_append_keeps_known_facts(tmp_path):
    fake = FakeLLM(by_role={"recmem_episodes": episode_reply(), "recmem_refine": facts_reply,
                            "recmem_merge": [{"merge": True, "reason": "r", "title": "t", "content": "Ana walks."}]})
    conv = topic_conv([pair("puppy", 1) + pair("puppy", 2), pair("puppy", 3)])
    system = make(tmp_path, conv, fake, theta_count=2, fact_maintenance="append")
    events = feed(system)
    assert "TIME_ANCHORED_UPDATE" in fake.calls("recmem_refine")[0].inputs["maintenance"]
    assert not [e for e in events if e.kind == "updated" and e.item_kind == "semantic"]


def test_offline_refine_turns_a_restated_change_into_an_update():
    from memcore.systems.recmem.roles import RECMEM_REFINE, refine_inputs
    msgs = [{"turn_id": "D3:1", "date": "9 June 2023", "speaker": "Ana",
             "text": "I just switched jobs, I now work as a nurse at the city hospital."}]
    out = RECMEM_REFINE.offline(refine_inputs("Ana talks about work.", msgs, ["Ana", "Ben"],
                                              ["Ana works as a teacher at the city school."], "update"))
    assert out.updates and out.updates[0].fact == 1 and "nurse" in out.updates[0].text
    kept = RECMEM_REFINE.offline(refine_inputs("Ana talks about work.", msgs, ["Ana", "Ben"],
                                               ["Ana works as a teacher at the city school."], "append"))
    assert not kept.updates and any("nurse" in f.text for f in kept.facts)


def test_offline_refine_does_not_update_an_unrelated_fact_of_the_same_month():
    """A person and a month in common are not a topic: a new plan does not rewrite last week's picnic."""
    from memcore.systems.recmem.roles import RECMEM_REFINE, refine_inputs
    msgs = [{"turn_id": "D9:1", "date": "6 July 2023", "speaker": "Ana",
             "text": "I'm now going to a transgender conference this month, so excited!"}]
    known = ["Ana had a picnic last week (the week before 6 July 2023)."]
    out = RECMEM_REFINE.offline(refine_inputs("Ana talks about plans.", msgs, ["Ana", "Ben"], known, "update"))
    assert not out.updates and any("conference" in f.text for f in out.facts)
