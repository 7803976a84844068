"""Shared memory-writing roles: `episode_summary` and `semantic_facts`, for any system that builds episodes
and semantic facts (the systems' packages call them by name).

episode_summary
    inputs  {"messages": [{"speaker", "text", "date", "turn_id"}], "max_episodes": int}
    output  {"episodes": [{"title", "content", "timestamp", "turn_ids"}]}
semantic_facts
    inputs  {"content": str, "date": str, "speakers": [str], "existing_facts": [str], "turn_ids": [str]}
    output  {"facts": [{"text", "type", "turn_ids"}]}, type in FACT_TYPES

`content` is the text to distil. Lines written "[D1:3] Speaker: text" let facts cite
their turns (otherwise facts get all `turn_ids`); a first line "Summary: ..." gives
context that is already captured (facts come from the other lines).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, field_validator

from memcore.llm.offline.memory_writing import offline_episodes, offline_facts
from memcore.llm.roles import Role, register

FACT_TYPES = ("USER_EVENT", "USER_CONSTRAINT_OR_PREFERENCE", "TIME_ANCHORED_UPDATE", "ENTITY_RELATION")


class Episode(BaseModel):
    """One episode: a dated third-person narrative of a coherent event or topic."""

    title: str = ""
    content: str = ""
    timestamp: str = ""
    turn_ids: list[str] = Field(default_factory=list)

    @field_validator("turn_ids", mode="before")
    @classmethod
    def _ids(cls, v: Any) -> list[str]:
        return [str(x) for x in (v or [])]


class EpisodeSummaryOutput(BaseModel):
    """Output of `episode_summary`."""

    episodes: list[Episode] = Field(min_length=1)  # a summary of turns has at least one episode


class Fact(BaseModel):
    """One atomic, persistent fact with its type and source turns."""

    text: str
    type: str = Field("USER_EVENT", json_schema_extra={"enum": list(FACT_TYPES)})  # the schema's choices
    turn_ids: list[str] = Field(default_factory=list)

    @field_validator("type", mode="before")
    @classmethod
    def _type(cls, v: Any) -> str:
        t = str(v or "").strip().upper().replace(" ", "_")
        return t if t in FACT_TYPES else "USER_EVENT"

    @field_validator("turn_ids", mode="before")
    @classmethod
    def _ids(cls, v: Any) -> list[str]:
        return [str(x) for x in (v or [])]


class SemanticFactsOutput(BaseModel):
    """Output of `semantic_facts`."""

    facts: list[Fact] = Field(default_factory=list)


def _offline_episodes(inputs: dict[str, Any]) -> EpisodeSummaryOutput:
    return EpisodeSummaryOutput(episodes=[Episode(**e) for e in offline_episodes(inputs)])


def _offline_facts(inputs: dict[str, Any]) -> SemanticFactsOutput:
    return SemanticFactsOutput(facts=[Fact(**f) for f in offline_facts(inputs)])


def verbatim_episodes(inputs: dict[str, Any]) -> EpisodeSummaryOutput:
    """One verbatim episode, so nothing is lost when a model reply is unusable."""
    msgs = inputs.get("messages", [])
    text = " ".join(f"{m.get('speaker', '')}: {m.get('text', '')}" for m in msgs)
    return EpisodeSummaryOutput(episodes=[Episode(
        title="(unsummarised)", content=text, timestamp=str(msgs[0].get("date", "")) if msgs else "",
        turn_ids=[str(m.get("turn_id")) for m in msgs])] if msgs else [])


EPISODE_SUMMARY = register(Role(
    name="episode_summary",
    system=(
        "You organise conversation messages into episodic memories. The messages are in time order, each "
        "with its speaker, date and turn id. Write at most {max_episodes} episodes; make one episode per "
        "coherent event or topic and split only clearly unrelated sub-topics. Each episode is a coherent "
        "third-person narrative of how the topic evolved, naming the people (\"On 8 May 2023, Caroline went "
        "to ...\"). Keep concrete details: names, places, numbers, objects, plans. Convert relative times "
        "(\"yesterday\", \"last year\") to absolute dates using the message date. Skip greetings and small "
        "talk. For each episode give: title (a few words), content, timestamp (the date of its first "
        "message) and turn_ids (the turn ids of the messages it covers)."
    ),
    user="Messages:\n{messages}\n\nWrite at most {max_episodes} episodes.",
    output=EpisodeSummaryOutput,
    offline=_offline_episodes,
    fallback=verbatim_episodes,
    max_tokens=900,
    description="messages -> 1..max_episodes dated third-person episodes",
    tags=("construction",),
))

SEMANTIC_FACTS = register(Role(
    name="semantic_facts",
    system=(
        "You extract semantic memory: atomic, persistent facts about the people in a conversation "
        "(identity, relationships, preferences, constraints, habits, plans, notable events). Each fact is one "
        "short third-person sentence naming the person, with relative times converted to absolute dates "
        "using the conversation date {date}. Recover fine-grained details (names, places, numbers, titles) "
        "that a summary would omit. Skip greetings, thanks, questions and emotions without content. Do not "
        "repeat a known fact; when the text changes a known fact, state the new value with its date. "
        "Types: USER_EVENT (something that happened or was done), USER_CONSTRAINT_OR_PREFERENCE (likes, "
        "dislikes, needs, limits, goals), TIME_ANCHORED_UPDATE (a state that changed or a plan, with its "
        "date), ENTITY_RELATION (a relation between a person and another person, pet, place or "
        "organisation). turn_ids: the [turn id] tags of the lines the fact comes from."
    ),
    user=(
        "Speakers:\n{speakers}\nDate: {date}\n\nKnown facts (do not repeat):\n{existing_facts}\n\n"
        "Text:\n{content}\n\nNew facts only."
    ),
    output=SemanticFactsOutput,
    may_be_empty=True,  # turns may hold no persistent fact
    offline=_offline_facts,
    fallback=lambda inputs: SemanticFactsOutput(),
    max_tokens=900,
    description="text -> new typed facts citing their turns",
    tags=("construction",),
))
