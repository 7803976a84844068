"""Each paper's own reader (answer) prompt, and which one a system uses for a question.

Every reader role takes the `answer` role's inputs ({"question", "context", "question_date",
"passages", "speakers"} plus the few extra inputs `reader_for` adds) and answers in free text; the
offline engine answers all of them with the same rule-based reader (memcore.llm.offline.answer):
offline, the prompts differ only in what a real model would be asked.

    family     prompt (role)                                   temperature  source
    short      answer (memcore's shared short-answer prompt)   0            memcore; baselines
    com        answer_com_locomo / answer_com_longmemeval       0 (not set)  CoM App. A.1
    memcot     answer_locomo_standard (category 5: _adversarial)      1.0    MemCoT App. C-D: LoCoMo's and
               / answer_longmemeval_standard                                 LongMemEval's standard prompts
    recmem     answer_recmem_locomo / answer_recmem_longmemeval 0           RecMem App. F (Fig. 15-16), E.3
    xmemory    answer_xmemory_locomo                             0           xMemory App. C.2
    memweaver  answer_memweaver[_temporal|_open_domain|_adversarial]  0.7 (adversarial 0.01)
                                                                             MemWeaver App. B (per category;
                                                                             texts and temperatures from the
                                                                             authors' code, see docs/fidelity.md)

A system's config field `reader` picks the family: "paper" (its own, READERS; baselines: "short"),
"short", or any family name. The choice, the role and the temperature go into the trace (Trace.reader).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from memcore.llm.offline.answer import ABSTAIN, offline_answer
from memcore.llm.roles import Role, TextOutput, register
from memcore.llm.roles.answer import ANSWER

LOCOMO_CATEGORY = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
ABSTENTIONS = (ABSTAIN.lower(), "not mentioned", "unknown")  # how readers' answers that give no answer start
TEMPORAL_HINT = " Use DATE of CONVERSATION to answer with an approximate date."  # LoCoMo's category-2 suffix


def _reader(name: str, system: str, user: str, temperature: float, description: str, max_tokens: int = 96) -> Role:
    return register(Role(
        name=name, system=system, user=user, output=TextOutput, offline=offline_answer,
        fallback=lambda inputs: TextOutput(text="No information available"), json_output=False,
        max_tokens=max_tokens, temperature=temperature, description=description, tags=("reader",)))


# ---------------------------------------------------------------- CoM, App. A.1 (the paper's text)
COM_LOCOMO = _reader(
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

COM_LONGMEMEVAL = _reader(
    "answer_com_longmemeval",
    "You are a helpful expert assistant answering questions from the user based on the provided context.",
    "Your task is to briefly answer the question. You are given the following context from the previous "
    "conversation. If you don't know how to answer the question, abstain from answering.\n"
    "Context: {context}\nQuestion: {question}",
    0.0, "CoM App. A.1, LongMemEval answer prompt", max_tokens=256)

# -------------------------------- MemCoT's responder: LoCoMo's and LongMemEval's standard prompts
_LOCOMO_START = ("Below is a conversation between two people: {speaker_a} and {speaker_b}. The conversation takes "
                 "place over multiple days and the date of each section is mentioned at the beginning of the section.")
LOCOMO_STANDARD = _reader(
    "answer_locomo_standard", _LOCOMO_START,
    "{context}\n\nBased on the above context, write an answer in the form of a short phrase for the following "
    "question. Answer with exact words from the context whenever possible.\n\nQuestion: {question}{hint} Short answer:",
    1.0, "LoCoMo's standard QA prompt (MemCoT's responder on LoCoMo)")

LOCOMO_STANDARD_ADVERSARIAL = _reader(
    "answer_locomo_standard_adversarial", _LOCOMO_START,
    "{context}\n\nBased on the above context, answer the following question. If no information is available to "
    "answer the question, write 'No information available'.\n\nQuestion: {question} Short answer:",
    1.0, "LoCoMo's standard category-5 QA prompt (MemCoT's responder)")

LONGMEMEVAL_STANDARD = _reader(
    "answer_longmemeval_standard", "",
    "I will give you several history chats between you and a user. Please answer the question based on the "
    "relevant chat history.\n\n\nHistory Chats:\n\n{context}\n\nCurrent Date: {question_date}\nQuestion: "
    "{question}\nAnswer:",
    1.0, "LongMemEval's standard reading prompt (MemCoT's responder on LongMemEval)", max_tokens=256)

# ------------------- RecMem, App. F (Fig. 15-16) and E.3: module roles, no double counting, < 5-6 words
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
RECMEM_LOCOMO = _reader(
    "answer_recmem_locomo", _RECMEM_ROLE + "\n8. The answer should be less than 5-6 words.",
    "{context}\n\nQuestion: {question}\nAnswer:", 0.0, "RecMem App. F answer prompt (LoCoMo: < 5-6 words)")
RECMEM_LONGMEMEVAL = _reader(
    "answer_recmem_longmemeval", _RECMEM_ROLE,
    "{context}\n\nCurrent date: {question_date}\nQuestion: {question}\nAnswer:", 0.0,
    "RecMem App. F answer prompt (LongMemEval: no length limit, E.4)", max_tokens=256)

# ----------------------------------------------------------- xMemory, App. C.2 (the paper's text)
XMEMORY_LOCOMO = _reader(
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

# ---------------- MemWeaver, App. B: category-specific prompts (instructions as in the authors' code)
_MW_INTRO = ("Answer using only the information the context supports. If the answer is unclear, answer briefly "
             "and add no unsupported details.")
_MW_CONTEXT = "--- context start ---\n{context}\n--- context end ---\n\n"
MEMWEAVER = _reader(
    "answer_memweaver", _MW_INTRO,
    _MW_CONTEXT + "Answer the question with the shortest possible phrase from the context: if the answer is "
    "there, copy its words. Add no new information and no explanation.\n\nQuestion: {question}\nShort answer:",
    0.7, "MemWeaver App. B: single-hop / multi-hop answer prompt")
MEMWEAVER_TEMPORAL = _reader(
    "answer_memweaver_temporal", _MW_INTRO,
    _MW_CONTEXT + "Use DATE of CONVERSATION to answer with an approximate date. Give the shortest possible "
    "answer, with words from the conversation where possible and no subject.\n\nQuestion: {question}\n"
    "Short answer:", 0.7, "MemWeaver App. B: temporal answer prompt")
MEMWEAVER_OPEN_DOMAIN = _reader(
    "answer_memweaver_open_domain", _MW_INTRO,
    _MW_CONTEXT + "Answer with a short phrase only. If the question is about a likelihood or a hypothetical, "
    "start with one of \"Likely yes\", \"Likely no\", \"Yes\" or \"No\", then add at most a few words from the "
    "context. Do not discuss uncertainty (\"not explicitly stated\", \"cannot be sure\").\n\nQuestion: "
    "{question}\nShort answer:", 0.7, "MemWeaver App. B: open-domain answer prompt")
MEMWEAVER_ADVERSARIAL = _reader(
    "answer_memweaver_adversarial", _MW_INTRO,
    _MW_CONTEXT + "If the context does not support an answer, reply exactly: Not mentioned in the conversation. "
    "Otherwise give the shortest possible answer.\n\nQuestion: {question}\nShort answer:",
    0.01, "MemWeaver App. B: adversarial answer prompt (without the code's two-option form, which shows the "
    "gold answer)")


# ------------------------------------------------------------------------------- selection
READERS: dict[str, str] = {"com": "com", "memcot": "memcot", "recmem": "recmem", "xmemory": "xmemory",
                           "memweaver": "memweaver"}  # system -> its paper's reader family (others: "short")
FAMILIES = ("short", "com", "memcot", "recmem", "xmemory", "memweaver")
READER_CHOICES = ("paper", *FAMILIES)


@dataclass(frozen=True)
class Reader:
    """The reader prompt chosen for one question: role, sampling, extra inputs and where it comes from."""

    family: str
    role: str
    temperature: float
    seed: int | None = None
    choice: str = "paper"
    source: str = ""
    category_source: str = "none"  # where the category that picked the prompt came from: gold | predicted | none
    category: object = None  # the category the prompt was picked by (None when the family ignores it)
    extra: dict[str, Any] = field(default_factory=dict)

    def record(self) -> dict[str, Any]:
        """What the trace keeps (Trace.reader)."""
        return {k: v for k, v in asdict(self).items() if k != "extra"}


CATEGORY_SOURCES = ("gold", "predicted")
CATEGORY_FAMILIES = frozenset({"memcot", "memweaver"})  # families whose LoCoMo prompt or hint depends on the category


def family_of(system: str, choice: str = "paper") -> str:
    """The reader family a system uses under config `reader` = `choice`."""
    return READERS.get(system, "short") if choice == "paper" else choice


def uses_category(system: str, choice: str = "paper", source: str = "") -> bool:
    """Whether the reader picks its prompt or hint by the question's category (LoCoMo-style data only)."""
    return family_of(system, choice) in CATEGORY_FAMILIES and source != "longmemeval"


