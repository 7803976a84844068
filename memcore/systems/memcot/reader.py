"""MemCoT's responder: LoCoMo's and LongMemEval's standard reading prompts (MemCoT App. C-D), the "memcot"
reader family.

    prompt (role)                                              temperature  source
    answer_locomo_standard (category 5: _adversarial)          1.0          MemCoT App. C-D: LoCoMo's and
    / answer_longmemeval_standard                                           LongMemEval's standard prompts

The prompt texts are the benchmarks' (memcore.llm.roles.readers); on LoCoMo the category picks the
adversarial prompt (5) and LoCoMo's date hint (2), so the family uses the question's category. Registered
when this package is imported; MemCoTSystem.reader_family names it.
"""

from __future__ import annotations

from memcore.llm.roles import Role
from memcore.llm.roles.readers import (
    LOCOMO_STANDARD_ADVERSARIAL_USER,
    LOCOMO_STANDARD_SYSTEM,
    LOCOMO_STANDARD_USER,
    LONGMEMEVAL_STANDARD_USER,
    ReaderFamily,
    reader_role,
    register_family,
)

LOCOMO_STANDARD = reader_role(
    "answer_locomo_standard", LOCOMO_STANDARD_SYSTEM, LOCOMO_STANDARD_USER,
    1.0, "LoCoMo's standard QA prompt (MemCoT's responder on LoCoMo)")

LOCOMO_STANDARD_ADVERSARIAL = reader_role(
    "answer_locomo_standard_adversarial", LOCOMO_STANDARD_SYSTEM, LOCOMO_STANDARD_ADVERSARIAL_USER,
    1.0, "LoCoMo's standard category-5 QA prompt (MemCoT's responder)")

LONGMEMEVAL_STANDARD = reader_role(
    "answer_longmemeval_standard", "", LONGMEMEVAL_STANDARD_USER,
    1.0, "LongMemEval's standard reading prompt (MemCoT's responder on LongMemEval)", max_tokens=256)


def pick(source: str, category: int | None) -> Role:
    """LongMemEval's standard prompt on LongMemEval data; else LoCoMo's, its category-5 one for category 5."""
    if source == "longmemeval":
        return LONGMEMEVAL_STANDARD
    return LOCOMO_STANDARD_ADVERSARIAL if category == 5 else LOCOMO_STANDARD


FAMILY = register_family(ReaderFamily("memcot", pick=pick, uses_category=True, temperatures="1.0",
                                      source="MemCoT App. C-D: LoCoMo's and LongMemEval's standard prompts"))
