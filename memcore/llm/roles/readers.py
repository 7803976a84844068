"""Reader (answer) prompts: the registry of reader families, and which prompt a system uses for a question.

A reader family is a set of reader roles and the rule that picks one of them for a question's data source
and category (`ReaderFamily`, registered with `register_family`). memcore's own family is "short" (the
shared short-answer prompt, the `answer` role, temperature 0; the baselines' reader). A system whose paper
has its own reader prompts registers their family from its package (memcore/systems/<name>/reader.py,
imported by the package) and names it in its class's `reader_family`; LoCoMo's and LongMemEval's standard
reading prompts (the benchmarks' texts, Maharana et al. 2024; Wu et al. 2025) are kept here for such
families to use.

Every reader role takes the `answer` role's inputs ({"question", "context", "question_date", "passages",
"speakers"} plus the few extra inputs `reader_for` adds) and answers in free text; the offline engine
answers all of them with the same rule-based reader (memcore.llm.offline.answer): offline, the prompts
differ only in what a real model would be asked.

A system's config field `reader` picks the family: "paper" (the family its class declares; baselines:
"short"), or any registered family name. The choice, the role and the temperature go into the trace
(Trace.reader).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from memcore import registry
from memcore.llm.offline.answer import ABSTAIN, offline_answer
from memcore.llm.roles import Role, TextOutput, load_all, register
from memcore.llm.roles.answer import ANSWER

LOCOMO_CATEGORY = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
ABSTENTIONS = (ABSTAIN.lower(), "not mentioned", "unknown")  # how readers' answers that give no answer start
TEMPORAL_HINT = " Use DATE of CONVERSATION to answer with an approximate date."  # LoCoMo's category-2 suffix

# ----------------------------- the benchmarks' standard reading prompts (texts; families register the roles)
LOCOMO_STANDARD_SYSTEM = (
    "Below is a conversation between two people: {speaker_a} and {speaker_b}. The conversation takes place over "
    "multiple days and the date of each section is mentioned at the beginning of the section.")
# LoCoMo's QA prompt; its `{hint}` slot gets TEMPORAL_HINT for a category-2 question (reader_for fills it)
LOCOMO_STANDARD_USER = (
    "{context}\n\nBased on the above context, write an answer in the form of a short phrase for the following "
    "question. Answer with exact words from the context whenever possible.\n\nQuestion: {question}{hint} Short answer:")
LOCOMO_STANDARD_ADVERSARIAL_USER = (
    "{context}\n\nBased on the above context, answer the following question. If no information is available to "
    "answer the question, write 'No information available'.\n\nQuestion: {question} Short answer:")
LONGMEMEVAL_STANDARD_USER = (
    "I will give you several history chats between you and a user. Please answer the question based on the "
    "relevant chat history.\n\n\nHistory Chats:\n\n{context}\n\nCurrent Date: {question_date}\nQuestion: "
    "{question}\nAnswer:")


def reader_role(name: str, system: str, user: str, temperature: float, description: str,
                max_tokens: int = 96) -> Role:
    """Register a reader role (free-text answer, tagged "reader", answered offline by the rule-based reader;
    an unusable reply falls back to "No information available")."""
    return register(Role(
        name=name, system=system, user=user, output=TextOutput, offline=offline_answer,
        fallback=lambda inputs: TextOutput(text="No information available"), json_output=False,
        max_tokens=max_tokens, temperature=temperature, description=description, tags=("reader",)))


@dataclass(frozen=True)
class ReaderFamily:
    """A family of reader prompts and how it picks one for a question.

    - `pick(source, category) -> Role`: the role for data from `source` ("locomo", "longmemeval", ...) and a
      question of LoCoMo `category` (None when the family ignores the category or the data has none).
    - `uses_category`: whether the family picks its prompt or hint by the question's category (on LoCoMo-style
      data; such readers record where the category came from, gold or predicted).
    - `temperatures`, `source`: notes for people (sampling temperatures, where the prompts come from)."""

    name: str
    pick: Callable[[str, int | None], Role]
    uses_category: bool = False
    temperatures: str = ""
    source: str = ""


FAMILY = "reader family"
registry.define(FAMILY, "reader family")
FAMILIES = registry.Table(FAMILY)  # name -> ReaderFamily (a live view of the registry)
_paper_family: list[Callable[[str], str]] = []  # system name -> the family its class declares (set by memcore.systems)


def register_family(family: ReaderFamily) -> ReaderFamily:
    """Add a reader family to the registry (names are unique: another family under a taken name raises
    registry.NameTaken naming both owners; "paper" is the config's word for a system's own, refused)."""
    if family.name == "paper":
        raise ValueError("reader family 'paper' is the reserved word for a system's own paper's family")
    return registry.register(FAMILY, family.name, family, skip=(__name__,))


def unregister_family(name: str) -> ReaderFamily | None:
    """Remove a reader family (tests that register one for a while); returns it."""
    return registry.unregister(FAMILY, name)


def set_paper_families(resolver: Callable[[str], str]) -> None:
    """Have `family_of` ask `resolver(system)` for the family a system's class declares as its paper's (the
    systems registry installs it when imported; memcore.llm never imports memcore.systems)."""
    _paper_family[:] = [resolver]


def family_names() -> list[str]:
    """Every registered reader family ("short" first, then in registration order), after loading the role
    modules and the system packages that register families."""
    load_all()
    return list(FAMILIES)


def reader_choices() -> tuple[str, ...]:
    """The values config `reader` accepts: "paper" and every family name."""
    return ("paper", *family_names())


def check_reader(choice: str) -> None:
    """ValueError naming the valid values when `choice` is not a reader choice."""
    if choice == "paper" or choice in FAMILIES:
        return
    choices = reader_choices()
    if choice not in choices:
        raise ValueError(f"reader must be one of {', '.join(choices)} (paper = the system's own paper's "
                         f"prompt), not {choice!r}")


def get_family(name: str) -> ReaderFamily:
    """The registered reader family `name` (ValueError naming the registered ones when there is none)."""
    if name not in FAMILIES and name not in family_names():
        raise ValueError(f"unknown reader family {name!r}; registered: {', '.join(FAMILIES)}")
    return FAMILIES[name]


def family_of(system: str, choice: str = "paper") -> str:
    """The reader family a system uses under config `reader` = `choice` ("paper": its class's `reader_family`)."""
    if choice != "paper":
        return choice
    return _paper_family[0](system) if _paper_family else "short"


def uses_category(system: str, choice: str = "paper", source: str = "") -> bool:
    """Whether the reader picks its prompt or hint by the question's category (LoCoMo-style data only)."""
    return get_family(family_of(system, choice)).uses_category and source != "longmemeval"


CATEGORY_SOURCES = ("gold", "predicted")


def check_category_source(value: str) -> None:
    """ValueError naming the valid values when `value` is not a category source."""
    if value not in CATEGORY_SOURCES:
        raise ValueError(f"category_source must be one of {', '.join(CATEGORY_SOURCES)} (gold = the dataset's "
                         f"label, predicted = the question_type role's), not {value!r}")


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


def reader_for(system: str, choice: str = "paper", source: str = "", category: object = None,
               speakers: list[str] | None = None, seed: int | None = None,
               temperature: float | None = None, category_source: str = "gold") -> Reader:
    """The reader for `system` under config `reader` = `choice`, on data from `source` ("locomo",
    "longmemeval", ...) for a question of `category` (LoCoMo ids pick the per-category prompts), which
    came from `category_source` (gold: the dataset's label; predicted: the question_type role's), recorded
    on the reader ("none" when the family ignores the category); `temperature` overrides the prompt's own
    (a system's named setting), `seed` is passed on. A prompt with LoCoMo's `{hint}` slot gets
    TEMPORAL_HINT for a category-2 question."""
    check_reader(choice)
    family = family_of(system, choice)
    if not uses_category(system, choice, source):
        category_source = "none"
    cat = category if category_source != "none" else None
    r = get_family(family).pick(source, cat if isinstance(cat, int) else None)
    spk = list(speakers or []) + ["Speaker A", "Speaker B"]
    extra: dict[str, Any] = {"speaker_a": spk[0], "speaker_b": spk[1]}
    if "{hint}" in r.user:
        extra["hint"] = TEMPORAL_HINT if cat == 2 else ""
    return Reader(family=family, role=r.name, temperature=r.temperature if temperature is None else float(temperature),
                  seed=seed, choice=choice, source=r.description, category_source=category_source,
                  category=cat, extra=extra)


SHORT = register_family(ReaderFamily(
    "short", pick=lambda source, category: ANSWER, temperatures="0",
    source="memcore's shared short-answer prompt (the `answer` role); the baselines' reader"))
