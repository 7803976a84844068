"""RecMem: a cheap subconscious store; LLM consolidation only when a topic recurs.

Each exchange unit (two consecutive messages of a session) first tries to merge into its
nearest episode (cos >= theta_sim, Eq. 6; the LLM decides). Otherwise its neighbours in the
subconscious store with cos >= theta_sim are counted; when they and the unit reach
theta_count, the cluster is consolidated into 1-3 episodes (`recmem_episodes`) plus refined
semantic facts (`recmem_refine`: new facts, and updates of the known facts the exchanges change,
Eq. 8-9) and leaves the subconscious store. Otherwise the unit is stored there as is.
The thresholds come from the paper's preset for the conversation's source (LoCoMo 0.7 / 5,
LongMemEval 0.6 / 4) unless set. Settings: .config. Retrieval: .retrieval.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from memcore.llm.roles.memory_writing import verbatim_episodes
from memcore.systems import register_system
from memcore.systems.base import BaseSystem, turn_sort_key
from memcore.systems.recmem import presets as _presets  # noqa: F401  (registers its ablation presets, sweeps)
from memcore.systems.recmem import reader as _reader  # noqa: F401  (registers its reader family)
from memcore.systems.recmem import roles as _roles  # noqa: F401  (registers this system's LLM roles)
from memcore.systems.recmem.config import PRESETS, RecMemConfig, Thresholds
from memcore.systems.recmem.fidelity import FIDELITY
from memcore.systems.recmem.retrieval import retrieve_three_stores
from memcore.systems.recmem.roles import merge_inputs, refine_inputs
from memcore.systems.recmem.stats import MECHANISM
from memcore.text.dates import day_of
from memcore.types import MemoryItem, Question, Trace, Turn

# exchange units seen; merged into an episode; stored in the subconscious layer; consolidations fired;
# units (trigger unit included) that consolidations took out of the subconscious layer
EXCHANGE_OUTCOMES = ("units", "merged", "stored", "consolidations", "consolidated")
FACT_OUTCOMES = ("added", "updated")  # semantic facts added, and known facts rewritten by fact maintenance

@register_system
class RecMemSystem(BaseSystem):
    """Subconscious units, recurrence-triggered episodes, refined semantic facts."""

    name = "recmem"
    rank = 50
    title = "RecMem"
    paper = "RecMem: Recurrence-based Memory Consolidation for Efficient and Effective Long-Running LLM Agents"
    reader_family = "recmem"  # its paper's reader prompts (reader.py)
    config_class = RecMemConfig
    mechanism = MECHANISM
    fidelity = FIDELITY
    kinds = ("unit", "episode", "semantic")
    query_kinds = ()  # retrieval searches the store only (and reads its counts once, _store_counts)

    def __init__(self, *a: Any, **kw: Any) -> None:
        super().__init__(*a, **kw)
        self.buffer: list[Turn] = []
        self._by_id: dict[str, Turn] = {t.turn_id: t for t in self.conv.turns}
        self._unit_vecs: dict[str, np.ndarray] = {}
        self.exchanges = dict.fromkeys(EXCHANGE_OUTCOMES, 0)  # exchange units by outcome
        self.facts = dict.fromkeys(FACT_OUTCOMES, 0)  # semantic refinement's facts by outcome
        self.th: Thresholds = self.config.thresholds(self.conv.source)  # the thresholds in force
        self._counts: dict[int, dict[str, int]] = {}  # step -> stored items per kind (shared by with_query views)

    # ---------------------------------------------------------------- ingest
    def on_turn(self, turn: Turn) -> None:
        self.buffer.append(turn)
        if len(self.buffer) >= 2 or self.session_end:  # a pair, or the session's last turn alone
            self._flush()

    def on_finish(self) -> None:
        self._flush()

    def _flush(self) -> None:
        turns, self.buffer = self.buffer, []
        if turns:
            self.process_unit(turns)

    def state(self) -> dict:
        return {**super().state(), "buffer": [t.index for t in self.buffer], "exchanges": dict(self.exchanges),
                "facts": dict(self.facts)}

    def load_state(self, state: dict) -> None:
        super().load_state(state)
        self.buffer = [self.conv.turns[i] for i in state.get("buffer", [])]
        self.exchanges = {**dict.fromkeys(EXCHANGE_OUTCOMES, 0), **state.get("exchanges", {})}
        self.facts = {**dict.fromkeys(FACT_OUTCOMES, 0), **state.get("facts", {})}

    def process_unit(self, turns: list[Turn]) -> None:
        """One exchange unit: merge into an episode, consolidate a recurring cluster, or store."""
        th = self.th
        text = unit_text(turns)
        tids = [t.turn_id for t in turns]
        vec = self._unit_vector(turns)
        self.exchanges["units"] += 1
        check = self._try_merge(turns, vec)
        if check is None:
            self.exchanges["merged"] += 1
            return
        hits = self.memory.search("unit", vec, 2 * th.theta_count)
        neigh = [(u, s) for u, s in hits if s >= th.theta_sim]
        trigger = {"neighbours": [u.id for u, _ in neigh], "similarities": [round(s, 4) for _, s in neigh],
                   "count": len(neigh) + 1, "theta_count": th.theta_count, "theta_sim": th.theta_sim,
                   "preset": th.preset, "exchange": tids, "merge_check": check or None}
        if len(neigh) + 1 >= th.theta_count:
            self.exchanges["consolidations"] += 1
            self.exchanges["consolidated"] += len(neigh) + 1
            self._consolidate(turns, [u for u, _ in neigh], trigger)
            return
        self.exchanges["stored"] += 1
        unit = self.new_item("unit", text, tids, tids, vector=vec, layer="subconscious",
                             date=day_of(turns[0].session_date), session=turns[0].session,
                             speakers=list(dict.fromkeys(t.speaker for t in turns)))
        unit.timestamp = turns[0].timestamp
        self.emit("created", [unit], f"stored in the subconscious layer: {len(neigh) + 1} similar exchange(s) "
                  f"< theta_count {th.theta_count}", **trigger)

    # ----------------------------------------------------------------- merge
    def _try_merge(self, turns: list[Turn], vec: np.ndarray) -> dict | None:
        """Merge-first; None when merged, else the check made ({} when no episode was close)."""
        near = self.memory.search("episode", vec, 1)
        if not near or near[0][1] < self.th.merge_gate:
            return {}
        ep, sim = near[0]
        msgs = self._messages(turns)
        inputs = merge_inputs(ep.metadata.get("title", ""), ep.text, ep.metadata.get("date", ep.timestamp[:10]),
                              msgs, list(self.conv.speakers), sim)
        res = self.llm.run("recmem_merge", inputs, stage="construction")
        out = res.output
        check = {"episode": ep.id, "similarity": round(sim, 4), "merge": bool(out.merge), "reason": out.reason,
                 "error": res.error}
        if not out.merge or res.error:
            return check
        tids = [t.turn_id for t in turns]
        ep.text = out.content.strip() or f"{ep.text}\n" + "\n".join(f"{m['speaker']}: {m['text']}" for m in msgs)
        ep.metadata["title"] = out.title.strip() or ep.metadata.get("title", "")
        ep.metadata["merges"] = int(ep.metadata.get("merges", 0)) + 1
        ep.sources = list(dict.fromkeys(ep.sources + tids))
        ep.turn_ids = sorted(set(ep.turn_ids) | set(tids), key=turn_sort_key)
        self.memory.put(ep, self.embed_one(ep.text))
        self.memory.touch(ep, self.step)
        gate = "theta_merge" if self.th.split else "theta_sim"
        self.emit("merged", [ep], f"exchange {', '.join(tids)} merged into {ep.id}: cos {sim:.2f} >= {gate} "
                  f"{self.th.merge_gate} and the LLM agreed ({out.reason})", similarity=round(sim, 4),
                  decision=True, reason_llm=out.reason, exchange=tids, theta_merge=self.th.merge_gate,
                  merge_gate=gate)
        self._refine(ep, msgs)
        return None

    # ---------------------------------------------------------- consolidate
    def _consolidate(self, turns: list[Turn], units: list[MemoryItem], trigger: dict) -> None:
        """Cluster -> 1..max_episodes episodes (time-sorted input) -> semantic refinement; units leave."""
        owner: dict[str, str] = {t.turn_id: "" for t in turns}
        for u in units:
            owner.update({tid: u.id for tid in u.turn_ids})
        cluster = sorted(owner, key=lambda tid: self._by_id[tid].index if tid in self._by_id else 1 << 30)
        msgs = self._messages([self._by_id[t] for t in cluster if t in self._by_id])
        res = self.llm.run("recmem_episodes", {"messages": msgs, "max_episodes": self.config.max_episodes},
                           stage="construction")
        eps = [e for e in res.output.episodes if e.content.strip()][: self.config.max_episodes]
        if not eps:
            eps = verbatim_episodes({"messages": msgs}).episodes
        covered: set[str] = set()
        made: list[tuple[MemoryItem, list[dict]]] = []
        for n, e in enumerate(eps):
            etids = [t for t in e.turn_ids if t in owner] or list(cluster)
            if n == len(eps) - 1:  # turns no episode claimed stay attached to the last one
                etids += [t for t in cluster if t not in covered and t not in etids]
            covered |= set(etids)
            etids = sorted(set(etids), key=turn_sort_key)
            srcs = list(dict.fromkeys(owner[t] or t for t in etids))
            first = self._by_id.get(etids[0])
            date = day_of(first.session_date) if first else day_of(e.timestamp)
            item = self.new_item("episode", e.content.strip(), srcs, etids, title=e.title, date=date)
            item.timestamp = first.timestamp if first else item.timestamp
            self.emit("created", [item], f"recurrence: {trigger['count']} similar exchanges (>= theta_count "
                      f"{trigger['theta_count']} at cos >= {trigger['theta_sim']}) consolidated into an episode",
                      **trigger, units=[u.id for u in units], llm_error=res.error)
            made.append((item, [m for m in msgs if m["turn_id"] in set(etids)]))
        ep_ids = [it.id for it, _ in made]
        if units:
            self.emit("promoted", units, f"consolidated into {', '.join(ep_ids)}", to=ep_ids,
                      exchange=trigger["exchange"])
            for u in units:
                self.memory.remove(u.id)
            self.emit("deleted", [u.id for u in units], "left the subconscious store after consolidation",
                      item_kind="unit", to=ep_ids)
        for item, emsgs in made:
            self._refine(item, emsgs)

    def _refine(self, ep: MemoryItem, msgs: list[dict]) -> None:
        """Semantic refinement (Eq. 8-9): new typed facts from the raw messages with the top-k known facts as
        context, each stored as a new entry (Eq. 9, the default fact_maintenance="append"); with the option
        "update", fact maintenance rewrites the known facts the messages change."""
        cfg = self.config
        direct = cfg.semantic_source == "direct"  # the Direct Extraction ablation: the episode is not used
        inputs = refine_inputs("" if direct else ep.text, msgs, list(self.conv.speakers), [], cfg.fact_maintenance)
        near = self.embed_one(inputs["raw"]) if direct else self.memory.vector(ep.id)
        known = self.memory.search("semantic", near, cfg.k_facts_context)
        inputs["known_facts"] = [f.text for f, _ in known]
        if direct:
            inputs.pop("episode")
        res = self.llm.run("recmem_extract" if direct else "recmem_refine", inputs, stage="construction")
        what = f"direct extraction from the turns of {ep.id}" if direct else f"semantic refinement of {ep.id}"
        if res.error:
            self.emit("updated", [ep], f"{what} failed; no facts added", llm_error=res.error)
        allowed = {m["turn_id"] for m in msgs}
        if cfg.fact_maintenance == "update":
            self._maintain(ep, known, res.output.updates, allowed)
        seen = {f.text.strip().lower() for f, _ in known}
        facts = []
        for f in res.output.facts:
            if f.text.strip() and f.text.strip().lower() not in seen:
                seen.add(f.text.strip().lower())
                facts.append(f)
        if not facts:
            return
        vecs = self.embedder.embed([f.text.strip() for f in facts])
        for f, v in zip(facts, vecs, strict=True):
            tids = [t for t in f.turn_ids if t in allowed] or sorted(allowed, key=turn_sort_key)
            item = self.new_item("semantic", f.text.strip(), tids if direct else [ep.id], tids, vector=v,
                                 fact_type=f.type, episode=ep.id, date=ep.metadata.get("date", ""))
            self.facts["added"] += 1
            self.emit("created", [item], f"{what}: {f.type}", type=f.type,
                      episode=ep.id, context_facts=[k.id for k, _ in known], llm_error=res.error)

    def _maintain(self, ep: MemoryItem, known: list[tuple[MemoryItem, float]], updates: list,
                  allowed: set[str]) -> None:
        """Fact maintenance: rewrite each known fact an update names (1-based in the known list) in place;
        its earlier text stays in the item's version history and in the event."""
        done: set[str] = set()
        for u in updates:
            if not 1 <= u.fact <= len(known) or not u.text.strip():
                continue
            fact = known[u.fact - 1][0]
            old = fact.text
            if fact.id in done or u.text.strip().lower() == old.strip().lower():
                continue
            done.add(fact.id)
            tids = [t for t in u.turn_ids if t in allowed] or sorted(allowed, key=turn_sort_key)
            fact.text = u.text.strip()
            fact.sources = list(dict.fromkeys(fact.sources + [ep.id]))
            fact.turn_ids = sorted(set(fact.turn_ids) | set(tids), key=turn_sort_key)
            fact.metadata.update(fact_type=u.type, updated_by=ep.id, date=ep.metadata.get("date", ""))
            self.memory.put(fact, self.embed_one(fact.text))
            self.memory.touch(fact, self.step)
            self.facts["updated"] += 1
            self.emit("updated", [fact], f"fact maintenance during the refinement of {ep.id}: the exchanges "
                      f"change this fact ({u.type})", old_text=old, new_text=fact.text, episode=ep.id,
                      type=u.type, maintenance="update")

    def _unit_vector(self, turns: list[Turn]) -> np.ndarray:
        """The unit's embedding; all units of the conversation are embedded in one batch on first use."""
        key = "|".join(t.turn_id for t in turns)
        if key not in self._unit_vecs:
            units = [ts[i:i + 2] for ts in self.conv.sessions().values() for i in range(0, len(ts), 2)]
            if key not in {"|".join(t.turn_id for t in u) for u in units}:
                units = [turns]
            vecs = self.embedder.embed([unit_text(u) for u in units])
            self._unit_vecs.update({"|".join(t.turn_id for t in u): v for u, v in zip(units, vecs, strict=True)})
        return self._unit_vecs[key]

    def _messages(self, turns: list[Turn]) -> list[dict]:
        return [{"speaker": t.speaker, "text": t.content, "date": day_of(t.session_date) or t.session_date,
                 "turn_id": t.turn_id} for t in turns]

    # ------------------------------------------------------------- retrieve
    def retrieve(self, question: Question) -> Trace:
        tr = self.new_trace(question)
        qvec = self.embed_one(question.text)
        tr = retrieve_three_stores(question, tr, qvec, self.config, self.search_items, self.exchanges,
                                   self._store_counts)
        tr.structure["thresholds"] = {**vars(self.th), "fact_maintenance": self.config.fact_maintenance}
        tr.structure["facts"] = dict(self.facts)
        if self.config.semantic_source == "direct":
            tr.structure["semantic_source"] = "direct"
            tr.notes.append("ablation (Direct Extraction): semantic facts extracted from the raw turns without "
                            "the episode as reference (recmem_extract)")
        return tr

    def _store_counts(self) -> dict[str, int]:
        """Stored items per kind, read from the store once per memory (at this step: an ingest moves it on)."""
        if self.step not in self._counts:
            self._counts.clear()
            self._counts[self.step] = self.store.kind_counts(self.space, self.conv.id)
        return self._counts[self.step]


def unit_text(turns: list[Turn]) -> str:
    """An exchange unit as stored and embedded: one "Speaker: text" line per message (photo included)."""
    return "\n".join(t.embed_text for t in turns)


__all__ = ["EXCHANGE_OUTCOMES", "FACT_OUTCOMES", "PRESETS", "RecMemConfig", "RecMemSystem", "unit_text"]
