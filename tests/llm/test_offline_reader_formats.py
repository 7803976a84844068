"""The offline reader is fair to every context format: a turn rendered "[date] Speaker: text" (MemWeaver's
passages, with no separate date field), a bulleted context "- [date] Speaker: text" under section headers, and
triples / experiences around them answer as the plain dated turn does (issue 27 item 7)."""

from __future__ import annotations

from typing import Any

from memcore.llm.offline.answer import ABSTAIN, offline_answer

DATE = "1:56 pm on 8 May, 2023"
TURN = "I went to a LGBTQ support group yesterday and it was so powerful."
TRIPLES = ["Caroline | went to | LGBTQ+ pride parade | time: 11 August, 2023",
           "Caroline | has | support group", "Caroline | went to | support group"]
EXPERIENCES = ["Caroline wants to help people who need support.", "Caroline loves going to pride events."]
SPEAKERS = ["Caroline", "Melanie"]
QUESTION = "When did Caroline go to the LGBTQ support group?"


def _item(text: str, date: str = "", speaker: str = "") -> dict[str, Any]:
    return {"text": text, "date": date, "score": 0.5, "speaker": speaker, "turn_ids": ["D1:3"]}


def _ask(passages: list[dict[str, Any]], context: str = "") -> str:
    return offline_answer({"question": QUESTION, "context": context, "question_date": "",
                           "passages": passages, "speakers": SPEAKERS}).text


def test_plain_dated_turn_is_answered() -> None:
    assert _ask([_item(f"Caroline: {TURN}", DATE, "Caroline")]) == "7 May 2023"


def test_turn_with_its_date_in_the_text_is_answered_like_the_plain_turn() -> None:
    memweaver = [_item(t) for t in TRIPLES] + [_item(f"[{DATE}] Caroline: {TURN}", "", "Caroline")] \
        + [_item(t) for t in EXPERIENCES]
    assert _ask(memweaver) == "7 May 2023"


def test_dated_memory_item_without_speaker_keeps_its_date() -> None:
    assert _ask([_item(f"[{DATE}] Caroline went to a LGBTQ support group yesterday.")] + [_item(t) for t in TRIPLES]) \
        == "7 May 2023"


def test_bulleted_context_with_section_headers_is_answered() -> None:
    context = "\n".join(["Knowledge graph (source | relation | target | time | condition):",
                         *(f"- {t}" for t in TRIPLES), "", "Passages:", f"- [{DATE}] Caroline: {TURN}", "",
                         "Experiences:", *(f"- (fact) {t}" for t in EXPERIENCES)])
    assert _ask([], context) == "7 May 2023"


def test_no_date_anywhere_still_abstains_on_a_date_question() -> None:
    assert _ask([_item(f"Caroline: {TURN}", "", "Caroline")]) == ABSTAIN
