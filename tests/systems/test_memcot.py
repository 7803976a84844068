"""MemCoT: the zoom-in / zoom-out / judge loop driven by a scripted FakeLLM, and the offline roles."""

from __future__ import annotations

from typing import Any

import pytest

from memcore.embed import HashingEmbedder
from memcore.errors import LLMCallFailed
from memcore.llm.fake import FakeLLM
from memcore.settings import Settings
from memcore.systems.memcot.offline import stem_set
from memcore.systems.memcot.roles import JUDGE, ZOOM_IN, ZOOM_OUT
from memcore.text.terms import stem
from memcore.workbench import Workbench

ZI = {"useful_ids": ["D1:3"], "missing_information": "the breed"}
ZO = {"useful_ids": ["D1:2", "D1:3"]}


def judge(can: bool = False, action: str = "", new: list[str] | None = None, useful: list[str] | None = None) -> dict:
    return {"thinking": "t", "useful_id": useful or [], "can_answer": can, "action": action,
            "new_queries": new or []}


def run(tmp_path, tiny_conv, judges: list[Any], zoom_in: Any = None, q: int = 0, unusable: str = "fail",
        **config: Any):
    """Ingest the tiny conversation and retrieve with scripted judges (zoom roles fixed unless given)."""
    fake = FakeLLM(by_role={"memcot_zoom_in": zoom_in if zoom_in is not None else ZI, "memcot_zoom_out": ZO,
                            "memcot_judge": judges, "answer_locomo_standard": "golden retriever"})
    wb = Workbench(Settings(store_uri=str(tmp_path / "s"), llm_provider="fake", embedder="hashing",
                            llm_unusable=unusable), embedder=HashingEmbedder(), provider=fake)
    wb.ingest("memcot", tiny_conv)
    system = wb.system("memcot", tiny_conv, **config)
    return fake, system, system.retrieve(tiny_conv.questions[q])


def test_break_decomposes_into_new_queries(tmp_path, tiny_conv) -> None:
    fake, _, tr = run(tmp_path, tiny_conv, [judge(action="Break", new=["Biscuit breed", "golden retriever"]),
                                            judge(can=True, useful=["D1:3"])])
    it = tr.structure["iterations"]
    assert it[0]["action"] == "Break" and it[1]["queries"] == ["Biscuit breed", "golden retriever"]
    assert fake.calls("memcot_zoom_in")[1].inputs["queries"] == ["Biscuit breed", "golden retriever"]
    assert fake.calls("memcot_judge")[1].inputs["failed"] == ["What breed is Biscuit?"]
    assert tr.structure["stop_reason"] == "judge can answer at step 2" and tr.structure["steps"] == 2
    assert tr.context_turn_ids() == ["D1:2", "D1:3"]  # short-term memory, conversation order
    assert {c.stage for c in tr.candidates} == {"zoom_in", "zoom_out", "judge"}


def test_delete_prunes_to_the_missing_part(tmp_path, tiny_conv) -> None:
    fake, _, tr = run(tmp_path, tiny_conv, [judge(action="Delete", new=["pottery class"]), judge(can=True)], q=1)
    assert tr.structure["iterations"][0]["action"] == "Delete"
    assert fake.calls("memcot_zoom_in")[1].inputs["queries"] == ["pottery class"]


def test_failed_queries_are_never_reissued(tmp_path, tiny_conv) -> None:
    q0 = tiny_conv.questions[0].text
    fake, _, tr = run(tmp_path, tiny_conv, [
        judge(action="Break", new=[q0.upper(), "Biscuit breed"]),  # the failed root query, differently cased
        judge(action="Delete", new=["Biscuit breed", "biscuit  BREED"]),  # only repeats of failed queries
    ], judge_retries=0)
    queries = [c.inputs["queries"] for c in fake.calls("memcot_zoom_in")]
    assert queries == [[q0], ["Biscuit breed"]]
    assert tr.structure["stop_reason"].startswith("no new query at step 2")
    # no new query is not a reason for the full conversation: the responder reads the short-term memory
    assert tr.structure["fallback"] is False and tr.context_turn_ids() == ["D1:2", "D1:3"]


