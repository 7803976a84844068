"""The judges of BEAM and LoCoMo-Plus as roles: `rubric_judge` and `locomo_plus_judge`.

rubric_judge (BEAM, Tavakoli et al. 2026: facts from their evaluation code, ../shared/datasets/README.md)
  inputs  {"question", "rubric": [item, ...], "prediction"}
  output  {"items": [{"score": 0 | 0.5 | 1, "reason"}, ...]}  one entry per rubric item, in order
  The question's score is the items' mean. Offline: the offline rubric rule (memcore.eval.beam_scores), said in
  each reason; eval does not call this role offline (the `rubric_rule` metric is that rule already).

locomo_plus_judge (LoCoMo-Plus, Li et al. 2026)
  inputs  {"category", "question", "gold", "evidence", "prediction"}
  output  {"label": "correct" | "partial" | "wrong", "reason"}; score 1 / 0.5 / 0
  Per-category prompts after the authors' judge prompts (their task_eval/prompt.py, reworded here): `cognitive`
  asks whether the response connects to the cue (the evidence); the LoCoMo categories compare with the
  reference answer. Offline the role has no rule (there is no reference answer to compare with): its output is
  a "wrong" labelled as not judged, and eval does not call it offline.

Prompt versions (RUBRIC_PROMPT_VERSION, PLUS_PROMPT_VERSION) are recorded with every verdict and in the run's
judge info, so that two runs say whether their judge scores are comparable.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from memcore.eval.beam_scores import OFFLINE_RUBRIC_RULE, rubric_item_score
from memcore.llm.roles import Role, register, render_value
from memcore.llm.structured import format_instruction

RUBRIC_PROMPT_VERSION = "beam-rubric-v1"
PLUS_PROMPT_VERSION = "locomo-plus-v1"
PLUS_SCORES = {"correct": 1.0, "partial": 0.5, "wrong": 0.0}

RUBRIC_SYSTEM = ("You grade a response to a question about a long conversation against a rubric. For each "
                 "rubric item, in order, give a score: 1 if the response fully satisfies the item, 0.5 if it "
                 "satisfies it partly, 0 if it does not. Judge each item on its own; do not reward content "
                 "the item does not ask for.")
RUBRIC_USER = "Question:\n{question}\n\nRubric items:\n{rubric}\n\nResponse:\n{prediction}"

_PLUS_HEAD = "Return a label and a one-sentence reason."
PLUS_PROMPTS = {
    "cognitive": ("You judge memory awareness. The Evidence is something said earlier in a conversation; the "
                  "Response answers a later message. Label it 'correct' if the response clearly reflects, uses or "
                  "is linked to the evidence (explicitly or implicitly), else 'wrong'.\n\nEvidence:\n{evidence}\n\n"
                  "Later message:\n{question}\n\nResponse:\n{prediction}"),
    "temporal": ("You judge temporal answers. Label 'correct' if the date, duration or order in the response "
                 "matches the reference (equivalent wording allowed), else 'wrong'.\n\nReference:\n{gold}\n\n"
                 "Response:\n{prediction}\n\nEvidence:\n{evidence}"),
    "adversarial": ("The question asks about something the conversation does not contain. Label 'correct' if the "
                    "response conveys that it was not mentioned or cannot be answered, 'wrong' if it gives a "
                    "concrete answer.\n\nResponse:\n{prediction}"),
    "default": ("You check facts. Label 'correct' if the response matches the reference's entities (names, "
                "places, times), 'partial' if it gets the main entity right but misses details or has minor "
                "errors, 'wrong' if it is incorrect or invents details.\n\nReference:\n{gold}\n\n"
                "Response:\n{prediction}\n\nEvidence:\n{evidence}"),
}
PLUS_LABELS = {"cognitive": ("correct", "wrong"), "temporal": ("correct", "wrong"),
               "adversarial": ("correct", "wrong"), "default": ("correct", "partial", "wrong")}


class RubricItemScore(BaseModel):
    """One rubric item's score (0, 0.5 or 1) and why."""

    score: float = Field(json_schema_extra={"enum": [0, 0.5, 1]})
    reason: str = ""

    @field_validator("score", mode="before")
    @classmethod
    def _score(cls, v: Any) -> float:
        x = float(v)
        if x not in (0.0, 0.5, 1.0):
            raise ValueError(f"a rubric score is 0, 0.5 or 1, got {v!r}")
        return x


class RubricOutput(BaseModel):
    """The rubric judge's scores, one per rubric item in order."""

    items: list[RubricItemScore] = Field(min_length=1)

    def mean(self) -> float:
        """The question's score: the mean of the item scores."""
        return sum(float(i.score) for i in self.items) / len(self.items)


class PlusOutput(BaseModel):
    """The LoCoMo-Plus judge's label and reason."""

    label: Literal["correct", "partial", "wrong"]
    reason: str = ""

    @field_validator("label", mode="before")
    @classmethod
    def _label(cls, v: Any) -> str:
        return str(v).strip().lower()

    @property
    def score(self) -> float:
        """1 / 0.5 / 0 for correct / partial / wrong."""
        return PLUS_SCORES[self.label]


def offline_rubric(inputs: dict[str, Any]) -> RubricOutput:
    """The offline rubric rule per item, each reason naming the rule."""
    pred = str(inputs.get("prediction", ""))
    items = [RubricItemScore(score=rubric_item_score(str(r), pred), reason=OFFLINE_RUBRIC_RULE)
             for r in inputs.get("rubric") or []]
    return RubricOutput(items=items or [RubricItemScore(score=0, reason=f"{OFFLINE_RUBRIC_RULE}; no rubric")])


def plus_kind(category: Any) -> str:
    """The LoCoMo-Plus prompt for a category: cognitive, temporal, adversarial, else default."""
    c = str(category).strip().lower()
    return {"2": "temporal", "5": "adversarial"}.get(c, c if c in PLUS_PROMPTS else "default")


class PlusRole(Role):
    """A role whose user message is the category's LoCoMo-Plus judge prompt, filled in."""

    def messages(self, inputs: dict[str, Any]) -> list[dict[str, str]]:
        """The category's prompt for these inputs (plus the JSON instruction), as chat messages."""
        kind = plus_kind(inputs.get("category", ""))
        values = {k: render_value(inputs.get(k, "")) for k in ("question", "gold", "evidence", "prediction")}
        labels = " / ".join(PLUS_LABELS[kind])
        system = f"{self.system} Labels: {labels}. {_PLUS_HEAD}\n{format_instruction(self.output)}"
        return [{"role": "system", "content": system}, {"role": "user", "content": PLUS_PROMPTS[kind].format(**values)}]


RUBRIC_JUDGE = register(Role(
    name="rubric_judge",
    system=RUBRIC_SYSTEM,
    user=RUBRIC_USER,
    output=RubricOutput,
    offline=offline_rubric,
    json_output=True,
    max_tokens=768,
    description="BEAM rubric judge: each rubric item 0 / 0.5 / 1, the question's score their mean",
    offline_note=OFFLINE_RUBRIC_RULE,
    tags=("eval",),
))

PLUS_JUDGE = register(PlusRole(
    name="locomo_plus_judge",
    system="You judge responses in a long-term memory benchmark (LoCoMo-Plus).",
    user="",
    output=PlusOutput,
    offline=lambda inputs: PlusOutput(label="wrong", reason="not judged: LoCoMo-Plus has no offline rule"),
    json_output=True,
    max_tokens=128,
    description="LoCoMo-Plus judge: correct / partial / wrong (1 / 0.5 / 0), per-category prompts",
    tags=("eval",),
))
