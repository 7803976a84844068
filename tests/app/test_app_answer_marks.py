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


def test_ask_and_compare_cards_say_a_fallback_answered() -> None:
    # the flagship question: MemCoT's loop finds nothing and it answers from the whole conversation
    at = home_with_demo()
    at.switch_page("pages/ask.py").run()
    at = build(at, ["memcot", "naive_rag"], "ask_systems")
    _ask(at, FLAGSHIP)
    shown = _warnings(at)
    assert shown.count(FALLBACK_TEXT["full_conversation"]) == 1  # memcot's card only
    assert shown.count(GOLD_LABEL_TEXT) == 1  # memcot's reader read the gold category; naive_rag's did not
    at.switch_page("pages/compare.py").run()
    at.multiselect(key="cmp_systems").set_value(["memcot", "naive_rag"]).run()
    at.selectbox(key="cmp_q_pick").set_value(FLAGSHIP).run()
    _click(at, "Compare")
    assert not errors(at), errors(at)
    shown = _warnings(at)
    assert shown.count(FALLBACK_TEXT["full_conversation"]) == 1 and shown.count(GOLD_LABEL_TEXT) == 1
