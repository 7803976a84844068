"""MemWeaver (paper 004): temporal knowledge graph + experience clusters + passages, dual-channel retrieval.

Per turn (unit = one turn, timestamp = session date): a passage node "[date] Speaker: text";
entities (`mw_entities`), resolved by exact alias then SequenceMatcher ratio >= 0.7, linked to
the passage by `contains` edges; relations between them (`mw_relations`); one absolute time
per relation (`mw_time`); duplicate (src, rel, tgt, time) dropped. At each session's last
turn: the session review (`mw_review`: add / update / deny), a dedup pass, and the session's
experience window. Experience memory: .experience. Retrieval: .retrieval. Settings: .config.
The graph lives in networkx (.graph) and is rebuilt from the stored items on restore.

Vectors: passages reuse the shared turn embedding; entities carry the vector of the turn that
first mentions them (entities are matched by name, never by vector, and embedding ~500 names
per conversation cost ~40% of construction time); relations ("src rel tgt") and experiences
are embedded in one batched call per session.
"""

from __future__ import annotations

from typing import Any

from memcore.systems import register_system
from memcore.systems.base import BaseSystem
from memcore.systems.memweaver import presets as _presets  # noqa: F401  (registers this system's ablations, sweeps)
from memcore.systems.memweaver import reader as _reader  # noqa: F401  (registers its reader family)
from memcore.systems.memweaver import retrieval
from memcore.systems.memweaver import roles as _roles  # noqa: F401  (registers this system's LLM roles)
from memcore.systems.memweaver.config import MemWeaverConfig
from memcore.systems.memweaver.experience import ExperienceMemory
from memcore.systems.memweaver.fidelity import FIDELITY
from memcore.systems.memweaver.graph import GraphMemory, Resolution, norm_name, review_session
from memcore.systems.memweaver.stats import MECHANISM
from memcore.types import MemoryItem, Question, Trace, Turn


