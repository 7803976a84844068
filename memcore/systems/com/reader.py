"""CoM's reader prompts (the paper's App. A.1 text): the "com" reader family.

    prompt (role)                                      temperature  source
    answer_com_locomo / answer_com_longmemeval         0 (not set)  CoM App. A.1 (LoCoMo / LongMemEval)

Registered with memcore.llm.roles.readers when this package is imported; CoMSystem.reader_family names it.
"""

from __future__ import annotations

from memcore.llm.roles import Role
from memcore.llm.roles.readers import ReaderFamily, reader_role, register_family

COM_LOCOMO = reader_role(
    "answer_com_locomo",
    "You are a Memory-Based Question Answering Agent. Answer questions based on the provided memories.\n"
    "<Instructions>\n"
    "1. For time-related questions (with words like \"when\"): Step 1: Identify the Timestamp of the memory. "
    "Step 2: Identify any relative time reference. Step 3: Calculate the EXACT ABSOLUTE date. Example 1: "
    "[Timestamp: 4 May 2022] + \"last year\" -> Answer: \"last year before 4 May 2022\"\n"
    "2. Extract specific details: Use exact names, dates, places from memories.\n"
    "3. Be comprehensive for list questions: List ALL activities found.\n"
    "4. Contradictions: If memories conflict, use the most recent one.\n"
    "</Instructions>",
    "<Memories>\n{context}\n</Memories>\n<Question>{question}</Question>\nAnswer:",
    0.0, "CoM App. A.1, LoCoMo answer prompt")

COM_LONGMEMEVAL = reader_role(
    "answer_com_longmemeval",
    "You are a helpful expert assistant answering questions from the user based on the provided context.",
    "Your task is to briefly answer the question. You are given the following context from the previous "
    "conversation. If you don't know how to answer the question, abstain from answering.\n"
    "Context: {context}\nQuestion: {question}",
    0.0, "CoM App. A.1, LongMemEval answer prompt", max_tokens=256)


def pick(source: str, category: int | None) -> Role:
    """CoM's LongMemEval prompt on LongMemEval data, its LoCoMo prompt on any other."""
    return COM_LONGMEMEVAL if source == "longmemeval" else COM_LOCOMO


FAMILY = register_family(ReaderFamily("com", pick=pick, temperatures="0 (not set by the paper)",
                                      source="CoM App. A.1"))
