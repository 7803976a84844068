"""MemWeaver roles (paper 004, Appendix C): graph writing, session review, experience memory.

mw_entities    inputs {dialogue, speaker, text, speakers}              -> {entities: [str]}
mw_relations   inputs {dialogue, entities, speaker, text, speakers}    -> {relations: [{source, target, relation, condition}]}
mw_time        inputs {dialogue, relation, date, text}                 -> {absolute_time}
mw_review      inputs {date, dialogue: ["D1:3 | Ana: text"], entities, relations: [{id, source, relation,
               target, time, condition, turn}]}                        -> {add, update, deny}
mw_coherence   inputs {turns: ["Speaker: text"]}                       -> {is_coherent, label, reason}
mw_router      inputs {turn, candidates: [{cluster_id, center_text, samples}]} -> {cluster_id | "none", reason}
mw_experience  inputs {turns: ["[0] Speaker=Ana: text"]}               -> {center_text, experiences: [{type,
               content (<= 120 chars), source_indices}]}
mw_select      inputs {question, triples: ["r12 | src | rel | tgt | time: ..."]} -> {selected: [id], reason}

The paper's Appendix C lists the templates of entity extraction, relation extraction, temporal
normalisation, knowledge-graph verification and experience extraction, but their bodies are
figures that the paper's text does not carry; the coherence check, the router (Eq. 9) and the
triple selector (Eq. 10) have no template in the paper at all. The templates here are written
from the paper's Sections 4.2-4.4 (what each step must decide: e.g. experiences "explicitly
supported by multiple dialogue units", small talk excluded; the review's add / update / deny) and
the parameter notes in papers/README.md. The paper states no decoding temperature for
construction ("performed deterministically given the underlying LLM outputs"): every role runs
at the client's temperature 0.

Systems pass a real model's inputs; the offline rules compute their own cues from them (cosines with the
runtime's embedder, the relation's sentence, the turn records). One exception is left: the router's
cosines to the cluster centroids (`_sims`), which no input a real model gets can give.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from memcore.llm.roles import Role, register
from memcore.systems.memweaver import offline as off
from memcore.systems.memweaver.offline_extract import offline_entities, offline_relations
from memcore.systems.memweaver.offline_time import offline_time

_JSON_NOTE = "Output STRICT JSON only."


class EntitiesOutput(BaseModel):
    """Entity names found in one dialogue unit."""

    entities: list[str] = Field(default_factory=list)

    @field_validator("entities", mode="before")
    @classmethod
    def _names(cls, v: Any) -> list[str]:
        return [str(x).strip() for x in (v or []) if str(x).strip()]


class RelationSpec(BaseModel):
    """One extracted relation between two listed entities."""

    source: str
    target: str
    relation: str
    condition: str = ""


class RelationsOutput(BaseModel):
    """Relations of one dialogue unit."""

    relations: list[RelationSpec] = Field(default_factory=list)


class TimeOutput(BaseModel):
    """Absolute time of one relation: "20 May, 2022", "May, 2022", "2022" or ""."""

    absolute_time: str = ""


class ReviewAdd(BaseModel):
    source: str
    relation: str
    target: str
    time: str = ""
    condition: str = ""


class ReviewUpdate(BaseModel):
    relation_id: str
    relation: str = ""
    time: str | None = None
    condition: str | None = None
    reason: str = ""


class ReviewDeny(BaseModel):
    relation_id: str
    reason: str = ""


class ReviewOutput(BaseModel):
    """Session-level review: relations to add, update and deny."""

    add: list[ReviewAdd] = Field(default_factory=list)
    update: list[ReviewUpdate] = Field(default_factory=list)
    deny: list[ReviewDeny] = Field(default_factory=list)


class CoherenceOutput(BaseModel):
    """Whether a candidate cluster is about one topic, with a short theme label."""

    is_coherent: bool  # required: a reply without the decision is not a "no"
    label: str = ""
    reason: str = ""


class RouterOutput(BaseModel):
    """The cluster a dialogue unit belongs to, or "none"."""

    cluster_id: str  # required: "none" must be said, not defaulted
    reason: str = ""


class ExperienceSpec(BaseModel):
    """One reusable experience item (content cut to 120 characters)."""

    type: Literal["fact", "strategy", "preference"] = "fact"
    content: str
    source_indices: list[int] = Field(default_factory=list)

    @field_validator("type", mode="before")
    @classmethod
    def _type(cls, v: Any) -> str:
        t = str(v or "").strip().lower()
        return t if t in ("fact", "strategy", "preference") else "fact"

    @field_validator("content", mode="before")
    @classmethod
    def _content(cls, v: Any) -> str:
        return str(v or "").strip()[:120]


class SelectOutput(BaseModel):
    """Ids of the candidate triples the selector keeps (Eq. 10)."""

    selected: list[str] = Field(default_factory=list)
    reason: str = ""

    @field_validator("selected", mode="before")
    @classmethod
    def _ids(cls, v: Any) -> list[str]:
        return [str(x).strip() for x in (v or []) if str(x).strip()]


class ExperienceOutput(BaseModel):
    """Experiences induced from one cluster, and its theme (center_text)."""

    center_text: str = ""
    experiences: list[ExperienceSpec] = Field(default_factory=list)


register(Role(
    name="mw_entities",
    may_be_empty=True,
    system=("You are an entity extraction assistant. Extract concise entity names that appear in the dialogue "
            "snippet (people, locations, organizations, events, objects, etc.). Do not invent entities; prefer a "
            "canonical form; keep combined phrases intact; return a de-duplicated list. Do not extract unclear "
            "entities (\"he\", \"that\", \"there\") or time/date expressions (\"yesterday\", \"next month\"). "
            + _JSON_NOTE),
    user="Dialogue:\n{dialogue}",
    output=EntitiesOutput,
    offline=lambda i: EntitiesOutput(**offline_entities(i)),
    max_tokens=256,
    description="MemWeaver graph writing, stage 1: entities of one turn",
    tags=("memweaver", "construction"),
))

register(Role(
    name="mw_relations",
    may_be_empty=True,
    system=("You are a relation extraction assistant. Extract meaningful relations between entities as triples "
            "from the dialogue snippet. Use ONLY entities from the provided list; each relation must be directly "
            "supported by the text; `relation` is a short lowercase predicate phrase; add a brief `condition` only "
            "if the relation holds under a condition. Do not extract time or location as relations, nor vague "
            "relations (\"is related to\", \"is associated with\"). " + _JSON_NOTE),
    user="Dialogue:\n{dialogue}\n\nDetected entities:\n{entities}",
    output=RelationsOutput,
    offline=lambda i: RelationsOutput(**offline_relations(i)),
    max_tokens=512,
    description="MemWeaver graph writing, stage 2: relations under entity constraints",
    tags=("memweaver", "construction"),
))

register(Role(
    name="mw_time",
    may_be_empty=True,
    system=("You are a time expression extractor. Give the ABSOLUTE time when the event of the given relation "
            "occurred or is scheduled, resolving relative expressions (\"yesterday\", \"last week\") against the "
            "dialogue date. Output exactly one of: day \"20 May, 2022\", month \"May, 2022\", year \"2022\"; "
            "never a relative or vague expression; \"\" when the dialogue gives no usable time for the relation. "
            + _JSON_NOTE),
    user="Dialogue date: {date}\nDialogue:\n{dialogue}\n\nRelation: {relation}",
    output=TimeOutput,
    offline=lambda i: TimeOutput(**offline_time(i)),
    max_tokens=64,
    description="MemWeaver graph writing, stage 3: normalised absolute time per relation",
    tags=("memweaver", "construction"),
))

register(Role(
    name="mw_review",
    may_be_empty=True,
    system=("You are a knowledge graph review assistant. Review the graph extracted from one dialogue session. "
            "ADD important relations clearly expressed in the dialogue but missing from the list; UPDATE existing "
            "relations whose predicate, time or condition is wrong or incomplete; DENY relations that are not "
            "supported or are contradicted by the dialogue (they are removed). Refer to relations by id and give "
            "a short reason for each update and denial. " + _JSON_NOTE),
    user=("The dialogue happened at: {date}\nDialogue (turn id | speaker: text):\n{dialogue}\n----------------\n"
          "Entities:\n{entities}\n----------------\nRelations (JSON, with id and source turn):\n{relations}"),
    output=ReviewOutput,
    offline=lambda i: ReviewOutput(**off.offline_review(i)),
    offline_note="similarity thresholds instead of judgement",
    max_tokens=1024,
    description="MemWeaver session-level review: add / update / deny",
    tags=("memweaver", "construction"),
))

register(Role(
    name="mw_coherence",
    system=("You are validating whether a group of dialogue turns is about one topic. Decide whether they form one "
            "coherent cluster (one theme, not a mix of unrelated topics); if they do, give a short theme summary "
            "(label) that will serve as the cluster's anchor for routing new turns. " + _JSON_NOTE),
    user="Turns:\n{turns}",
    output=CoherenceOutput,
    offline=lambda i, emb: CoherenceOutput(**off.offline_coherence(i, emb)),
    offline_embedder=True,
    offline_note="similarity threshold instead of judgement",
    fallback=lambda i: CoherenceOutput(is_coherent=False, reason="fallback: unusable reply"),
    max_tokens=128,
    description="MemWeaver experience memory: coherence check of a candidate cluster",
    tags=("memweaver", "construction"),
))

register(Role(
    name="mw_router",
    system=("You route a new dialogue turn to one of several topic clusters. Each candidate has an id, a theme and "
            "sample turns. Reply with the id of the cluster the turn clearly belongs to, or \"none\" if it fits "
            "none of them. " + _JSON_NOTE),
    user="New turn:\n{turn}\n\nCandidate clusters:\n{candidates}",
    output=RouterOutput,
    offline=lambda i: RouterOutput(**off.offline_router(i)),
    offline_note="similarity threshold instead of judgement",
    max_tokens=64,
    description="MemWeaver experience memory: LLM router for mid-similarity turns",
    tags=("memweaver", "construction"),
))

register(Role(
    name="mw_experience",
    may_be_empty=True,
    system=("You extract reusable experiences from short dialogues of one semantic cluster: recurring signals "
            "such as preferences, tendencies and recurring intents that emerge only when several interactions are "
            "considered together. Output a SMALL set of experiences. Each experience MUST be explicitly supported "
            "by multiple dialogue turns: cite the indices of at least two turns that express it "
            "(source_indices); drop anything only one turn says. Exclude small talk (greetings, thanks, "
            "compliments, reactions), vague life advice and generic statements, and do not repeat near-duplicate "
            "items. Types: fact (a stable fact), strategy (a general reusable approach; only when it clearly "
            "generalises), preference (a stable interest or habit). content <= 120 characters, third person with "
            "names. Also give center_text: one sentence summarising the cluster's theme. " + _JSON_NOTE),
    user="Dialogue samples:\n{turns}",
    output=ExperienceOutput,
    offline=lambda i: ExperienceOutput(**off.offline_experiences(i)),
    offline_note="extractive induction",
    max_tokens=512,
    description="MemWeaver experience memory: induction (and theme) for one cluster",
    tags=("memweaver", "construction"),
))

register(Role(
    name="mw_select",
    may_be_empty=True,
    system=("You select knowledge-graph triples for answering a question about a long conversation. Each candidate "
            "is a line \"id | source | relation | target | time | condition\". Return the ids of the triples that "
            "are useful to answer the question, directly or as one step of a multi-hop chain (including triples "
            "whose time answers a when-question); leave out triples that do not bear on the question. Copy the "
            "ids exactly; do not invent triples. " + _JSON_NOTE),
    user="Question: {question}\n\nCandidate triples:\n{triples}",
    output=SelectOutput,
    offline=lambda i, emb: SelectOutput(**off.offline_select(i, emb)),
    offline_embedder=True,
    fallback=lambda i: SelectOutput(selected=[str(t).split(" | ", 1)[0] for t in i.get("triples", [])],
                                    reason="fallback: unusable reply, every candidate kept"),
    max_tokens=512,
    description="MemWeaver retrieval: the LLM triple selector over the filtered candidates (Eq. 10)",
    tags=("memweaver", "retrieval"),
))
