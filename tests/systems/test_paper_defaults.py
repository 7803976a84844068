"""The contested defaults checked against the specification's text, not against docs/fidelity.md.

- MemCoT, papers/README.md: "Answer when the judge can answer or at step J-1; if the loop ends without an
  answer, fall back to answering from the full conversation." (the paper's text has no end-of-loop path)
- RecMem, Sec. 3.4 after Eq. 9: "Each extracted fact f in M_sem is stored as an independent entry";
  papers/README.md: "new facts only".
"""

from __future__ import annotations

from memcore.embed import HashingEmbedder
from memcore.llm.fake import FakeLLM
from memcore.settings import Settings
from memcore.workbench import Workbench
from tests.systems.test_memcot import ZI, ZO, judge
from tests.systems.test_recmem import episode_reply, feed, make, pair, topic_conv


def _memcot(tmp_path, tiny_conv, zoom_in: dict, answers: list[str]):
    judges = [judge(action="Break", new=[f"query {i}"]) for i in range(1, 9)]  # never "can answer"
    fake = FakeLLM(by_role={"memcot_zoom_in": zoom_in, "memcot_zoom_out": ZO, "memcot_judge": judges,
                            "answer_locomo_standard": answers})
    wb = Workbench(Settings(store_uri=str(tmp_path / "s"), llm_provider="fake", embedder="hashing"),
                   embedder=HashingEmbedder(), provider=fake)
    wb.ingest("memcot", tiny_conv)
    return fake, wb.system("memcot", tiny_conv, J=3).answer(tiny_conv.questions[0])  # the default fallback


def test_memcot_loop_without_an_answer_reads_the_full_conversation(tmp_path, tiny_conv) -> None:
    # the loop runs to step J-1 and the responder finds no answer in the short-term memory: the spec's
    # "ends without an answer" -> the responder answers again from the whole conversation
    fake, ans = _memcot(tmp_path, tiny_conv, ZI, ["No information available", "golden retriever"])
    assert ans.trace.structure["stop_reason"] == "reached step J-1 = 2"
    assert ans.text == "golden retriever" and ans.trace.structure["answered_from"] == "full conversation"
    calls = fake.calls("answer_locomo_standard")
    assert len(calls[0].inputs["passages"]) == 2 and len(calls[1].inputs["passages"]) == len(tiny_conv.turns)


def test_memcot_loop_with_an_answer_keeps_the_short_term_memory(tmp_path, tiny_conv) -> None:
    fake, ans = _memcot(tmp_path, tiny_conv, ZI, ["golden retriever"])
    assert ans.trace.structure["fallback"] is False and ans.trace.context_turn_ids() == ["D1:2", "D1:3"]
    assert len(fake.calls("answer_locomo_standard")) == 1


def test_recmem_new_facts_are_new_entries(tmp_path) -> None:
    def refine(role: str, inputs: dict, messages: list) -> dict:
        if not inputs["known_facts"]:
            return {"facts": [{"text": "Ana walks the puppy once a day.", "type": "USER_EVENT"}]}
        change = {"text": "Since 2 May 2023 Ana walks the puppy twice a day.", "type": "TIME_ANCHORED_UPDATE",
                  "turn_ids": ["D2:1"]}
        return {"facts": [change], "updates": [{"fact": 1, **change}]}  # a reply offering both forms

    merged = {"merge": True, "reason": "same walks", "title": "puppy walks", "content": "Ana walks the puppy."}
    fake = FakeLLM(by_role={"recmem_episodes": episode_reply(), "recmem_refine": refine, "recmem_merge": [merged]})
    system = make(tmp_path, topic_conv([pair("puppy", 1) + pair("puppy", 2), pair("puppy", 3)]), fake, theta_count=2)
    events = feed(system)
    texts = sorted(f.text for f in system.memory.of_kind("semantic"))
    assert texts == ["Ana walks the puppy once a day.", "Since 2 May 2023 Ana walks the puppy twice a day."]
    assert not [e for e in events if e.kind == "updated" and e.item_kind == "semantic"]  # nothing rewritten
