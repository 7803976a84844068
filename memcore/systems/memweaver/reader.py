"""MemWeaver's category-specific reader prompts (App. B; instructions and temperatures as in the authors'
code, see docs/fidelity.md), the "memweaver" reader family.

    prompt (role)                                            temperature
    answer_memweaver[_temporal|_open_domain|_adversarial]    0.7 (adversarial 0.01)

The question's LoCoMo category picks the prompt (2 temporal, 3 open-domain, 5 adversarial, else the single-hop
/ multi-hop one), so the family uses the question's category. Registered with memcore.llm.roles.readers when
this package is imported; MemWeaverSystem.reader_family names it.
"""

from __future__ import annotations

from memcore.llm.roles import Role
from memcore.llm.roles.readers import ReaderFamily, reader_role, register_family

_MW_INTRO = ("Answer using only the information the context supports. If the answer is unclear, answer briefly "
             "and add no unsupported details.")
_MW_CONTEXT = "--- context start ---\n{context}\n--- context end ---\n\n"
MEMWEAVER = reader_role(
    "answer_memweaver", _MW_INTRO,
    _MW_CONTEXT + "Answer the question with the shortest possible phrase from the context: if the answer is "
    "there, copy its words. Add no new information and no explanation.\n\nQuestion: {question}\nShort answer:",
    0.7, "MemWeaver App. B: single-hop / multi-hop answer prompt")
MEMWEAVER_TEMPORAL = reader_role(
    "answer_memweaver_temporal", _MW_INTRO,
    _MW_CONTEXT + "Use DATE of CONVERSATION to answer with an approximate date. Give the shortest possible "
    "answer, with words from the conversation where possible and no subject.\n\nQuestion: {question}\n"
    "Short answer:", 0.7, "MemWeaver App. B: temporal answer prompt")
MEMWEAVER_OPEN_DOMAIN = reader_role(
    "answer_memweaver_open_domain", _MW_INTRO,
    _MW_CONTEXT + "Answer with a short phrase only. If the question is about a likelihood or a hypothetical, "
    "start with one of \"Likely yes\", \"Likely no\", \"Yes\" or \"No\", then add at most a few words from the "
    "context. Do not discuss uncertainty (\"not explicitly stated\", \"cannot be sure\").\n\nQuestion: "
    "{question}\nShort answer:", 0.7, "MemWeaver App. B: open-domain answer prompt")
MEMWEAVER_ADVERSARIAL = reader_role(
    "answer_memweaver_adversarial", _MW_INTRO,
    _MW_CONTEXT + "If the context does not support an answer, reply exactly: Not mentioned in the conversation. "
    "Otherwise give the shortest possible answer.\n\nQuestion: {question}\nShort answer:",
    0.01, "MemWeaver App. B: adversarial answer prompt (without the code's two-option form, which shows the "
    "gold answer)")

_BY_CATEGORY = {2: MEMWEAVER_TEMPORAL, 3: MEMWEAVER_OPEN_DOMAIN, 5: MEMWEAVER_ADVERSARIAL}


def pick(source: str, category: int | None) -> Role:
    """The prompt for the question's LoCoMo category (temporal, open-domain, adversarial; else the default)."""
    return _BY_CATEGORY.get(category or 0, MEMWEAVER)


FAMILY = register_family(ReaderFamily("memweaver", pick=pick, uses_category=True,
                                      temperatures="0.7 (adversarial 0.01)", source="MemWeaver App. B"))
