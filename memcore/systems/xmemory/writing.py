"""xMemory's episode and semantic writing (paper 001, Sec. 3.2 and Appendix C), behind named options.

Episodes (`episode_prompt`): "paper" runs `xmemory_episode` (the paper's Episodic Generation prompt,
given the boundary reason); "shared" runs the shared `episode_summary` role (memcore's earlier
choice). Episode vectors (`episode_vector`): "text" embeds the episode text (the paper embeds
every memory unit); "mean_messages" is the mean of its messages' vectors (no extra encoding).

Semantics (`semantic_prompt`): "paper" runs `xmemory_semantic` over the episode (the paper's
persistence / specificity / utility / independence tests); every returned statement is a new
semantic node linked to the episode (the paper: "each episode can yield multiple semantic nodes";
no de-duplication). "recmem_typed" is memcore's earlier choice: RecMem's typed-fact prompt
(`semantic_facts`, with the 10 nearest known facts) and a fact at cos >= `dup_cos` to a stored
semantic links to it instead of creating one.

Turn provenance: the paper links a semantic to its episode only. memcore's evidence views need
turns, so a "paper" semantic cites the episode's turns sharing >= 2 content terms with it (else all
of the episode's turns); a "recmem_typed" fact cites the turns the model names.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from memcore.llm.client import LLMClient
from memcore.systems.base import turn_sort_key
from memcore.systems.memory import WorkingMemory
from memcore.systems.xmemory import themes as xt
from memcore.systems.xmemory.config import XMemoryConfig
from memcore.text.terms import term_set
from memcore.types import Event, MemoryItem, Turn


class WriterHost(Protocol):
    """What episode and semantic writing need of the system: settings, model, memory, encoder, the
    event log and the system's item, theme and vector writers."""

    config: XMemoryConfig
    memory: WorkingMemory
    llm: LLMClient
    step: int

    def new_item(self, kind: str, text: str, sources: list[str], turn_ids: list[str], **md: Any) -> MemoryItem: ...

    def emit(self, kind: str, items: list[MemoryItem] | list[str], reason: str, **data: Any) -> Event: ...

    def embed_texts(self, texts: list[str]) -> np.ndarray: ...

    def turn_vec(self, turn: Turn) -> np.ndarray: ...

    def members(self, theme_id: str) -> list[str]: ...

    def set_members(self, theme: MemoryItem, members: list[str]) -> None: ...

    def attach(self, sem: MemoryItem) -> None: ...


def _get(obj: Any, name: str, default: Any = None) -> Any:
    return obj.get(name, default) if isinstance(obj, dict) else getattr(obj, name, default)


def write_episode(host: WriterHost, turns: list[Turn], reason: str) -> MemoryItem:
    """One episode item from the buffered turns (title, content, timestamp, vector by the settings)."""
    cfg = host.config
    ids = [t.turn_id for t in turns]
    msgs = [{"speaker": t.speaker, "text": t.content, "date": t.session_date, "turn_id": t.turn_id,
             "timestamp": t.timestamp} for t in turns]
    if cfg.episode_prompt == "paper":
        res = host.llm.run("xmemory_episode", {
            "conversation": [f"[{t.timestamp or t.session_date}] {t.speaker}: {t.content}" for t in turns],
            "boundary_reason": reason, "messages": msgs}, stage="construction")
        eps = [res.output]
    else:
        res = host.llm.run("episode_summary", {"messages": msgs, "max_episodes": 1}, stage="construction")
        eps = list(_get(res.output, "episodes", None) or [])
    title = " / ".join(str(_get(e, "title", "")) for e in eps if _get(e, "title", "")) or turns[0].content[:60]
    content = "\n".join(str(_get(e, "content", "")) for e in eps).strip() or "\n".join(
        t.embed_text for t in turns)
    stamp = str(_get(eps[0], "timestamp", "") if eps else "") or turns[0].timestamp
    if cfg.episode_vector == "text":
        vec = xt.unit(np.asarray(host.embed_texts([content])[0], dtype=np.float32))
    else:
        vec = xt.centroid(np.stack([host.turn_vec(t) for t in turns]))
    ep = host.new_item("episode", content, ids, ids, vector=vec, title=title, date=turns[0].session_date,
                       episode_time=stamp, session=turns[0].session, boundary=reason, n_messages=len(turns))
    host.emit("created", [ep], f"episode closed ({reason}): {len(turns)} messages", boundary=reason,
              engine=host.llm.label, prompt=cfg.episode_prompt, vector=cfg.episode_vector,
              **({"error": res.error} if res.error else {}))
    return ep