@register_system
class MemWeaverSystem(BaseSystem):
    """Tri-layer memory: graph (entities, relations), passages, experiences; dual-channel retrieval."""

    name = "memweaver"
    rank = 80
    title = "MemWeaver"
    paper = "004"
    reader_family = "memweaver"  # its paper's reader prompts (reader.py)
    config_class = MemWeaverConfig
    mechanism = MECHANISM
    fidelity = FIDELITY
    kinds = ("entity", "relation", "passage", "experience")

    def __init__(self, *a: Any, **kw: Any) -> None:
        super().__init__(*a, **kw)
        self.graph = GraphMemory()
        self.exp = ExperienceMemory(self, self.config)
        self.session_relations: list[str] = []
        self._turns = {t.turn_id: t for t in self.conv.turns}
        self._unembedded: list[str] = []
        self._resolution: dict[str, dict[str, Any]] = {}
        self._last_passage = ""

    # --------------------------------------------------------------- helpers
    def turn_line(self, turn_id: str) -> str:
        """"Speaker: text" of a turn."""
        t = self._turns[turn_id]
        return t.embed_text

    def turn_unit(self, turn_id: str) -> dict[str, str]:
        """A turn as a record for the experience roles."""
        t = self._turns[turn_id]
        return {"id": turn_id, "speaker": t.speaker, "text": t.content, "date": t.session_date}

    def lazy_item(self, kind: str, text: str, sources: list[str], turn_ids: list[str], **md: Any) -> MemoryItem:
        """Create an item now and embed it at the next batch flush (or at commit, if that comes first)."""
        item = self.new_item(kind, text, sources, turn_ids, embed=False, **md)
        self._unembedded.append(item.id)
        return item

    def defer_embedding(self, item_id: str) -> None:
        """(Re-)embed an item at the next batch flush (its text changed)."""
        self._unembedded.append(item_id)

    def flush_embeddings(self) -> int:
        """Embed every item still without a vector in batches (one model call per 64 texts)."""
        items = [self.memory.get(i) for i in dict.fromkeys(self._unembedded) if i in self.memory]
        todo = [it for it in items if it.embedding is None]
        for it in items:  # embedded by a commit in between: register the vector, keep it clean
            if it.embedding is not None:
                try:
                    self.memory.vector(it.id)
                except KeyError:
                    self.memory.put(it, dirty=False)
        self._unembedded = []
        for i in range(0, len(todo), 64):
            chunk = todo[i:i + 64]
            for it, vec in zip(chunk, self.embedder.embed([it.text for it in chunk]), strict=True):
                self.memory.put(it, vec)
        return len(todo)

    # ------------------------------------------------------------------ turn
    def on_turn(self, turn: Turn) -> None:
        session_end = self.session_end  # the ingest driver's (TurnContext)
        self.write_graph(turn)
        self.exp.add_turn(turn.turn_id, session_end)
        if session_end:
            self.end_session(turn)
        if session_end or len(self._unembedded) >= 256:
            self.flush_embeddings()

    def write_graph(self, turn: Turn) -> None:
        """Passage node, entities, relations and their times for one turn."""
        passage = self.new_item("passage", turn.render(), [turn.turn_id], [turn.turn_id],
                                vector=self.turn_vector(turn.turn_id), speaker=turn.speaker, session=turn.session,
                                turn=turn.turn_id, date=turn.session_date, entities=[])
        self._last_passage = passage.id
        self.emit("created", [passage], "passage node for the turn (vector = the shared turn embedding)")
        self.issue_lookahead(turn)
        res, names, rres, times = self.take_ahead(turn.turn_id, extract_turn, self.extraction_inputs(turn))
        ids = self.resolve_entities(names, passage)
        passage.metadata["entities"] = list(dict.fromkeys(ids.values()))
        self.graph.link(passage.id, "passage", passage.metadata["entities"], label=turn.turn_id)
        if passage.metadata["entities"]:
            self.emit("linked", [passage.id, *passage.metadata["entities"]],
                      f"contains edges from the passage to {len(passage.metadata['entities'])} entities "
                      "(names resolved by exact alias, string similarity, or as new nodes)",
                      item_kind="passage", resolution=self._resolution, error=res.error)
        if rres is None:
            return
        specs = []
        for r, tres in zip(rres.output.relations, times, strict=True):
            src, tgt = ids.get(norm_name(r.source)), ids.get(norm_name(r.target))
            if tres is None or src is None or tgt is None or src == tgt:
                continue
            specs.append((src, r.relation.strip(), tgt, tres.output.absolute_time.strip(), r.condition.strip()))
        self.add_relations(specs, turn, passage.id, origin="extracted")

    def extraction_inputs(self, turn: Turn) -> dict[str, Any]:
        """The inputs of a turn's extraction roles (they depend on the turn alone)."""
        dialogue = f"Date/Time: {turn.session_date}\nSpeaker {turn.speaker} says: {turn.content}"
        return {"dialogue": dialogue, "speaker": turn.speaker, "text": turn.content,
                "speakers": list(self.conv.speakers), "date": turn.session_date}

    def issue_lookahead(self, turn: Turn) -> None:
        """Issue the extraction chains of the next turns ahead (they do not depend on the graph), so a
        hosted model works on them while this turn is resolved; none with concurrency 1 or offline."""
        n = 0 if self.llm.is_offline else 2 * self.llm.scheduler.concurrency - 1
        if n < 1:
            return
        for t in self.conv.turns[turn.index:turn.index + 1 + n]:
            self.issue_ahead(t.turn_id, extract_turn, self.extraction_inputs(t), step=t.index + 1, depth=0)

    def resolve_entities(self, names: list[str], passage: MemoryItem) -> dict[str, str]:
        """Map each surface name (normalised) to an entity id, creating or merging nodes."""
        out: dict[str, str] = {}
        new: dict[str, Resolution] = {}
        self._resolution = {}
        for n in names:
            r = self.graph.resolve(n, self.config.entity_sim)
            self._resolution[n] = {"entity": r.entity_id, "method": r.method, "similarity": round(r.similarity, 4)}
            if r.entity_id is None:
                new.setdefault(norm_name(n), r)
                continue
            out[norm_name(n)] = r.entity_id
            ent = self.memory.get(r.entity_id)
            if r.method == "similarity" and self.graph.add_alias(r.entity_id, n):
                ent.metadata.setdefault("aliases", []).append(n)
                self.memory.touch(ent, self.step)
            if r.method == "similarity":
                self.emit("merged", [ent], f"'{n}' resolved to '{ent.text}' by string similarity "
                          f"{r.similarity:.3f} >= {self.config.entity_sim} (alias '{r.matched}')",
                          alias=n, similarity=round(r.similarity, 4), method="similarity")
        for r in new.values():
            ent = self.new_item("entity", r.name, [passage.id], [passage.turn_ids[0]], name=r.name, aliases=[],
                                vector=self.turn_vector(passage.turn_ids[0]), vector_of="first-mention turn")
            self.graph.add_entity(ent.id, r.name)
            out[norm_name(r.name)] = ent.id
            self._resolution[r.name]["entity"] = ent.id
            self.emit("created", [ent], f"new entity: no exact alias and no alias with similarity >= "
                      f"{self.config.entity_sim}", nearest=r.matched, similarity=round(r.similarity, 4))
        return out

    def add_relations(self, specs: list[tuple[str, str, str, str, str]], turn: Turn, passage_id: str,
                      origin: str) -> list[MemoryItem]:
        """Create relation items for (src_id, rel, tgt_id, time, condition), dropping duplicates."""
        items = []
        for src, rel, tgt, time, cond in specs:
            dup = self.graph.find_triple(src, rel, tgt, time)
            if dup is not None and dup in self.memory:
                item = self.memory.get(dup)
                item.metadata.setdefault("also_turns", []).append(turn.turn_id)
                self.memory.touch(item, self.step)
                self.emit("merged", [dup], f"duplicate triple dropped: ({self.graph.label(src)}, {rel}, "
                          f"{self.graph.label(tgt)}, {time or '-'}) already exists", item_kind="relation",
                          decision="deduplicated", duplicate_of=dup, turn=turn.turn_id)
                continue
            text = f"{self.graph.label(src)} {rel} {self.graph.label(tgt)}"
            item = self.lazy_item("relation", text, [passage_id], [turn.turn_id],
                                  src=self.graph.label(src), rel=rel, tgt=self.graph.label(tgt), time=time,
                                  condition=cond, src_id=src, tgt_id=tgt, passage=passage_id, turn=turn.turn_id,
                                  session=turn.session, date=turn.session_date)
            self.graph.add_relation(item.id, src, rel, tgt, time)
            self.session_relations.append(item.id)
            self.emit("created", [item], f"relation {origin}" + (f" (time: {time})" if time else " (no time)"),
                      src=src, tgt=tgt, time=time, condition=cond, passage=passage_id)
            items.append(item)
        return items

    def add_experience(self, kind: str, content: str, turn_ids: list[str], cluster: str) -> MemoryItem:
        """An experience item with `about` edges to the entities it names (else its turns' entities)."""
        about = self.entities_named(content)
        if not about:
            linked = [e for t in turn_ids for p in self.memory.of_kind("passage") if p.metadata.get("turn") == t
                      for e in p.metadata.get("entities", [])]
            about = list(dict.fromkeys(linked))[:5]
        date = self._turns[turn_ids[-1]].session_date
        item = self.lazy_item("experience", content, turn_ids, turn_ids, type=kind, cluster=cluster, about=about,
                              date=date)
        self.graph.link(item.id, "experience", about, label=content[:40])
        return item

    def entities_named(self, text: str) -> list[str]:
        """Entity ids whose name or alias occurs as whole words in a text."""
        words = f" {norm_name(text)} "
        for ch in ",.!?;:()\"":
            words = words.replace(ch, " ")
        return list(dict.fromkeys(self.graph.aliases[a] for a in self.graph.aliases_in(words, min_len=2)))

    # -------------------------------------------------------------- session
    def end_session(self, turn: Turn) -> None:
        """Session review, dedup pass and the triple-index note."""
        if self.config.review and self.session_relations:
            review_session(self, self.session_relations, turn)
        ids = [r for r in self.session_relations if r in self.memory] or [self._last_passage]
        self.session_relations = []
        n = len(self.memory.of_kind("relation"))
        self.emit("indexed", ids, f"session {turn.session} closed: triple index rebuilt over {n} relations "
                  f"({len(ids)} from this session)", item_kind="relation", relations=n, **self.graph.counts())

    def on_finish(self) -> None:
        self.exp.finish()
        self.flush_embeddings()

    # ---------------------------------------------------------------- state
    def state(self) -> dict[str, Any]:
        """Base state, the experience memory, this session's relations and the alias index order (the
        stored entities give the aliases but not the order they were indexed in across entities)."""
        return {**super().state(), "experience": self.exp.state(), "session_relations": self.session_relations,
                "alias_order": list(self.graph.aliases)}

    def load_state(self, state: dict[str, Any]) -> None:
        super().load_state(state)
        self.exp.load(state.get("experience", {}))
        self.session_relations = list(state.get("session_relations", []))
        self._alias_order = list(state.get("alias_order", []))

    def restore(self, at_step: int | None = None, **kw: Any) -> None:
        """Load items and state (BaseSystem.restore), then rebuild the networkx graph from them (alias index in
        the saved order)."""
        self._alias_order: list[str] = []
        super().restore(at_step, **kw)
        self.graph.rebuild(self.memory.items.values())
        self.graph.order_aliases(self._alias_order)

    # ------------------------------------------------------------ retrieval
    def retrieve(self, question: Question) -> Trace:
        tr = self.new_trace(question)
        qvec = self.embed_one(question.text)
        return retrieval.retrieve(question, tr, qvec, memory=self.memory, graph=self.graph, cfg=self.config,
                                  search=self.search_items, llm=self.llm)


def extract_turn(llm: Any, base: dict[str, Any]) -> tuple[Any, list[str], Any, list[Any]]:
    """One turn's extraction chain: entities, then relations among them (two or more names), then one
    time per relation whose ends are two different names of the turn. Depends on the turn alone, so it
    can run ahead of the graph; a relation whose two names resolve to one entity is dropped later
    (its time call is made and booked all the same)."""
    res = llm.run("mw_entities", base, stage="construction")
    names = list(dict.fromkeys(n for n in res.output.entities if norm_name(n)))
    if len(names) < 2:
        return res, names, None, []
    rres = llm.run("mw_relations", {**base, "entities": names}, stage="construction")
    known = {norm_name(n) for n in names}
    times = []
    for r in rres.output.relations:
        ns, nt = norm_name(r.source), norm_name(r.target)
        if ns not in known or nt not in known or ns == nt or not r.relation.strip():
            times.append(None)
            continue
        times.append(llm.run("mw_time", {**base, "relation": f"{r.source} {r.relation} {r.target}"},
                             stage="construction"))
    return res, names, rres, times


__all__ = ["MemWeaverConfig", "MemWeaverSystem", "extract_turn"]
