"""RecMem's own roles (paper App. F, Fig. 6-14; the key instructions as in the authors' prompts), at the
paper's temperature 0 (Sec. 4):

recmem_merge     LLM_merge (Eq. 6): does a new exchange continue the nearest episode; the merged episode
    inputs  {"title", "content", "timestamp",                       the nearest episode
             "unit": "[D1:3] (date) Speaker: text" lines,          the new exchange
             "messages": [{"speaker", "text", "date", "turn_id"}], "speakers": [str], "similarity": float}
    output  {"merge": bool, "reason": str, "title": str, "content": str}
recmem_episodes  LLM_epi (Eq. 7): a recurring cluster, time-sorted -> 1-3 episodes
    inputs  {"messages": [{"speaker", "text", "date", "turn_id"}], "max_episodes": int}
    output  {"episodes": [{"title", "content", "timestamp", "turn_ids"}]}
recmem_refine    LLM_refine (Eq. 8-9): detail recovery + fact maintenance against the top-k known facts
    inputs  {"episode": str, "date": str, "messages": [...], "speakers": [str], "known_facts": [str],
             "turn_ids": [str], "mode": "update" | "append", "maintenance": str (the rule for that mode)}
    output  {"facts": [{"text", "type", "turn_ids"}], "updates": [{"fact": int, "text", "type", "turn_ids"}]}
    (`fact`: the 1-based number of the known fact that changed; "append" mode asks for no updates)
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, field_validator

from memcore.llm.roles import Role, register
from memcore.llm.roles.memory_writing import Episode, EpisodeSummaryOutput, Fact, verbatim_episodes
from memcore.systems.recmem.offline import offline_merge, offline_recmem_episodes, offline_refine


class MergeOutput(BaseModel):
    """The merge decision and, on yes, the rewritten episode."""

    merge: bool  # required: a reply without the decision is not a "no"
    reason: str = ""
    title: str = ""
    content: str = ""


class FactUpdate(Fact):
    """A known fact (1-based number in the known list) rewritten with its new value."""

    fact: int = 0

    @field_validator("fact", mode="before")
    @classmethod
    def _num(cls, v: Any) -> int:
        try:
            return int(str(v).strip().strip("[]#."))
        except ValueError:
            return 0


class RefineOutput(BaseModel):
    """New facts, and updates of known facts."""

    facts: list[Fact] = Field(default_factory=list)
    updates: list[FactUpdate] = Field(default_factory=list)


_TIME = ("Keep explicit dates as they are. Rewrite vague relative times (\"yesterday\", \"last week\", \"next "
         "month\") into expressions anchored to a date of the input (\"the day before 2 January 2024\", \"two days "
         "after 10 March 2025\"); no calendar arithmetic is needed, but never leave an unanchored relative time.")

RECMEM_MERGE = register(Role(
    name="recmem_merge",
    system=(
        "You are the episodic memory merger of a long-term memory system. You get exactly two inputs: a NEW "
        "memory piece (a recent exchange) and a PAST episodic memory. Be user-centric: what matters are the real "
        "speakers' goals, plans, decisions, constraints and feelings; fictional, hypothetical or example stories "
        "are background.\n"
        "Decide whether both describe the same ongoing topic or episode for the same people: the new piece adds "
        "follow-up details, corrections or outcomes to the past one rather than starting a new topic, and a reader "
        "would call them parts of one story. Shared domain words or similar examples alone are not enough; a "
        "new piece that is only generic advice or an example from the assistant does not merge unless it "
        "continues the same concrete situation. If uncertain, do not merge.\n"
        "If they merge, write ONE coherent paragraph: keep the important details of both, in temporal order, "
        "with the relations explicit (\"later\", \"afterwards\", \"as a result\"), compact, inventing nothing. "
        + _TIME + "\nIf they do not merge, set merge to false and leave title and content empty. Give a one-line "
        "reason."
    ),
    user=(
        "Speakers:\n{speakers}\n\n<Past Memory Piece> {title} ({timestamp})\n{content}\n\n<New Memory Piece>\n"
        "{unit}\n\nDo both describe the same ongoing topic or episode? If yes, return the merged episode."
    ),
    output=MergeOutput,
    offline=lambda inputs: MergeOutput(**offline_merge(inputs)),
    fallback=lambda inputs: MergeOutput(merge=False, reason="unusable reply: not merged"),
    max_tokens=900,
    description="merge-first: does a new exchange belong to the nearest episode; merged text",
    tags=("recmem",),
))

RECMEM_EPISODES = register(Role(
    name="recmem_episodes",
    system=(
        "You are the episodic memory constructor of a long-term memory system. The messages below recur on one "
        "broad theme but may hold several sub-topics over days or weeks; each carries its turn id, date and "
        "speaker. Organise them inductively, not as a plain summary:\n"
        "1. Group the messages into topic threads (the same ongoing goal, project, problem or situation of the "
        "speakers, even days apart); ignore one-off fictional or hypothetical stories.\n"
        "2. Write at most {max_episodes} episodes (prefer 1-3; no tiny episodes), one per thread, each telling "
        "chronologically how the situation evolved (initially, later, eventually): plans, decisions, changes, "
        "outcomes, and how the speakers' plans, preferences and feelings changed. An episode should draw on at "
        "least two message dates when it can.\n"
        "3. A message's date is when it was said, not always when the event happened. " + _TIME + "\n"
        "4. Be user-centric and compact: summarise long stories or explanations in a phrase. A separate "
        "semantic extractor keeps the atomic facts.\n"
        "5. Each episode is a short paragraph (3 to 6 sentences) in neutral third person naming the speakers.\n"
        "For each episode give: title (a few words), content, timestamp (the date of its first message) and "
        "turn_ids (the turn ids of the messages it covers)."
    ),
    user="Messages:\n{messages}\n\nWrite at most {max_episodes} episodes.",
    output=EpisodeSummaryOutput,
    offline=lambda inputs: EpisodeSummaryOutput(episodes=[Episode(**e) for e in offline_recmem_episodes(inputs)]),
    fallback=verbatim_episodes,
    max_tokens=900,
    description="recurring cluster -> 1..max_episodes episodic narratives (RecMem Eq. 7)",
    tags=("recmem",),
))

MAINTENANCE = {
    "update": ("Fact maintenance: when the raw text changes a known fact (a new preference, role, plan, "
               "relationship or value), do not add a duplicate: give it under `updates` with `fact` = that known "
               "fact's number and the new text stating the change with its date."),
    "append": ("When a fact refines, updates or contradicts a known fact, keep it as a new TIME_ANCHORED_UPDATE "
               "fact that states the change (new value, old value if known, date); give no updates."),
}

RECMEM_REFINE = register(Role(
    name="recmem_refine",
    system=(
        "You are the semantic memory extractor of a long-term memory system. Inputs: the raw reference R (the "
        "original messages, each tagged [turn id] (date) Speaker), the episodic memory E written from R, and "
        "the numbered old semantic memories S about the same topic.\n"
        "Extract NEW, high-utility facts that will help answer future questions about the speakers. Above all, "
        "recover concrete details of R that E leaves out or compresses (names, places, numbers, titles).\n"
        "Principles: user-centric (goals, preferences, constraints, decisions, actions, recurring plans); "
        "temporally grounded (an explicit date anchor for events and changes; never an unanchored relative "
        "time); compact: fewer than 10 facts, fewer and better beats many.\n"
        "Types: USER_EVENT (something asked, attended, started, stopped or decided, with its date); "
        "USER_CONSTRAINT_OR_PREFERENCE (a fairly stable preference, constraint or recurring plan); "
        "TIME_ANCHORED_UPDATE (a change in behaviour, preference, tool, role, budget or relationship: the new "
        "value, the old one if known, and when); ENTITY_RELATION (a specific relation between named entities "
        "that matters for the speakers, not general world knowledge).\n"
        "Novelty: a fact that means the same as an item of S is not new, whatever the wording. Each fact is one "
        "self-contained sentence (no ambiguous pronouns), neutral, supported by E, R or S.\n{maintenance}\n"
        "turn_ids: the [turn id] tags of the lines a fact comes from."
    ),
    user=("Speakers:\n{speakers}\nDate: {date}\n\nEpisodic Memory:\n{episode}\n\nRaw Reference:\n{raw}\n\n"
          "Old Semantic Memories:\n{known_facts}\n"),
    output=RefineOutput,
    may_be_empty=True,  # nothing new to refine
    offline=lambda inputs: RefineOutput(**offline_refine(inputs)),
    fallback=lambda inputs: RefineOutput(),
    max_tokens=900,
    description="semantic refinement: detail recovery + fact maintenance (RecMem Eq. 8-9)",
    tags=("recmem",),
))

# The Direct Extraction ablation (Sec. 4.3): the refine prompt without "the refinement-specific guidance tied to
# episodic summaries" (no episode E, no "details E leaves out"), "the other parts intact".
RECMEM_EXTRACT = register(Role(
    name="recmem_extract",
    system=RECMEM_REFINE.system.replace(
        ", the episodic memory E written from R, and the numbered", " and the numbered").replace(
        " that E leaves out or compresses", "").replace("supported by E, R or S", "supported by R or S"),
    user=RECMEM_REFINE.user.replace("Episodic Memory:\n{episode}\n\n", ""),
    output=RefineOutput,
    may_be_empty=True,
    offline=lambda inputs: RefineOutput(**offline_refine(inputs)),
    fallback=lambda inputs: RefineOutput(),
    max_tokens=900,
    description="Direct Extraction ablation (RecMem Sec. 4.3): semantic facts from the raw turns, no episode",
    tags=("recmem",),
))


def merge_inputs(title: str, content: str, timestamp: str, messages: list[dict[str, Any]],
                 speakers: list[str], similarity: float) -> dict[str, Any]:
    """The merge role's inputs for an episode and an exchange's messages."""
    unit = "\n".join(f"[{m['turn_id']}] ({m.get('date', '')}) {m['speaker']}: {m['text']}" for m in messages)
    return {"title": title, "content": content, "timestamp": timestamp, "unit": unit, "messages": messages,
            "speakers": speakers, "similarity": round(float(similarity), 4)}


def refine_inputs(episode: str, messages: list[dict[str, Any]], speakers: list[str], known: list[str],
                  mode: str) -> dict[str, Any]:
    """The refine role's inputs: episode E, raw messages R, known facts S (numbered in the prompt)."""
    raw = "\n".join(f"[{m['turn_id']}] ({m.get('date', '')}) {m['speaker']}: {m['text']}" for m in messages)
    return {"episode": episode, "raw": raw, "messages": messages, "speakers": speakers,
            "date": messages[0].get("date", "") if messages else "", "known_facts": list(known),
            "turn_ids": [m["turn_id"] for m in messages], "mode": mode, "maintenance": MAINTENANCE[mode]}
