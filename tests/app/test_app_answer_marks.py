"""Fallbacks and gold labels in plain sight on the Ask and Compare answer cards (issue 27 item 6): an answer
from a fallback path, or whose reader read the gold category, says so on its card in plain words."""

from __future__ import annotations

import pytest

from memcore.eval.fallbacks import FALLBACK_TEXT, GOLD_LABEL_TEXT, answer_marks
from memcore.types import Trace, TraceItem
from tests.app.test_app_ask_compare import FLAGSHIP, _ask, _click
from tests.app.test_app_pages import build, errors, home_with_demo

pytestmark = pytest.mark.usefixtures("app_env")  # temp store, hashing embedder, offline engine


def test_marks_name_each_fallback_and_the_gold_label() -> None:
    assert answer_marks(Trace("s", "?", items=[TraceItem("a", "turn", "x", 1.0, origin="chain 1")])) == []
    assert answer_marks(Trace("s", "?", structure={"fallback": True})) == [FALLBACK_TEXT["full_conversation"]]
    assert answer_marks(Trace("s", "?", reader={"category_source": "gold"})) == [GOLD_LABEL_TEXT]
    assert answer_marks(Trace("s", "?", reader={"category_source": "predicted"})) == []
    assert answer_marks(Trace("s", "?", reader={"category_source": "none"})) == []  # a family without categories


def _warnings(at) -> list[str]:
    return [w.value.replace("\\", "") for w in at.warning]  # the Markdown escapes removed


def _gold_labels(at) -> list[str]:
    """The gold-label marks: one click away (issue 37 minor 9), in an expander holding the whole text."""
    from ui.ask_view import GOLD_LABEL_HEAD

    return [c.value.replace("\\", "") for e in at.expander if e.label == GOLD_LABEL_HEAD for c in e.caption]


def test_ask_and_compare_cards_say_a_fallback_answered() -> None:
    # the flagship question: MemCoT's loop finds nothing and it answers from the whole conversation
    at = home_with_demo()
    at.switch_page("pages/ask.py").run()
    at = build(at, ["memcot", "naive_rag"], "ask_systems")
    _ask(at, FLAGSHIP)
    shown = _warnings(at)
    assert shown.count(FALLBACK_TEXT["full_conversation"]) == 1  # memcot's card only
    assert _gold_labels(at) == [GOLD_LABEL_TEXT]  # memcot's reader read the gold category; naive_rag's did not
    assert GOLD_LABEL_TEXT not in shown  # not a yellow box on the card: one click away
    at.switch_page("pages/compare.py").run()
    at.multiselect(key="cmp_systems").set_value(["memcot", "naive_rag"]).run()
    at.selectbox(key="cmp_q_pick").set_value(FLAGSHIP).run()
    _click(at, "Compare")
    assert not errors(at), errors(at)
    shown = _warnings(at)
    assert shown.count(FALLBACK_TEXT["full_conversation"]) == 1 and _gold_labels(at) == [GOLD_LABEL_TEXT]


def test_a_long_note_opens_with_its_first_clause_and_the_rest_one_click_away() -> None:
    """Issue 37 minor 9: a ~100-word uncertainty formula opened xMemory's card; a long note shows its first clause,
    the whole note one click away."""
    from streamlit.testing.v1 import AppTest

    def page() -> None:
        from ui.ask_view import note_line

        note_line("Stage II uncertainty: the reader gave no token logprobs (offline); used the " + "word " * 80)
        note_line("a short note")

    at = AppTest.from_function(page).run()
    assert [e.label.replace("\\", "") for e in at.expander] == ["Note: Stage II uncertainty: the reader gave no token logprobs (offline)"]
    assert at.expander[0].caption[0].value.count("word") == 80  # the whole note kept
    captions = [c.value.replace("\\", "") for c in at.caption]
    assert "Note: a short note" in captions  # a short note stays whole, on the card