def cited_turns(text: str, turns: list[Turn]) -> list[str]:
    """The turns sharing >= 2 content terms with a statement (else all of them), in turn order."""
    words = term_set(text)
    hits = [t.turn_id for t in turns if len(words & term_set(t.content)) >= 2]
    return hits or [t.turn_id for t in turns]


def distil(host: WriterHost, ep: MemoryItem, turns: list[Turn]) -> None:
    """The semantic step for one episode, by `semantic_prompt` (module docstring)."""
    if host.config.semantic_prompt == "paper":
        _paper_semantics(host, ep, turns)
    else:
        _typed_facts(host, ep, turns)


def _paper_semantics(host: WriterHost, ep: MemoryItem, turns: list[Turn]) -> None:
    stamp = ep.metadata.get("episode_time", "") or ep.metadata.get("date", "")
    res = host.llm.run("xmemory_semantic", {
        "episodes": [f"[{stamp}] {ep.metadata.get('title', '')}: {ep.text}"],
        "speakers": sorted({t.speaker for t in turns})}, stage="construction")
    if res.error:
        host.emit("updated", [ep], f"xmemory_semantic failed: {res.error}", error=res.error)
    facts = [f for f in (_get(res.output, "facts", None) or []) if str(_get(f, "text", "")).strip()]
    if not facts:
        return
    vecs = host.embed_texts([str(_get(f, "text")) for f in facts])
    for f, v in zip(facts, vecs, strict=True):
        text = str(_get(f, "text")).strip()
        sem = host.new_item("semantic", text, [ep.id], cited_turns(text, turns), vector=v,
                            type=str(_get(f, "category", "") or ""), date=ep.metadata["date"], theme="")
        host.emit("created", [sem], f"semantic distilled from {ep.id} (paper prompt: persistent knowledge)",
                  episode=ep.id, type=sem.metadata["type"], prompt="paper")
        host.attach(sem)


def _typed_facts(host: WriterHost, ep: MemoryItem, turns: list[Turn]) -> None:
    near = host.memory.search("semantic", host.memory.vector(ep.id), 10)
    res = host.llm.run("semantic_facts", {
        "content": "\n".join([f"Summary: {ep.text}", *(f"[{t.turn_id}] {t.speaker}: {t.content}" for t in turns)]),
        "date": ep.metadata["date"], "speakers": sorted({t.speaker for t in turns}),
        "existing_facts": [it.text for it, _ in near], "turn_ids": list(ep.turn_ids)}, stage="construction")
    if res.error:
        host.emit("updated", [ep], f"semantic_facts failed: {res.error}", error=res.error)
    facts = [f for f in (_get(res.output, "facts", None) or []) if str(_get(f, "text", "")).strip()]
    if not facts:
        return
    vecs = host.embed_texts([str(_get(f, "text")) for f in facts])
    for f, v in zip(facts, vecs, strict=True):
        tids = [t for t in (_get(f, "turn_ids", None) or []) if t in ep.turn_ids] or list(ep.turn_ids)
        dup = host.memory.search("semantic", v, 1)
        if dup and dup[0][1] >= host.config.dup_cos:
            sem = dup[0][0]
            sem.sources = list(dict.fromkeys([*sem.sources, ep.id]))
            sem.turn_ids = sorted(set(sem.turn_ids) | set(tids), key=turn_sort_key)
            host.memory.touch(sem, host.step)
            if sem.metadata.get("theme") in host.memory:  # refresh the theme's turn ids
                host.set_members(host.memory.get(sem.metadata["theme"]), host.members(sem.metadata["theme"]))
            host.emit("linked", [sem, ep], f"fact repeats {sem.id} (cos {dup[0][1]:.2f}): episode linked",
                      cos=round(dup[0][1], 4))
            continue
        sem = host.new_item("semantic", str(_get(f, "text")), [ep.id], tids, vector=v,
                            type=str(_get(f, "type", "") or ""), date=ep.metadata["date"], theme="")
        host.emit("created", [sem], f"fact distilled from {ep.id}", episode=ep.id, type=sem.metadata["type"],
                  prompt="recmem_typed")
        host.attach(sem)
