"""RecMem's reader prompts (App. F, Fig. 15-16, and E.3: module roles, no double counting, < 5-6 words on
LoCoMo), the "recmem" reader family.

    prompt (role)                                      temperature  source
    answer_recmem_locomo / answer_recmem_longmemeval   0            RecMem App. F (Fig. 15-16), E.3

Registered with memcore.llm.roles.readers when this package is imported; RecMemSystem.reader_family names it.
"""

from __future__ import annotations

from memcore.llm.roles import Role
from memcore.llm.roles.readers import ReaderFamily, reader_role, register_family

_RECMEM_ROLE = (
    "You are a memory assistant answering questions from the memories of a conversation between two speakers. "
    "The memories are timestamped and come in three kinds: episodic memories (refined summaries of related "
    "turns on one topic), semantic memories (short atomic facts extracted from the conversation) and raw "
    "memories (unprocessed exchanges between the speakers). Episodic and semantic memories may overlap (an "
    "event summary and its atomic facts): do not count the same evidence twice. Within each kind, memories "
    "are sorted by relevance.\n"
    "Instructions:\n"
    "1. Read all memories; pay attention to their timestamps whenever time matters.\n"
    "2. For a specific event or fact (who, where, when, what), look for direct, explicit evidence.\n"
    "3. For advice or preference questions, ground the answer in the user's own preferences, habits, "
    "constraints and past actions; fall back to generic advice only when there are none.\n"
    "4. If memories contradict each other, prefer the most recent one.\n"
    "5. Convert relative times (\"last year\", \"two months ago\") into concrete dates from the memory's "
    "timestamp: a memory of 4 May 2022 saying \"went to India last year\" means 2021.\n"
    "6. In raw memories the timestamp is when the conversation happened, not necessarily when the event did.\n"
    "7. Abstain only when there is truly no relevant evidence.")
RECMEM_LOCOMO = reader_role(
    "answer_recmem_locomo", _RECMEM_ROLE + "\n8. The answer should be less than 5-6 words.",
    "{context}\n\nQuestion: {question}\nAnswer:", 0.0, "RecMem App. F answer prompt (LoCoMo: < 5-6 words)")
RECMEM_LONGMEMEVAL = reader_role(
    "answer_recmem_longmemeval", _RECMEM_ROLE,
    "{context}\n\nCurrent date: {question_date}\nQuestion: {question}\nAnswer:", 0.0,
    "RecMem App. F answer prompt (LongMemEval: no length limit, E.4)", max_tokens=256)


def pick(source: str, category: int | None) -> Role:
    """The LongMemEval prompt (no length limit) on LongMemEval data, the LoCoMo one on any other."""
    return RECMEM_LONGMEMEVAL if source == "longmemeval" else RECMEM_LOCOMO


FAMILY = register_family(ReaderFamily("recmem", pick=pick, temperatures="0",
                                      source="RecMem App. F (Fig. 15-16), E.3"))
