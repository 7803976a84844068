"""LLM-judge prompts for LoCoMo and LongMemEval, and a robust parser for the judge's label.

LoCoMo: the mem0-style CORRECT / WRONG prompt (Chhikara et al., 2025; used by Dai et al.'s paper and named
in ../shared/papers/README.md "Metrics"), style "mem0", plus the styles a system's package brings (its
class's `judge_styles`: a paper's own wording, found through the systems registry). LongMemEval: the
benchmark's per-type yes / no prompts (Wu et al., 2025), of which Xu et al.'s appendix A.1 prints abridged
copies. Run judges at temperature 0.
"""

from __future__ import annotations

import json
import re

from memcore.systems import load_all

__all__ = [
    "JUDGE_TEMPERATURE",
    "LME_ABSTENTION_PROMPT",
    "LME_DEFAULT_PROMPT",
    "LME_KNOWLEDGE_UPDATE_PROMPT",
    "LME_PREFERENCE_PROMPT",
    "LME_TEMPORAL_PROMPT",
    "LOCOMO_JUDGE_PROMPT",
    "PROMPT_NAMES",
    "judge_prompt",
    "judge_prompt_name",
    "judge_styles",
    "parse_judge_label",
]

JUDGE_TEMPERATURE = 0.0

LOCOMO_JUDGE_PROMPT = """Your task is to label an answer to a question as 'CORRECT' or 'WRONG'. You will be given the following data:
    (1) a question (posed by one user to another user),
    (2) a 'gold' (ground truth) answer,
    (3) a generated answer
which you will score as CORRECT/WRONG.

The point of the question is to ask about something one user should know about the other user based on their prior conversations.
The gold answer will usually be a concise and short answer that includes the referenced topic, for example:
Question: Do you remember what I got the last time I went to Hawaii?
Gold answer: A shell necklace
The generated answer might be much longer, but you should be generous with your grading - as long as it touches on the same topic as the gold answer, it should be counted as CORRECT.

For time related questions, the gold answer will be a specific date, month, year, etc. The generated answer might be much longer or use relative time references (like "last Tuesday" or "next month"), but you should be generous with your grading - as long as it refers to the same date or time period as the gold answer, it should be counted as CORRECT. Even if the format differs (e.g., "May 7th" vs "7 May"), consider it CORRECT if it's the same date.

Now it's time for the real question:
Question: {question}
Gold answer: {gold}
Generated answer: {prediction}

First, provide a short (one sentence) explanation of your reasoning, then finish with CORRECT or WRONG.
Do NOT include both CORRECT and WRONG in your response, or it will break the evaluation script.

Just return the label CORRECT or WRONG in a json format with the key as "label"."""

_LME_HEAD = (
    "I will give you a question, a correct answer, and a response from a model. Please answer yes if the "
    "response contains the correct answer. Otherwise, answer no."
)
_LME_STEPS = (
    " If the response is equivalent to the correct answer or contains all the intermediate steps to get the "
    "correct answer, you should also answer yes. If the response only contains a subset of the information "
    "required by the answer, answer no."
)
_LME_TAIL = (
    "\n\nQuestion: {question}\n\nCorrect Answer: {gold}\n\nModel Response: {prediction}\n\n"
    "Is the model response correct? Answer yes or no only."
)
LME_DEFAULT_PROMPT = _LME_HEAD + _LME_STEPS + _LME_TAIL
LME_TEMPORAL_PROMPT = (
    _LME_HEAD
    + _LME_STEPS
    + " In addition, do not penalize off-by-one errors for the number of days. If the question asks for the "
    "number of days/weeks/months, etc., and the model makes off-by-one errors (e.g., predicting 19 days when "
    "the answer is 18), the model's response is still correct." + _LME_TAIL
)
LME_KNOWLEDGE_UPDATE_PROMPT = (
    _LME_HEAD
    + " If the response contains some previous information along with an updated answer, the response should "
    "be considered as correct as long as the updated answer is the required answer." + _LME_TAIL
)
LME_PREFERENCE_PROMPT = (
    "I will give you a question, a rubric for desired personalized response, and a response from a model. "
    "Please answer yes if the response satisfies the desired response. Otherwise, answer no. The model does "
    "not need to reflect all the points in the rubric. The response is correct as long as it recalls and "
    "utilizes the user's personal information correctly."
    "\n\nQuestion: {question}\n\nRubric: {gold}\n\nModel Response: {prediction}\n\n"
    "Is the model response correct? Answer yes or no only."
)
LME_ABSTENTION_PROMPT = (
    "I will give you an unanswerable question, an explanation, and a response from a model. Please answer yes "
    "if the model correctly identifies the question as unanswerable. The model could say that the information "
    "is incomplete, or some other information is given but the asked information is not."
    "\n\nQuestion: {question}\n\nExplanation: {gold}\n\nModel Response: {prediction}\n\n"
    "Does the model correctly identify the question as unanswerable? Answer yes or no only."
)

