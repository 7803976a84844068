"""xMemory's reader prompt (App. C.2, the paper's text), the "xmemory" reader family.

    prompt (role)            temperature  source
    answer_xmemory_locomo    0            xMemory App. C.2 (the paper gives a LoCoMo prompt only)

Stage II measures this reader's uncertainty (roles.py reuses its system text). Registered with
memcore.llm.roles.readers when this package is imported; XMemorySystem.reader_family names it.
"""

from __future__ import annotations

from memcore.llm.roles import Role
from memcore.llm.roles.readers import ReaderFamily, reader_role, register_family

XMEMORY_LOCOMO = reader_role(
    "answer_xmemory_locomo",
    "You are an intelligent memory assistant tasked with retrieving accurate information from conversation "
    "memories.\n# CONTEXT:\nYou have access to memories from two speakers in a conversation. These memories "
    "contain timestamped information that may be relevant to answering the question.\n# INSTRUCTIONS:\n"
    "1. Carefully analyze all provided memories from both speakers\n"
    "2. Pay special attention to the timestamps to determine the answer\n"
    "3. If the question asks about a specific event or fact, look for direct evidence in the memories\n"
    "4. If the memories contain contradictory information, prioritize the most recent memory\n"
    "5. If there is a question about time references (like \"last year\", \"two months ago\", etc.), calculate "
    "the actual date based on the memory timestamp. For example, if a memory from 4 May 2022 mentions \"went to "
    "India last year,\" then the trip occurred in 2021.\n"
    "6. Always convert relative time references to specific dates, months, or years. For example, convert "
    "\"last year\" to \"2022\" or \"two months ago\" to \"March 2023\" based on the memory timestamp. Ignore the "
    "reference while answering the question. Do not answer temporal questions in timestamp such as "
    "\"2023-05-08\", but answer naturally such as \"7 May 2023\" or \"The week before 6 July 2023\"!\n"
    "7. Focus only on the content of the memories from both speakers. Do not confuse character names mentioned "
    "in memories with the actual users who created those memories.\n"
    "8. The answer should be less than 5-8 words.",
    "Memories:\n{context}\n\nQuestion: {question}\nAnswer:", 0.0, "xMemory App. C.2, LoCoMo answer prompt")


def pick(source: str, category: int | None) -> Role:
    """The paper's one (LoCoMo) prompt, on every data source."""
    return XMEMORY_LOCOMO


FAMILY = register_family(ReaderFamily("xmemory", pick=pick, temperatures="0", source="xMemory App. C.2"))