def test_judge_is_asked_again_when_it_only_repeats_issued_queries(tmp_path, tiny_conv) -> None:
    q0 = tiny_conv.questions[0].text
    fake, _, tr = run(tmp_path, tiny_conv, [
        judge(action="Break", new=[q0]),  # only the issued root query: asked again
        judge(action="Break", new=["Biscuit breed"]),
        judge(can=True),
    ])
    calls = fake.calls("memcot_judge")
    assert len(calls) == 3 and calls[0].inputs["retry_note"] == ""
    assert q0 in calls[1].inputs["failed"] and "already searched" in calls[1].inputs["retry_note"]
    assert tr.structure["iterations"][0]["judge"]["retries"] == 1
    assert [c.inputs["queries"] for c in fake.calls("memcot_zoom_in")] == [[q0], ["Biscuit breed"]]
    assert tr.structure["steps"] == 2 and tr.structure["fallback"] is False


def test_failed_list_is_capped_and_fed_back(tmp_path, tiny_conv) -> None:
    judges = [judge(action="Break", new=[f"query {i}"]) for i in range(1, 8)]
    fake, _, tr = run(tmp_path, tiny_conv, judges, J=8)
    fed = [c.inputs["failed"] for c in fake.calls("memcot_judge")]
    assert fed[0] == [] and fed[4] == ["query 1", "query 2", "query 3"]
    assert max(len(f) for f in fed) == 3


def test_stops_at_step_j_minus_1_and_answers_from_memory(tmp_path, tiny_conv) -> None:
    judges = [judge(action="Break", new=[f"query {i}"]) for i in range(1, 9)]
    fake, _, tr = run(tmp_path, tiny_conv, judges, J=4)
    assert tr.structure["steps"] == 3 and tr.structure["stop_reason"] == "reached step J-1 = 3"
    assert tr.structure["answered_from"] == "short-term memory"
    assert len(fake.calls("memcot_judge")) == 3 and tr.context_turn_ids() == ["D1:2", "D1:3"]
    assert not any("full conversation" in n for n in tr.notes)


def test_falls_back_to_full_conversation_only_when_the_loop_ends_with_nothing(tmp_path, tiny_conv) -> None:
    nothing = {"useful_ids": [], "missing_information": "everything"}
    _, _, tr = run(tmp_path, tiny_conv, [judge()] * 3, zoom_in=nothing)  # nothing picked, no new query
    assert tr.structure["answered_from"] == "full conversation" and tr.structure["fallback"] is True
    assert tr.context_turn_ids() == [t.turn_id for t in tiny_conv.turns]
    assert any("full conversation" in n for n in tr.notes)
    _, _, kept = run(tmp_path, tiny_conv, [judge()] * 3)  # the same loop end with picked turns: no fallback
    assert kept.structure["fallback"] is False and kept.context_turn_ids() == ["D1:2", "D1:3"]


def test_fallback_never_keeps_the_empty_short_term_memory(tmp_path, tiny_conv) -> None:
    nothing = {"useful_ids": [], "missing_information": "everything"}
    _, _, tr = run(tmp_path, tiny_conv, [judge()] * 3, zoom_in=nothing, fallback="never")
    assert tr.structure["fallback"] is False and tr.structure["fallback_mode"] == "never"
    assert tr.items == [] and any("reads nothing" in n for n in tr.notes)


