"""MemWeaver graph memory in RAM: a networkx MultiDiGraph over entity, passage and experience nodes.

Semantic edges are relation items (key = relation id); structural edges are `contains`
(passage -> entity) and `about` (experience -> entity). The graph holds ids and labels only;
the items themselves live in the system's WorkingMemory and the store, and `rebuild` makes
the graph again from them after a restore.

Entity resolution (paper: "exact alias, then string similarity >= 0.7, else new node"):
names are compared lower-cased and whitespace-collapsed; similarity is difflib's
SequenceMatcher ratio 2M/T (M matching characters, T total length), so "Mel" vs "Melanie"
is 2*3/10 = 0.6. The aliases compared are those whose character-count bound (2*|common characters|/T, >= the
ratio) reaches the threshold; they are compared in decreasing order of that bound and the comparison stops once
the bound falls below the best ratio found; an alias whose longest common subsequence with the name (2*LCS/T,
also >= the ratio: difflib's matching blocks are a common subsequence) cannot reach the best ratio found is
skipped without computing its ratio. So the chosen alias (ties: the alphabetically first), and the
nearest alias reported for a new entity, are those of comparing every candidate.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any, Protocol

import networkx as nx
import numpy as np

from memcore.llm.client import LLMClient
from memcore.systems.memory import WorkingMemory
from memcore.types import Conversation, Event, MemoryItem, Turn


def norm_name(name: str) -> str:
    """The key an entity name is matched on: lower case, single spaces, no outer punctuation."""
    return " ".join(name.lower().split()).strip(" .,!?;:'\"")


def name_similarity(a: str, b: str) -> float:
    """difflib SequenceMatcher ratio of two normalised names (0..1); `a` is the new name, `b` the alias."""
    return SequenceMatcher(None, norm_name(b), norm_name(a)).ratio()


def _char_counts(s: str) -> np.ndarray:
    """Character counts in 64 buckets (collisions only loosen the bound, never tighten it)."""
    v = np.zeros(64, dtype=np.float32)
    for ch in s:
        v[ord(ch) % 64] += 1
    return v


def char_masks(s: str) -> dict[str, int]:
    """Each character of `s` -> the bit mask of its positions (for lcs_length)."""
    out: dict[str, int] = {}
    for i, ch in enumerate(s):
        out[ch] = out.get(ch, 0) | (1 << i)
    return out


def lcs_length(masks: dict[str, int], m: int, t: str) -> int:
    """Length of the longest common subsequence of `t` and the m-character string `masks` describes
    (char_masks): the bit-parallel algorithm of Allison and Dix / Hyyro, O(len(t)) integer operations."""
    full = (1 << m) - 1
    v = full
    for ch in t:
        u = v & masks.get(ch, 0)
        if u:
            v = ((v + u) | (v - u)) & full
    return m - v.bit_count()


@dataclass
class Resolution:
    """How a surface name was resolved: to an existing entity (exact or similar) or to none."""

    name: str
    entity_id: str | None
    method: str  # "exact" | "similarity" | "new"
    matched: str = ""  # the alias that matched
    similarity: float = 0.0


def dedup_key(src_id: str, rel: str, tgt_id: str, time: str) -> tuple[str, str, str, str]:
    """The identity of a triple for de-duplication: (src, rel, tgt, time)."""
    return (src_id, " ".join(rel.lower().split()), tgt_id, time.strip())


class GraphMemory:
    """Entity / passage / experience nodes and relation / contains / about edges, with an alias index."""

    def __init__(self) -> None:
        self.g = nx.MultiDiGraph()
        # nodes and edges per kind, kept by every change below (counts() read them: a scan of the whole graph
        # at each session end grew with the graph, quadratic over a conversation)
        self._node_kinds: Counter[str] = Counter()
        self._edge_kinds: Counter[str] = Counter()
        self.aliases: dict[str, str] = {}  # normalised alias -> entity id
        self.triples: dict[tuple[str, str, str, str], str] = {}  # dedup key -> relation id
        self._alias_list: list[str] = []  # aliases in index order; columns of _counts, entries of _lens
        self._counts = np.zeros((64, 0), dtype=np.float32)  # character counts per bucket (rows) of each alias
        self._lens = np.zeros(0, dtype=np.float32)
        self._indexed = 0  # aliases counted so far (the first _indexed of _alias_list)
        self._pos: dict[str, int] = {}  # alias -> its place in the index order (aliases_in lists in this order)
        self._prefixes: set[str] = set()  # every alias's word prefixes ("new", "new york", ...)

    # ------------------------------------------------------------ entities
    def resolve(self, name: str, threshold: float) -> Resolution:
        """Exact alias match, else the most similar alias with ratio >= threshold, else new."""
        key = norm_name(name)
        if key in self.aliases:
            return Resolution(name, self.aliases[key], "exact", key, 1.0)
        best, best_sim = "", 0.0
        sm = SequenceMatcher(None)
        sm.set_seq2(key)  # seq2 is the one difflib preprocesses: set it once
        masks = char_masks(key)
        for alias, bound in self._candidates(key, threshold):
            if bound < best_sim:  # bounds come in decreasing order: no later alias can reach the best ratio
                break
            # difflib's matching blocks are a common subsequence: ratio <= 2*LCS/T, a bound that sees the order
            if 2.0 * lcs_length(masks, len(key), alias) / (len(alias) + len(key)) < best_sim:
                continue
            sm.set_seq1(alias)
            r = sm.ratio()
            if r > best_sim or (r == best_sim and alias < best):
                best, best_sim = alias, r
        if best and best_sim >= threshold:
            return Resolution(name, self.aliases[best], "similarity", best, best_sim)
        return Resolution(name, None, "new", best, best_sim)

    def _candidates(self, key: str, threshold: float) -> list[tuple[str, float]]:
        """Aliases whose character-multiset bound 2*|common chars|/T (>= the ratio) reaches the threshold,
        each with that bound (exact, as a Python float: 2.0*matches/T, difflib's own formula), highest first."""
        self._index_new_aliases()
        n = len(self._alias_list)
        if not n:
            return []
        kc = _char_counts(key)
        cols = np.flatnonzero(kc)  # buckets the key lacks add min(count, 0) = 0: only the key's are summed
        inter = np.minimum(self._counts[cols, :n], kc[cols, None]).sum(axis=0)  # integers: exact in float32
        bound = 2 * inter / np.maximum(self._lens[:n] + len(key), 1)
        hit = np.flatnonzero(bound >= threshold - 1e-9)
        if not len(hit):
            return []
        common = inter[hit].astype(np.int64)
        exact = 2.0 * common / (self._lens[hit].astype(np.int64) + len(key))  # float64: >= ratio() exactly
        order = np.argsort(-exact, kind="stable")
        return [(self._alias_list[hit[i]], float(exact[i])) for i in order]

    def _index_new_aliases(self) -> None:
        """Count the characters of aliases added since the last call (capacity doubles: appending one alias
        costs O(1) amortised, where stacking a new matrix per alias copied the whole index each time)."""
        n, have = len(self._alias_list), self._indexed
        if have == n:
            return
        if n > self._counts.shape[1]:
            cap = max(64, 2 * n)
            counts = np.zeros((64, cap), dtype=np.float32)
            lens = np.zeros(cap, dtype=np.float32)
            counts[:, :have], lens[:have] = self._counts[:, :have], self._lens[:have]
            self._counts, self._lens = counts, lens
        for i in range(have, n):
            alias = self._alias_list[i]
            self._counts[:, i] = _char_counts(alias)
            self._lens[i] = len(alias)
        self._indexed = n

    def add_entity(self, entity_id: str, name: str, aliases: Iterable[str] = ()) -> None:
        """Add an entity node and index its name and aliases."""
        self._add_node(entity_id, kind="entity", label=name)
        for a in [name, *aliases]:
            self.add_alias(entity_id, a)

    def add_alias(self, entity_id: str, alias: str) -> bool:
        """Index one more surface form of an entity; False when already known."""
        key = norm_name(alias)
        if not key or key in self.aliases:
            return False
        self.aliases[key] = entity_id
        self._alias_list.append(key)
        self._pos[key] = len(self._pos)
        self._index_prefixes(key)
        return True

    def _index_prefixes(self, alias: str) -> None:
        words = alias.split(" ")
        self._prefixes.update(" ".join(words[:i]) for i in range(1, len(words) + 1))

    def aliases_in(self, words: str, min_len: int = 0) -> list[str]:
        """The aliases longer than `min_len` that occur in `words` as ` alias ` (space-delimited, as `f" {a} " in
        words`), in index order; looked up from each word on, never by scanning the whole alias index."""
        toks = words.split(" ")
        found: set[str] = set()
        for j, tok in enumerate(toks):
            if not tok or tok not in self._prefixes or j == 0:  # a match needs a space before it
                continue
            cand, k = tok, j
            while True:
                if cand in self.aliases and len(cand) > min_len and k + 1 < len(toks):  # ... and a space after
                    found.add(cand)
                k += 1
                if k >= len(toks) or not toks[k]:
                    break
                cand = f"{cand} {toks[k]}"
                if cand not in self._prefixes:
                    break
        return sorted(found, key=self._pos.__getitem__)

    def order_aliases(self, order: Iterable[str]) -> None:
        """Put the alias index in a saved order (the live run's order of first indexing); aliases not in
        `order` keep their place after those that are. `entities_named` lists entities in this order."""
        keys = [k for k in dict.fromkeys(order) if k in self.aliases]
        placed = set(keys)  # once: a set per alias made restoring 4,600 aliases take seconds
        keys += [k for k in self.aliases if k not in placed]
        self.aliases = {k: self.aliases[k] for k in keys}
        self._alias_list, self._indexed = list(keys), 0
        self._pos = {k: i for i, k in enumerate(keys)}

    def label(self, node_id: str) -> str:
        """The display label of a node."""
        return str(self.g.nodes[node_id].get("label", node_id)) if node_id in self.g else node_id

    # ----------------------------------------------------------- relations
    def find_triple(self, src_id: str, rel: str, tgt_id: str, time: str) -> str | None:
        """The id of an existing relation with the same (src, rel, tgt, time), if any."""
        return self.triples.get(dedup_key(src_id, rel, tgt_id, time))

    def add_relation(self, rel_id: str, src_id: str, rel: str, tgt_id: str, time: str) -> None:
        """Add a semantic edge (key = relation id)."""
        self._add_edge(src_id, tgt_id, rel_id, kind="relation", relation=rel, time=time)
        self.triples.setdefault(dedup_key(src_id, rel, tgt_id, time), rel_id)

    def remove_relation(self, rel_id: str, src_id: str, tgt_id: str) -> None:
        """Remove a semantic edge and its dedup key."""
        if self.g.has_edge(src_id, tgt_id, key=rel_id):
            self._edge_kinds[self.g.edges[src_id, tgt_id, rel_id].get("kind", "?")] -= 1
            self.g.remove_edge(src_id, tgt_id, key=rel_id)
        for k, v in list(self.triples.items()):
            if v == rel_id:
                del self.triples[k]

    def relation_edges(self, entity_id: str) -> list[str]:
        """Ids of semantic relations leaving or entering an entity (one hop, both directions)."""
        if entity_id not in self.g:
            return []
        out = [k for _, _, k, d in self.g.out_edges(entity_id, keys=True, data=True) if d.get("kind") == "relation"]
        out += [k for _, _, k, d in self.g.in_edges(entity_id, keys=True, data=True) if d.get("kind") == "relation"]
        return list(dict.fromkeys(out))

    # ---------------------------------------------------- structural edges
    def link(self, node_id: str, kind: str, entity_ids: Iterable[str], label: str = "") -> None:
        """Add a passage or experience node with `contains` / `about` edges to entities."""
        edge = "contains" if kind == "passage" else "about"
        self._add_node(node_id, kind=kind, label=label)
        for e in entity_ids:
            if e in self.g:
                self._add_edge(node_id, e, f"{edge}:{node_id}", kind=edge)

    def unlink(self, node_id: str) -> None:
        """Remove a passage or experience node and its structural edges."""
        if node_id in self.g:
            incident = {(u, v, k): d for u, v, k, d in self.g.out_edges(node_id, keys=True, data=True)}
            incident.update({(u, v, k): d for u, v, k, d in self.g.in_edges(node_id, keys=True, data=True)})
            for d in incident.values():  # a self-loop once
                self._edge_kinds[d.get("kind", "?")] -= 1
            self._node_kinds[self.g.nodes[node_id].get("kind", "?")] -= 1
            self.g.remove_node(node_id)

    def _add_node(self, node_id: str, **attr: Any) -> None:
        """`g.add_node`, counted (a node added again may change its kind)."""
        if node_id in self.g:
            self._node_kinds[self.g.nodes[node_id].get("kind", "?")] -= 1
        self.g.add_node(node_id, **attr)
        self._node_kinds[self.g.nodes[node_id].get("kind", "?")] += 1

    def _add_edge(self, u: str, v: str, key: str, **attr: Any) -> None:
        """`g.add_edge`, counted (its ends are added when absent; an edge added again may change its kind)."""
        for n in dict.fromkeys((u, v)):
            if n not in self.g:
                self._add_node(n)
        if self.g.has_edge(u, v, key=key):
            self._edge_kinds[self.g.edges[u, v, key].get("kind", "?")] -= 1
        self.g.add_edge(u, v, key=key, **attr)
        self._edge_kinds[self.g.edges[u, v, key].get("kind", "?")] += 1

    def attached(self, entity_ids: Iterable[str], kind: str) -> list[str]:
        """Passage (`contains`) or experience (`about`) nodes attached to any of the entities."""
        edge = "contains" if kind == "passage" else "about"
        out: dict[str, None] = {}
        for e in entity_ids:
            if e not in self.g:
                continue
            for src, _, d in self.g.in_edges(e, data=True):
                if d.get("kind") == edge:
                    out.setdefault(src, None)
        return list(out)

    # ------------------------------------------------------------ rebuild
    def rebuild(self, items: Iterable[MemoryItem]) -> None:
        """Make the graph again from stored entity, relation, passage and experience items."""
        self.__init__()
        items = list(items)
        for it in items:
            if it.kind == "entity":
                self.add_entity(it.id, str(it.metadata.get("name", it.text)), it.metadata.get("aliases", []))
        for it in items:
            md = it.metadata
            if it.kind == "relation" and md.get("src_id") in self.g and md.get("tgt_id") in self.g:
                self.add_relation(it.id, md["src_id"], str(md.get("rel", "")), md["tgt_id"], str(md.get("time", "")))
            elif it.kind == "passage":
                self.link(it.id, "passage", md.get("entities", []), label=str(md.get("turn", it.id)))
            elif it.kind == "experience":
                self.link(it.id, "experience", md.get("about", []), label=it.text[:40])

    def counts(self) -> dict[str, int]:
        """Nodes per kind and edges per kind, in the order each kind first occurs in the graph's node (edge) order.

        The numbers are kept as the graph changes; only the order is read from the graph, which stops as soon as
        every kind present has been seen (a few nodes in: entities, passages and experiences come early)."""
        out: dict[str, int] = {}
        for prefix, kinds, seq in (("nodes", self._node_kinds, self.g.nodes(data="kind", default="?")),
                                   ("edges", self._edge_kinds, self.g.edges(data="kind", default="?"))):
            left = {k for k, n in kinds.items() if n > 0}
            for *_, kind in seq:
                if not left:
                    break
                if kind in left:
                    left.discard(kind)
                    out[f"{prefix}:{kind}"] = kinds[kind]
        return out


# ---------------------------------------------------------------- session review
class ReviewHost(Protocol):
    """What the session review needs of its system: the memory and graph it edits, the model, the
    event log, and the system's own entity resolution and relation writing (shared with extraction)."""

    conv: Conversation
    memory: WorkingMemory
    graph: GraphMemory
    llm: LLMClient
    step: int

    def emit(self, kind: str, items: list[MemoryItem] | list[str], reason: str, **data: Any) -> Event: ...

    def resolve_entities(self, names: list[str], passage: MemoryItem) -> dict[str, str]: ...

    def add_relations(self, specs: list[tuple[str, str, str, str, str]], turn: Turn, passage_id: str,
                      origin: str) -> list[MemoryItem]: ...

    def defer_embedding(self, item_id: str) -> None: ...


def review_session(h: ReviewHost, relations: list[str], turn: Turn) -> None:
    """Run `mw_review` over the session's relations (ids) and apply its add / update / deny operations."""
    sess = [t for t in h.conv.turns if t.session == turn.session]
    rels = [h.memory.get(r) for r in relations if r in h.memory]
    if not rels:
        return
    ents = {e for p in h.memory.of_kind("passage") if p.metadata.get("session") == turn.session
            for e in p.metadata.get("entities", [])}
    res = h.llm.run("mw_review", {
        "date": turn.session_date,
        "dialogue": [f"{t.turn_id} | {t.speaker}: {t.content}" for t in sess],
        "entities": sorted(h.graph.label(e) for e in ents),
        "relations": [{"id": r.id, "source": r.metadata["src"], "relation": r.metadata["rel"],
                       "target": r.metadata["tgt"], "time": r.metadata.get("time", ""),
                       "condition": r.metadata.get("condition", ""), "turn": r.metadata.get("turn", "")}
                      for r in rels]}, stage="construction")
    valid = {r.id for r in rels}
    out = res.output
    for d in out.deny:
        if d.relation_id in valid and d.relation_id in h.memory:
            _drop(h, d.relation_id, f"denied by session review: {d.reason}", decision="denied", role="mw_review")
    for u in out.update:
        if u.relation_id not in valid or u.relation_id not in h.memory:
            continue
        item = h.memory.get(u.relation_id)
        md = item.metadata
        before = {"rel": md["rel"], "time": md.get("time", ""), "condition": md.get("condition", "")}
        rel = u.relation.strip() or md["rel"]
        time = md.get("time", "") if u.time is None else u.time.strip()
        cond = md.get("condition", "") if u.condition is None else u.condition.strip()
        if (rel, time, cond) == (before["rel"], before["time"], before["condition"]):
            continue
        dup = h.graph.find_triple(md["src_id"], rel, md["tgt_id"], time)
        if dup is not None and dup != item.id:
            _drop(h, item.id, f"review update made it a duplicate of {dup}: removed", decision="deduplicated")
            continue
        h.graph.remove_relation(item.id, md["src_id"], md["tgt_id"])
        md.update(rel=rel, time=time, condition=cond)
        item.text = f"{md['src']} {rel} {md['tgt']}"
        item.embedding = None  # re-embedded at the session's batch flush
        h.defer_embedding(item.id)
        h.graph.add_relation(item.id, md["src_id"], rel, md["tgt_id"], time)
        h.memory.touch(item, h.step)
        h.emit("updated", [item], f"updated by session review: {u.reason}", before=before,
               after={"rel": rel, "time": time, "condition": cond}, role="mw_review")
    last = h.memory.get(rels[-1].metadata["passage"]) if rels[-1].metadata.get("passage") in h.memory else None
    for a in out.add:
        if last is None:
            break
        ids = h.resolve_entities([a.source, a.target], last)
        src, tgt = ids.get(norm_name(a.source)), ids.get(norm_name(a.target))
        if src and tgt and src != tgt and a.relation.strip():
            t = h.conv.turn(last.metadata["turn"]) or turn
            h.add_relations([(src, a.relation.strip(), tgt, a.time.strip(), a.condition.strip())], t, last.id,
                            origin="added by session review")
    if res.error:
        h.emit("updated", sorted(valid), f"session review failed: {res.error}", item_kind="relation", error=res.error)


def _drop(h: ReviewHost, rel_id: str, reason: str, **data: object) -> None:
    item = h.memory.get(rel_id)
    h.graph.remove_relation(rel_id, item.metadata["src_id"], item.metadata["tgt_id"])
    h.memory.remove(rel_id)
    h.emit("deleted", [item], reason, **data)
