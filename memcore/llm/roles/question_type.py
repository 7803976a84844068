"""The `question_type` role: predict a question's LoCoMo category from its text alone, for readers that pick
a prompt or hint by category when `category_source = predicted` (memcore.llm.roles.readers).

inputs  {"question"}
output  {"category": 1 multi-hop | 2 temporal | 3 open-domain | 4 single-hop}

No real question carries its gold category; a reader given the gold label answers with an oracle the
other systems lack. This role is what a deployed system could do instead. Category 5 (adversarial: the
answer is not in the conversation) cannot be told from the question and is never predicted.
The offline rule: "when" / "what year|month|date" / "how long ago|since" -> temporal; "would" / "likely"
/ "might" / "could" (a hypothetical) -> open-domain; else single-hop.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel

from memcore.llm.roles import Role, register

_TEMPORAL = re.compile(r"^\s*when\b|\bwhat (year|month|day|date|time)\b|\bhow long (ago|since|has|have|had|did)\b|"
                       r"\b(which|what) (week|weekend)\b", re.I)
_OPEN = re.compile(r"\b(would|likely|might|could)\b", re.I)


class QuestionType(BaseModel):
    """The predicted LoCoMo category of a question."""

    category: Literal[1, 2, 3, 4] = 4


def offline_question_type(inputs: dict[str, Any]) -> QuestionType:
    """The rule: temporal cues -> 2, hypothetical cues -> 3, else 4 (single-hop)."""
    q = str(inputs.get("question", ""))
    if _TEMPORAL.search(q):
        return QuestionType(category=2)
    if _OPEN.search(q):
        return QuestionType(category=3)
    return QuestionType(category=4)


QUESTION_TYPE = register(Role(
    name="question_type",
    system=("Classify a question about a long conversation between two people into one type:\n"
            "1 multi-hop: needs several facts from different parts of the conversation combined;\n"
            "2 temporal: asks when something happened, for a date, time or duration;\n"
            "3 open-domain: asks what someone would likely do, think or be, beyond what was said (inference, "
            "world knowledge);\n"
            "4 single-hop: one fact stated in the conversation."),
    user="Question: {question}",
    output=QuestionType,
    offline=offline_question_type,
    max_tokens=16,
    description="question type (LoCoMo category) predicted from the question text, for category_source=predicted",
))