def test_fallback_abstain_rereads_the_full_conversation(tmp_path, tiny_conv) -> None:
    fake = FakeLLM(by_role={"memcot_zoom_in": ZI, "memcot_zoom_out": ZO, "memcot_judge": [judge(can=True)],
                            "answer_locomo_standard": ["No information available", "golden retriever"]})
    wb = Workbench(Settings(store_uri=str(tmp_path / "s"), llm_provider="fake", embedder="hashing"),
                   embedder=HashingEmbedder(), provider=fake)
    wb.ingest("memcot", tiny_conv)
    q = tiny_conv.questions[0]
    ans = wb.system("memcot", tiny_conv, fallback="abstain").answer(q)
    assert ans.text == "golden retriever" and ans.trace.structure["fallback"] is True
    calls = fake.calls("answer_locomo_standard")
    assert len(calls) == 2 and len(calls[0].inputs["passages"]) == 2  # the short-term memory first
    assert len(calls[1].inputs["passages"]) == len(tiny_conv.turns)  # then the whole conversation
    assert ans.trace.context_turn_ids() == [t.turn_id for t in tiny_conv.turns]


def test_sampling_follows_the_paper_and_is_named(tmp_path, tiny_conv) -> None:
    fake, system, _ = run(tmp_path, tiny_conv, [judge(can=True)] * 2)
    sent = {c.role: c.options for c in fake.history}
    assert sent["memcot_zoom_in"]["temperature"] == 1.0 and sent["memcot_zoom_out"]["temperature"] == 1.0
    assert sent["memcot_judge"]["temperature"] == 0.0 and sent["memcot_judge"]["seed"] == 0
    ans = system.answer(tiny_conv.questions[0])
    assert ans.trace.reader["role"] == "answer_locomo_standard" and ans.trace.reader["temperature"] == 1.0
    assert fake.calls("answer_locomo_standard")[-1].options["temperature"] == 1.0
    _, code, _ = run(tmp_path, tiny_conv, [judge(can=True)] * 2, temperature_responder=0.0, seed=7)
    assert code.reader(tiny_conv.questions[0]).temperature == 0.0 and code.reader(tiny_conv.questions[0]).seed == 7


def test_unusable_role_output_fails_the_question(tmp_path, tiny_conv) -> None:
    with pytest.raises(LLMCallFailed, match="memcot_zoom_in"):
        run(tmp_path, tiny_conv, [judge(can=True)], zoom_in=["not json", "still not json"])


def test_unusable_role_output_falls_back_visibly_when_named(tmp_path, tiny_conv) -> None:
    _, _, tr = run(tmp_path, tiny_conv, [judge(can=True)], zoom_in=["not json", "still not json"],
                   unusable="fallback")
    assert any("memcot_zoom_in" in e for e in tr.errors)
    assert any("zoom-in role unusable" in n for n in tr.notes)
    hits = tr.structure["iterations"][0]["zoom_in_hits"]
    assert tr.structure["iterations"][0]["useful"] == hits  # every hit treated as useful


def test_positions_are_accepted_as_ids(tmp_path, tiny_conv) -> None:
    _, _, tr = run(tmp_path, tiny_conv, [judge(can=True)], zoom_in={"useful_ids": [1, "2"]})
    it = tr.structure["iterations"][0]
    assert it["useful"] == it["zoom_in_hits"][:2]


def test_answer_usage_by_stage(tmp_path, tiny_conv) -> None:
    fake, system, _ = run(tmp_path, tiny_conv, [judge(action="Break", new=["x y"]), judge(can=True)] * 2)
    ans = system.answer(tiny_conv.questions[0])
    assert ans.usage["retrieval"].calls == 6 and ans.usage["answer"].calls == 1
    assert ans.text


def test_zoom_out_windows_stay_in_the_session(tmp_path, tiny_conv) -> None:
    _, system, _ = run(tmp_path, tiny_conv, [judge(can=True)])
    assert system._windows(["D1:6"]) == [["D1:2", "D1:3", "D1:4", "D1:5", "D1:6"]]
    assert system._windows(["D1:1", "D2:1"]) == [["D1:1", "D1:2", "D1:3", "D1:4", "D1:5"],
                                                 ["D2:1", "D2:2", "D2:3", "D2:4"]]


