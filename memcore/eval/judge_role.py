"""The `judge` role: label a predicted answer CORRECT or WRONG against the gold answer.

inputs  {"question", "gold", "prediction", "category", "question_type"}
output  {"label": "CORRECT" | "WRONG", "reason"}

Real models get the benchmark's own judge prompt (memcore.eval.judge_prompts.judge_prompt:
the mem0-style LoCoMo prompt, LoCoMo category 5 / LongMemEval abstention prompts, LongMemEval
per-type prompts), chosen by `question_type` when given, else by `category`. The offline
engine uses the lexical judge (memcore.eval.metrics.lexical_judge) and says so in `reason`.

The role belongs to the evaluation, so it lives here, not in memcore/llm/roles (memcore.llm never
imports memcore.eval): it registers itself with memcore.llm.roles.register when this module is
imported, which memcore.eval.judge (make_judge) does.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, field_validator

from memcore.eval.judge_prompts import judge_prompt, parse_judge_label
from memcore.eval.metrics import is_abstention, lexical_judge, locomo_f1
from memcore.llm.roles import Role, register, render_value
from memcore.llm.structured import format_instruction

LEXICAL = "lexical judge (offline engine, no LLM)"
_ABSTENTION_TYPES = ("5", "adversarial", "abstention")


class JudgeOutput(BaseModel):
    """A judge's verdict: CORRECT or WRONG, and a one-sentence reason."""

    label: Literal["CORRECT", "WRONG"]  # required: an unreadable reply is not a WRONG verdict
    reason: str = ""

    @field_validator("label", mode="before")
    @classmethod
    def _label(cls, v: Any) -> str:
        ok = v if isinstance(v, bool) else parse_judge_label(str(v))
        if ok is None:
            raise ValueError(f"label must be CORRECT or WRONG, got {v!r}")
        return "CORRECT" if ok else "WRONG"

    @property
    def correct(self) -> bool:
        """Whether the verdict is CORRECT."""
        return self.label == "CORRECT"


class JudgeRole(Role):
    """A role whose user message is the benchmark's judge prompt, filled in."""

    def messages(self, inputs: dict[str, Any]) -> list[dict[str, str]]:
        """The judge prompt for these inputs (plus the JSON instruction), as chat messages."""
        kind = inputs.get("question_type") or inputs.get("category") or ""
        prompt = judge_prompt(kind, render_value(inputs.get("question", "")), render_value(inputs.get("gold", "")),
                              render_value(inputs.get("prediction", "")))
        system = f"{self.system}\n{format_instruction(self.output)}"
        return [{"role": "system", "content": system}, {"role": "user", "content": prompt}]


def judge_category(inputs: dict[str, Any]) -> int | str:
    """The LoCoMo category the lexical rules use: 5 for abstention questions, else the given category."""
    qtype = str(inputs.get("question_type", "") or "").strip().lower()
    cat = inputs.get("category", "")
    if qtype in _ABSTENTION_TYPES or qtype.endswith("_abs") or str(cat).strip().lower() in _ABSTENTION_TYPES:
        return 5
    return cat if cat not in (None, "") else qtype


def offline_judge_verdict(inputs: dict[str, Any]) -> tuple[bool, str]:
    """(correct, reason) by the lexical rules, with the reason naming the rule that decided."""
    gold, pred = str(inputs.get("gold", "")), str(inputs.get("prediction", ""))
    cat = judge_category(inputs)
    if cat == 5:
        ok = is_abstention(pred)
        why = "the answer abstains" if ok else "the answer does not abstain"
        return ok, f"{LEXICAL}: unanswerable question; {why}"
    ok = lexical_judge(pred, gold, cat)
    f1 = locomo_f1(pred, gold, cat)
    if f1 >= 0.5:
        why = f"token F1 {f1:.2f} >= 0.5"
    elif ok:
        why = f"the gold answer appears in the answer (token F1 {f1:.2f})"
    else:
        why = f"token F1 {f1:.2f} < 0.5 and the gold answer is not contained"
    return ok, f"{LEXICAL}: {why}"


def offline_judge(inputs: dict[str, Any]) -> JudgeOutput:
    """The lexical judge's verdict (labelled as such in the reason)."""
    ok, reason = offline_judge_verdict(inputs)
    return JudgeOutput(label="CORRECT" if ok else "WRONG", reason=reason)


JUDGE = register(JudgeRole(
    name="judge",
    system="You grade answers to questions about long conversations. Be fair and follow the instructions.",
    user="",
    output=JudgeOutput,
    offline=offline_judge,
    fallback=lambda inputs: JudgeOutput(label="WRONG", reason="the judge's reply could not be read"),
    json_output=True,
    max_tokens=128,
    description="answer judge: CORRECT / WRONG against the gold answer",
    tags=("eval",),
))