def check_category_source(value: str) -> None:
    """ValueError naming the valid values when `value` is not a category source."""
    if value not in CATEGORY_SOURCES:
        raise ValueError(f"category_source must be one of {', '.join(CATEGORY_SOURCES)} (gold = the dataset's "
                         f"label, predicted = the question_type role's), not {value!r}")


def check_reader(choice: str) -> None:
    """ValueError naming the valid values when `choice` is not a reader choice."""
    if choice not in READER_CHOICES:
        raise ValueError(f"reader must be one of {', '.join(READER_CHOICES)} (paper = the system's own paper's "
                         f"prompt), not {choice!r}")


def _role(family: str, source: str, category: object) -> Role:
    lme = source == "longmemeval"
    cat = category if isinstance(category, int) else None
    if family == "com":
        return COM_LONGMEMEVAL if lme else COM_LOCOMO
    if family == "memcot":
        if lme:
            return LONGMEMEVAL_STANDARD
        return LOCOMO_STANDARD_ADVERSARIAL if cat == 5 else LOCOMO_STANDARD
    if family == "recmem":
        return RECMEM_LONGMEMEVAL if lme else RECMEM_LOCOMO
    if family == "xmemory":
        return XMEMORY_LOCOMO
    if family == "memweaver":
        return {2: MEMWEAVER_TEMPORAL, 3: MEMWEAVER_OPEN_DOMAIN, 5: MEMWEAVER_ADVERSARIAL}.get(cat or 0, MEMWEAVER)
    return ANSWER