# ------------------------------------------------------------------ offline roles
ITEMS = [{"id": "D1:1", "date": "8 May, 2023", "speaker": "Ana", "text": "I adopted a puppy named Biscuit!"},
         {"id": "D1:2", "date": "8 May, 2023", "speaker": "Ben", "text": "What breed is Biscuit?"},
         {"id": "D1:3", "date": "8 May, 2023", "speaker": "Ana", "text": "A golden retriever, very playful."},
         {"id": "D1:4", "date": "8 May, 2023", "speaker": "Ben", "text": "I started a pottery class."}]


def test_offline_zoom_in_keeps_overlapping_results() -> None:
    out = ZOOM_IN.offline({"query": "What breed is Biscuit?", "queries": [], "speakers": ["Ana", "Ben"],
                           "items": ITEMS})
    assert out.useful_ids == ["D1:1", "D1:2"]


def test_stem_set_uses_the_shared_stemmer_and_drops_names_and_framing() -> None:
    got = stem_set("What kind of pots has Ana's friend made? She painted them.", frozenset({"ana"}))
    assert got == {stem("pots"), stem("friend"), stem("made"), stem("painted")} == {"pot", "friend", "make", "paint"}
    assert stem_set("They went swimming") == {"go", "swim"}  # irregular past tense maps to its base


def test_offline_zoom_in_matches_inflected_and_irregular_forms() -> None:
    items = [{"id": "D2:1", "date": "9 May, 2023", "speaker": "Ana", "text": "We went to the lake and swam."},
             {"id": "D2:2", "date": "9 May, 2023", "speaker": "Ben", "text": "My cat sleeps all day."}]
    out = ZOOM_IN.offline({"query": "Where does Ana go swimming?", "queries": [], "speakers": ["Ana", "Ben"],
                           "items": items})
    assert out.useful_ids == ["D2:1"]


def test_offline_zoom_out_adds_the_reply_to_a_matching_question() -> None:
    items = [{**i, "window": 0} for i in ITEMS]
    out = ZOOM_OUT.offline({"query": "What breed is Biscuit?", "queries": [], "speakers": ["Ana", "Ben"],
                            "items": items})
    assert out.useful_ids == ["D1:1", "D1:2", "D1:3"]


def test_offline_judge_breaks_on_and() -> None:
    out = JUDGE.offline({"query": "What did Ben start and what did Ana adopt?", "queries": [],
                         "speakers": ["Ana", "Ben"], "stm_items": [], "conv_items": [], "failed": []})
    assert not out.can_answer and out.action == "Break"
    assert out.new_queries == ["What did Ben start", "what did Ana adopt"]


def test_offline_judge_deletes_matched_terms_and_answers_when_covered() -> None:
    base = {"speakers": ["Ana", "Ben"], "conv_items": [], "failed": [], "queries": []}
    part = JUDGE.offline({**base, "query": "Which puppy did Ana adopt from the Lisbon animal shelter?",
                          "stm_items": ITEMS[:1]})
    assert not part.can_answer and part.action == "Delete" and part.new_queries == ["Ana lisbon animal shelter"]
    full = JUDGE.offline({**base, "query": "Which puppy did Ana adopt?", "stm_items": ITEMS[:1]})
    assert full.can_answer and full.useful_id == ["D1:1"]


@pytest.mark.parametrize("question,evidence,expected", [
    ("How many puppies did Ana adopt?", "Ana adopted a puppy.", False),
    ("How many puppies did Ana adopt?", "Ana adopted 2 puppies.", True),
])
def test_offline_judge_needs_the_answer_type(question: str, evidence: str, expected: bool) -> None:
    out = JUDGE.offline({"query": question, "speakers": ["Ana"], "conv_items": [], "failed": [], "queries": [],
                         "stm_items": [{"id": "D1:1", "date": "", "speaker": "Ana", "text": evidence}]})
    assert out.can_answer is expected
