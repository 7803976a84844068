"""BEAM and LoCoMo-Plus scoring on hand-computed cases: the offline rubric rule, event ordering (Kendall tau-b x
F1), the rubric and LoCoMo-Plus judges' verdicts, their rows, and comparisons that refuse to mix judges."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from pydantic import ValidationError

from memcore.eval.beam_scores import (
    OFFLINE_RUBRIC_RULE,
    event_order_score,
    response_items,
    rubric_item_score,
    rubric_rule,
)
from memcore.eval.compare import compare_runs
from memcore.eval.compare_export import comparison_text
from memcore.eval.judge import _scored, scored_kind
from memcore.eval.metric_registry import get_metric
from memcore.eval.report import build_row
from memcore.eval.rubric_role import PLUS_JUDGE, RUBRIC_JUDGE, PlusOutput, RubricItemScore, RubricOutput
from memcore.types import Answer, Question, Trace

RUBRIC = ["LLM response should state: vanilla JavaScript ES2021", "LLM response should state: HTML5",
          "LLM response should state: CSS3 grid"]


def test_offline_rubric_rule_by_hand() -> None:
    answer = "You used vanilla JavaScript and HTML5."
    # item 1: {vanilla, javascript, es2021}: 2 of 3 found -> 0.5; item 2: {html5} -> 1; item 3: {css3, grid} -> 0
    assert [rubric_item_score(r, answer) for r in RUBRIC] == [0.5, 1.0, 0.0]
    assert rubric_rule(RUBRIC, answer) == (0.5, [0.5, 1.0, 0.0])
    assert rubric_rule([], answer) == (None, [])
    assert "offline rubric rule" in get_metric("rubric_rule").label


def test_event_ordering_is_tau_b_times_f1_by_hand() -> None:
    ref = ["a", "b", "c", "d"]
    resp = ["B", "A", "C", "X", "D"]
    sim = np.zeros((4, 5))
    sim[0, 1] = sim[1, 0] = sim[2, 2] = sim[3, 4] = 0.9  # a->A(1), b->B(0), c->C(2), d->D(4); X aligns to nothing
    sim[3, 3] = 0.6  # below the 0.65 threshold
    out = event_order_score(ref, resp, lambda a, b: sim)
    # response positions in reference order: 1, 0, 2, 4 -> 6 pairs, 1 discordant: tau_b = (5 - 1) / 6 = 2/3
    assert out["tau_b"] == pytest.approx(2 / 3)
    # precision 4/5, recall 4/4 -> F1 = 8/9; score = (2/3 + 1) / 2 * 8/9 = 20/27
    assert out["f1"] == pytest.approx(8 / 9) and out["score"] == pytest.approx(20 / 27)
    assert event_order_score(ref, resp[:1], lambda a, b: sim[:, :1])["score"] == 0.0  # one item shows no order
    reversed_ = event_order_score(["a", "b"], ["B", "A"], lambda a, b: np.array([[0, 1.0], [1.0, 0]]))
    assert reversed_["tau_b"] == pytest.approx(-1) and reversed_["score"] == 0.0


def test_response_items_split_numbered_lists_lines_and_sentences() -> None:
    assert response_items("In order: 1) set up the app, 2) added a quota, 3) a debounce.") == [
        "set up the app", "added a quota", "a debounce"]
    assert response_items("- first\n- second") == ["first", "second"]
    assert response_items("First this. Then that.") == ["First this.", "Then that."]


def test_judge_outputs_hold_to_their_scales() -> None:
    assert RubricOutput(items=[RubricItemScore(score=1), RubricItemScore(score=0.5)]).mean() == 0.75
    with pytest.raises(ValidationError):
        RubricItemScore(score=0.7)
    with pytest.raises(ValidationError):
        RubricOutput(items=[])
    assert PlusOutput(label="Partial").score == 0.5 and PlusOutput(label="wrong").score == 0.0
    assert RUBRIC_JUDGE.schema()["properties"]["items"]["items"]["properties"]["score"]["enum"] == [0, 0.5, 1]
    msgs = PLUS_JUDGE.messages({"category": "cognitive", "question": "It is cold.", "evidence": "A: I moved to Oslo.",
                                "prediction": "p", "gold": ""})
    assert "correct / wrong" in msgs[0]["content"] and "I moved to Oslo." in msgs[1]["content"]
    assert "partial" in PLUS_JUDGE.messages({"category": 1, "question": "q", "evidence": "", "prediction": "p",
                                             "gold": "g"})[0]["content"]


class _LLM:
    """Replies with the given outputs in turn (None: a failed call)."""

    def __init__(self, *outputs: object) -> None:
        self.outputs = list(outputs)
        self.calls: list[tuple[str, dict]] = []

    def run(self, name: str, inputs: dict, stage: str = "", **kw: object) -> SimpleNamespace:
        self.calls.append((name, inputs))
        out = self.outputs.pop(0)
        return SimpleNamespace(output=out, error="" if out is not None else "LLMError: timed out")


def _beam_q() -> Question:
    return Question(id="b:q", conv_id="b", text="What did I use?", answer="vanilla JS, HTML5, CSS3", evidence=["10"],
                    category="information extraction", metadata={"rubric": RUBRIC})


def _plus_q() -> Question:
    return Question(id="p:q", conv_id="p", text="It is cold here.", answer="", evidence=["CUE:1"],
                    category="cognitive", metadata={"no_reference_answer": True, "cue": "A: I moved to Oslo."})


def test_rubric_and_plus_verdicts_and_their_rows() -> None:
    q = _beam_q()
    assert scored_kind(q) == "rubric" and scored_kind(_plus_q()) == "plus"
    llm = _LLM(RubricOutput(items=[RubricItemScore(score=s) for s in (1, 0.5, 0)]))
    v = _scored(llm, q, "an answer", [None], offline=False, model="gpt-x")
    assert llm.calls[0][0] == "rubric_judge" and llm.calls[0][1]["rubric"] == RUBRIC
    assert v["scores"] == {"rubric_judge": 0.5} and v["correct"] is True and v["judge_id"] == "gpt-x|beam-rubric-v1"
    row = build_row(q, Answer("an answer", Trace("s", q.text)), {}, v)
    assert row["rubric_judge"] == 0.5 and row["judge"] is None and row["correct"] is True
    assert row["judge_id"] == "gpt-x|beam-rubric-v1" and row["rubric_rule"] == 0.0
    short = _scored(_LLM(RubricOutput(items=[RubricItemScore(score=1)])), q, "x", [None], offline=False, model="m")
    assert short["correct"] is None and "1 item scores for 3 rubric items" in short["error"]
    assert short["scores"] == {"rubric_judge": None}  # a failed judge call is no score
    failed = _scored(_LLM(None), _plus_q(), "x", [None], offline=False, model="m")
    assert failed["correct"] is None and "timed out" in failed["error"]
    two = _LLM(PlusOutput(label="correct"), PlusOutput(label="wrong"))  # two judge runs (seeds 1, 2)
    plus = _scored(two, _plus_q(), "Oslo?", [1, 2], offline=False, model="m")
    assert plus["scores"] == {"plus_judge": 0.5} and plus["score_runs"] == [1.0, 0.0]
    assert plus["prompt"] == "locomo-plus-v1:cognitive"


def test_offline_verdicts_name_the_rule_and_leave_locomo_plus_unjudged() -> None:
    v = _scored(_LLM(), _beam_q(), "vanilla JavaScript ES2021, HTML5, CSS3 grid", [None], offline=True, model="")
    assert v["correct"] is True and v["reason"] == OFFLINE_RUBRIC_RULE and v["scores"] == {}
    p = _scored(_LLM(), _plus_q(), "x", [None], offline=True, model="")
    assert p["correct"] is None and "not judged" in p["reason"]
    row = build_row(_plus_q(), Answer("x", Trace("s", "q")), {}, p)
    assert row["f1"] is None and row["bleu1"] is None and row["judge"] is None  # no reference answer: no lexical 0
    assert row["correct"] is False and row["judge_prompt"] == "not judged offline"


def _row(qid: str, judge_id: str, score: float) -> dict:
    return {"conv_id": "b", "question_id": qid, "system": "s", "variant": "s", "category": "c", "judge": None,
            "judge_id": judge_id, "rubric_judge": score, "f1": score, "correct": score >= 0.5}


def test_a_comparison_refuses_judge_scores_from_different_judges() -> None:
    a = [_row(f"q{i}", "gpt-x|beam-rubric-v1", 0.5) for i in range(4)]
    same = compare_runs(a, [_row(f"q{i}", "gpt-x|beam-rubric-v1", 1.0) for i in range(4)])["s"]
    assert same["judge_comparable"] is True and same["overall"]["rubric_judge"]["delta"] == pytest.approx(0.5)
    other = [_row(f"q{i}", "gpt-y|beam-rubric-v1", 1.0) for i in range(4)]
    diff = compare_runs(a, other)["s"]
    assert diff["judge_comparable"] is False and diff["judge_ids"] == {"a": ["gpt-x|beam-rubric-v1"],
                                                                        "b": ["gpt-y|beam-rubric-v1"]}
    assert "rubric_judge" not in diff["overall"] and diff["overall"]["f1"]["delta"] == pytest.approx(0.5)
    text = comparison_text({"a": {"label": "A"}, "b": {"label": "B"}, "systems": {"s": diff}})
    assert "JUDGES DIFFER" in text and "gpt-y|beam-rubric-v1" in text
