"""Judge prompt styles: "mem0" is the evaluation's own; a system's package brings others (its class's
`judge_styles`), found through the systems registry, so memcore.eval names no system."""

from __future__ import annotations

import pytest

from memcore.eval.judge_prompts import LOCOMO_JUDGE_PROMPT, judge_prompt, judge_prompt_name, judge_styles
from memcore.systems import SYSTEMS, get_system, register_system
from memcore.systems.naive_rag import NaiveRAGSystem

TEMPLATE = "Outside judge. Q={question} G={gold} P={prediction}"


@pytest.fixture
def outside_style():
    """A system from outside memcore bringing the judge style "outside" (removed afterwards)."""

    class OutsideJudged(NaiveRAGSystem):
        name = "outside_judged"
        judge_styles = {"outside": ("locomo-outside", TEMPLATE)}

    register_system(OutsideJudged)
    yield "outside"
    SYSTEMS.pop(OutsideJudged.name, None)


def test_a_system_brings_its_judge_style(outside_style) -> None:
    assert judge_prompt(2, "When?", "7 May", "May 7", style=outside_style) == "Outside judge. Q=When? G=7 May P=May 7"
    assert judge_prompt_name("temporal", style=outside_style) == "locomo-outside"
    assert "unanswerable" in judge_prompt(5, "q", "", "p", style=outside_style)  # category 5 keeps its prompt
    assert list(judge_styles())[0] == "mem0" and outside_style in judge_styles()


def test_styles_come_from_the_system_classes() -> None:
    styles = judge_styles()
    assert styles["mem0"] == ("locomo-mem0", LOCOMO_JUDGE_PROMPT)
    for name, (prompt_name, template) in get_system("com").judge_styles.items():
        assert styles[name] == (prompt_name, template) and "{prediction}" in template
    with pytest.raises(ValueError, match="unknown judge style 'outside': use 'mem0' or"):
        judge_prompt(1, "q", "g", "p", style="outside")
