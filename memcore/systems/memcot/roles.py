"""MemCoT roles: zoom-in evidence localisation, zoom-out context expansion, and the judge agent.

Prompts follow the paper's released instructions (../shared/papers/002_*.txt, appendix D),
adapted to this workbench: results are shown as "D3:5 [date] Speaker: text" lines and every
role answers with dialogue ids ("D3:5"); 1-based positions in the shown list are accepted too.
Temperatures as in appendix C: the perception agents (zoom-in, zoom-out) 1.0, the judge 0.0 (the
system passes its configured values and seed). The responder is a reader role (reader.py).
"""

from __future__ import annotations

from pydantic import BaseModel, Field, field_validator

from memcore.llm.roles import Role, register
from memcore.systems.memcot.offline import offline_judge, offline_zoom_in, offline_zoom_out

_IDS = "useful ids as dialogue id strings, e.g. [\"D1:3\", \"D4:12\"]"


def _as_list(v: object) -> list:
    if v is None:
        return []
    return list(v) if isinstance(v, list | tuple) else [v]


class ZoomInOutput(BaseModel):
    """Which zoom-in results are useful, and what is still missing."""

    thinking: str = ""
    missing_information: str = ""
    useful_ids: list[str | int] = Field(default_factory=list)

    @field_validator("useful_ids", mode="before")
    @classmethod
    def _list(cls, v: object) -> list:
        return _as_list(v)


class ZoomOutOutput(ZoomInOutput):
    """Which lines of the zoom-out windows are useful."""

    thinking_choice: str = ""


class JudgeOutput(BaseModel):
    """The judge agent's decision: answer now, or which new queries to search."""

    thinking: str = ""
    useful_id: list[str | int] = Field(default_factory=list)
    can_answer: bool  # required: a reply without the decision is not a "no"
    action: str = Field("", json_schema_extra={"enum": ["", "Break", "Delete"]})  # "" when can_answer
    new_queries: list[str] = Field(default_factory=list)

    @field_validator("useful_id", "new_queries", mode="before")
    @classmethod
    def _list(cls, v: object) -> list:
        return _as_list(v)

    @field_validator("action", mode="before")
    @classmethod
    def _action(cls, v: object) -> str:
        s = str(v or "").strip().lower()
        return "Break" if s.startswith("break") else "Delete" if s.startswith("delete") else ""


_HEADER = ("Question: {query}\nCurrent search queries:\n{queries}\n"
           "Known information (short-term memory):\n{known}\nFailed queries (do not repeat them):\n{failed_text}\n")

ZOOM_IN = register(Role(
    name="memcot_zoom_in",
    system=(
        "You locate evidence for a question in the retrieved turns of a long conversation between two people. "
        "Identify the useful results by constraint matching.\n"
        "1. Temporal check: if the query mentions a time or duration, any result mentioning a matching time "
        "or duration is highly relevant.\n"
        "2. Descriptive matches: if the query asks for a specific name (a place, a person) but a result only "
        "gives a generic description (\"my place\", \"that person\"), mark it useful: it confirms the context.\n"
        "3. Partial information: do not discard a result because it lacks the final answer; if it gives the "
        "background or cause of the queried event, it is useful.\n"
        f"Fields: thinking (brief, say why the ids were chosen), missing_information (what is still missing), "
        f"useful_ids ({_IDS})."
    ),
    user=_HEADER + "Retrieval results (id [date] speaker: text):\n{results}\n",
    output=ZoomInOutput,
    offline=lambda inputs: ZoomInOutput(**offline_zoom_in(inputs)),
    max_tokens=400,
    temperature=1.0,
    description="MemCoT zoom-in: useful retrieved turns + missing information",
    tags=("memcot",),
))

ZOOM_OUT = register(Role(
    name="memcot_zoom_out",
    system=(
        "You read context windows around evidence found in a long conversation and pick the turns that help "
        "answer the question.\n"
        "1. Temporal check: any turn mentioning a time or duration matching the query is highly relevant.\n"
        "2. Descriptive matches: a generic description of the asked-for name is useful.\n"
        "3. Contextual clues: surrounding turns may give context, causes or time references that help.\n"
        f"Fields: thinking, thinking_choice (why these ids), missing_information, useful_ids ({_IDS})."
    ),
    user=_HEADER + "Context windows (id [date] speaker: text):\n{windows}\n",
    output=ZoomOutOutput,
    offline=lambda inputs: ZoomOutOutput(**offline_zoom_out(inputs)),
    max_tokens=400,
    temperature=1.0,
    description="MemCoT zoom-out: useful turns in the +-W windows",
    tags=("memcot",),
))

JUDGE = register(Role(
    name="memcot_judge",
    system=(
        "You are the judge agent of an iterative memory search over a long conversation. Decide whether the "
        "short-term memory holds enough to answer the question; if not, write new search queries.\n"
        "Fields: thinking; useful_id (dialogue ids: if can_answer, those supporting the answer, else those "
        "with relevant partial information); can_answer (true/false); action (one of: \"Break\" - break the "
        "last query into shorter, more exact sub-queries, e.g. \"When Tom arrived at Shanghai 3 years ago\" "
        "-> [\"Tom arrived at Shanghai\", \"3 years ago\"]; \"Delete\" - if the question is [Q_A, Q_B] and the "
        "short-term memory already resolves Q_A, search only for Q_B); new_queries (if can_answer is false, "
        "at most {queries_num} focused queries for the missing information; never repeat a failed query)."
    ),
    user=("Question: {query}\nLast queries:\n{queries}\nShort-term memory (picked turns):\n{short_memory}\n"
          "Retrieved this step:\n{conv_memory}\nFailed queries (do not repeat them):\n{failed_text}\n{retry_note}"),
    output=JudgeOutput,
    offline=lambda inputs: JudgeOutput(**offline_judge(inputs)),
    max_tokens=400,
    description="MemCoT judge: can answer? else Break/Delete into new queries",
    tags=("memcot",),
))