_LOCOMO_NAMES = {"multi-hop", "temporal", "open-domain", "single-hop", "adversarial", "locomo"}
_LME_BY_TYPE = {
    "temporal-reasoning": LME_TEMPORAL_PROMPT,
    "knowledge-update": LME_KNOWLEDGE_UPDATE_PROMPT,
    "single-session-preference": LME_PREFERENCE_PROMPT,
    "abstention": LME_ABSTENTION_PROMPT,
}
_LOCOMO_ABSTENTION_NOTE = (
    "The conversation never mentions this; a correct response says the information is not available."
)


# the name results record for each prompt (which prompt judged a question); a style's prompt has its own
PROMPT_NAMES = {
    LOCOMO_JUDGE_PROMPT: "locomo-mem0",
    LME_ABSTENTION_PROMPT: "abstention",
    LME_DEFAULT_PROMPT: "longmemeval-default",
    LME_TEMPORAL_PROMPT: "longmemeval-temporal-reasoning",
    LME_KNOWLEDGE_UPDATE_PROMPT: "longmemeval-knowledge-update",
    LME_PREFERENCE_PROMPT: "longmemeval-preference",
}


_MEM0 = {"mem0": ("locomo-mem0", LOCOMO_JUDGE_PROMPT)}


def judge_styles() -> dict[str, tuple[str, str]]:
    """The LoCoMo judge prompt styles: style -> (prompt name in results, template); "mem0" first, then those
    each registered system's class brings (`judge_styles`), in the systems' order."""
    styles = dict(_MEM0)
    for cls in load_all().values():
        styles.update(getattr(cls, "judge_styles", {}))
    return styles


def _template(kind: str, abstention: bool, style: str) -> tuple[str, str]:
    if kind in ("5", "adversarial") or abstention or kind.endswith("_abs"):
        return PROMPT_NAMES[LME_ABSTENTION_PROMPT], LME_ABSTENTION_PROMPT
    if kind in {"1", "2", "3", "4"} or kind in _LOCOMO_NAMES:
        styles = _MEM0 if style in _MEM0 else judge_styles()
        if style not in styles:
            raise ValueError(f"unknown judge style {style!r}: use {' or '.join(map(repr, styles))}")
        return styles[style]
    prompt = _LME_BY_TYPE.get(kind, LME_DEFAULT_PROMPT)
    return PROMPT_NAMES[prompt], prompt


def judge_prompt_name(question_type_or_category: int | str, *, abstention: bool = False, style: str = "mem0") -> str:
    """The name (PROMPT_NAMES, or a style's own) of the prompt `judge_prompt` uses for this category or type."""
    return _template(str(question_type_or_category).strip().lower(), abstention, style)[0]


def judge_prompt(
    question_type_or_category: int | str,
    question: str,
    gold: str | int | float,
    prediction: str,
    *,
    abstention: bool = False,
    style: str = "mem0",
) -> str:
    """The filled judge prompt for a LoCoMo category (1-5 or its name) or a LongMemEval question type.

    LoCoMo 1-4 use the mem0-style prompt (another `style`: a system's own wording, `judge_styles`). LoCoMo 5
    (adversarial) and LongMemEval abstention questions (`abstention=True`, a type ending in "_abs",
    or "abstention") use the abstention prompt. Other strings use LongMemEval's default prompt.
    """
    kind = str(question_type_or_category).strip().lower()
    fill = {"question": question, "gold": str(gold), "prediction": prediction}
    if kind in ("5", "adversarial") and not str(gold).strip():
        fill["gold"] = _LOCOMO_ABSTENTION_NOTE
    return _template(kind, abstention, style)[1].format(**fill)


_LABEL = re.compile(r"\b(not\s+correct|incorrect|wrong|correct)\b", re.IGNORECASE)
_YES_NO = re.compile(r"\b(yes|no)\b", re.IGNORECASE)
_JSON = re.compile(r"\{[^{}]*\}", re.DOTALL)
_KEYS = ("label", "correct", "is_correct", "judgment", "judgement", "verdict", "answer", "result")


def _from_value(value: object) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return _from_text(value)
    return None


def _from_json(text: str) -> bool | None:
    for block in reversed(_JSON.findall(text)):
        try:
            data = json.loads(block)
        except ValueError:
            continue
        if isinstance(data, dict):
            lowered = {str(k).lower(): v for k, v in data.items()}
            for key in _KEYS:
                if key in lowered and (label := _from_value(lowered[key])) is not None:
                    return label
    return None


def _from_text(text: str) -> bool | None:
    labels = _LABEL.findall(text)
    if labels:
        upper = [w for w in labels if w.isupper()]
        last = (upper or labels)[-1].lower()
        return last == "correct"
    words = text.strip().lstrip("*#>\"'` ").split()
    first = words[0].strip(".,!:;*\"'`").lower() if words else ""
    if first in ("yes", "no"):
        return first == "yes"
    yes_no = _YES_NO.findall(text)
    return yes_no[-1].lower() == "yes" if yes_no else None


def parse_judge_label(text: str) -> bool | None:
    """True / False from a judge's output (CORRECT / WRONG / INCORRECT, or yes / no), None if unreadable.

    Reads JSON ({"label": "CORRECT"}, {"correct": true}) first, then free text: the last
    CORRECT / WRONG / INCORRECT word (upper-case words win over prose), else a leading or last yes / no.
    """
    if not text or not text.strip():
        return None
    label = _from_json(text)
    return label if label is not None else _from_text(text)