def reader_for(system: str, choice: str = "paper", source: str = "", category: object = None,
               speakers: list[str] | None = None, seed: int | None = None,
               temperature: float | None = None, category_source: str = "gold") -> Reader:
    """The reader for `system` under config `reader` = `choice`, on data from `source` ("locomo",
    "longmemeval", ...) for a question of `category` (LoCoMo ids pick the per-category prompts), which
    came from `category_source` (gold: the dataset's label; predicted: the question_type role's), recorded
    on the reader ("none" when the family ignores the category); `temperature` overrides the prompt's own
    (a system's named setting), `seed` is passed on."""
    check_reader(choice)
    family = family_of(system, choice)
    if not uses_category(system, choice, source):
        category_source = "none"
    r = _role(family, source, category if category_source != "none" else None)
    spk = list(speakers or []) + ["Speaker A", "Speaker B"]
    extra: dict[str, Any] = {"speaker_a": spk[0], "speaker_b": spk[1]}
    if r is LOCOMO_STANDARD:
        extra["hint"] = TEMPORAL_HINT if category == 2 else ""
    return Reader(family=family, role=r.name, temperature=r.temperature if temperature is None else float(temperature),
                  seed=seed, choice=choice, source=r.description, category_source=category_source,
                  category=category if category_source != "none" else None, extra=extra)
