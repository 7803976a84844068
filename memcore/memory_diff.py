"""Memory diff: what changed in one memory between two steps, or between two memories of one conversation
(two variants of a system) at the same step.

Per memory kind: the items added, changed (a word diff of the text; other fields that differ are named) and
removed, each with its causes: the step a version began or ended, the turn at that step and the stored events
of that item at that step. Read from a MemoryView's item versions and events only (nothing is rebuilt).

A memory's items at step t are the versions with valid_from <= t < valid_to (the state after turn t); step 0 is
before turn 1, step len(turns) + 1 the end of the conversation (systems flush their buffers).
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from memcore.errors import MemcoreError
from memcore.store.view import MemoryView
from memcore.types import Conversation, Event, MemoryItem

Change = Literal["added", "changed", "removed"]
CHANGES: tuple[Change, ...] = ("added", "changed", "removed")
_WORDS = re.compile(r"\S+|\s+")


@dataclass(frozen=True)
class Cause:
    """One step that made a change: its turn (id and text, "" outside the turns) and the item's events there."""

    side: str  # "" for a diff between steps; "A" or "B" between two memories
    step: int
    turn: str  # "turn 5 (D1:5)", "before turn 1", "end of conversation"
    turn_id: str
    turn_text: str
    events: list[dict[str, str]]  # {kind, reason} of the stored events naming the item at that step


@dataclass(frozen=True)
class ItemChange:
    """One item added, changed or removed, with the text before and after and the word diff."""

    kind: str
    item_id: str
    change: Change
    before: str | None
    after: str | None
    diff: list[tuple[str, str]]  # word segments: ("=", same) ("-", removed) ("+", added); changed items only
    fields: list[str]  # other fields that differ (sources, turn_ids, metadata.<key> for each metadata key)
    causes: list[Cause]


@dataclass(frozen=True)
class Side:
    """One side of a diff: which memory, at which step."""

    label: str
    system: str
    space: str
    step: int


@dataclass
class MemoryDiff:
    """The diff of memory A (before / baseline) against memory B (after / compared), per kind."""

    mode: Literal["steps", "memories"]
    conv_id: str
    a: Side
    b: Side
    changes: dict[str, list[ItemChange]] = field(default_factory=dict)  # kind -> changes (added, changed, removed)
    kinds: list[str] = field(default_factory=list)  # every kind either side holds
    unchanged: dict[str, int] = field(default_factory=dict)  # kind -> items equal on both sides
    raw_turns: dict[str, int] = field(default_factory=dict)  # side label -> turns indexed, for a memory without items
    notes: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        """Whether nothing was added, changed or removed."""
        return not any(self.changes.values())

    def counts(self) -> dict[str, dict[str, int]]:
        """Per kind: the number of items added, changed, removed and unchanged."""
        return {k: {**{c: sum(x.change == c for x in self.changes.get(k, [])) for c in CHANGES},
                    "unchanged": self.unchanged.get(k, 0)} for k in self.kinds}

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the CLI's --json)."""
        return {"mode": self.mode, "conv_id": self.conv_id, "a": asdict(self.a), "b": asdict(self.b),
                "empty": self.empty, "counts": self.counts(), "raw_turns": self.raw_turns, "notes": self.notes,
                "changes": {k: [asdict(c) for c in v] for k, v in self.changes.items()}}


def word_diff(before: str, after: str) -> list[tuple[str, str]]:
    """Word-level diff (difflib): consecutive segments ("=", text), ("-", text), ("+", text)."""
    a, b = _WORDS.findall(before), _WORDS.findall(after)
    out: list[tuple[str, str]] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            out.append(("=", "".join(a[i1:i2])))
            continue
        if i2 > i1:
            out.append(("-", "".join(a[i1:i2])))
        if j2 > j1:
            out.append(("+", "".join(b[j1:j2])))
    return out


_ABSENT = object()


def _same(x: Any, y: Any) -> bool:
    """Equal as stored values: a tuple equals its list, NaN equals NaN, a number its numpy scalar."""
    return x is y or json.dumps(x, sort_keys=True, default=str) == json.dumps(y, sort_keys=True, default=str)


def _fields(a: MemoryItem, b: MemoryItem) -> list[str]:
    """The other fields that differ: sources, turn_ids, and each metadata key by name (`metadata.label`); none
    when the values are equal as stored (a tuple and its list, NaN and NaN)."""
    out = [f for f in ("sources", "turn_ids") if not _same(list(getattr(a, f) or []), list(getattr(b, f) or []))]
    ma, mb = a.metadata or {}, b.metadata or {}
    return out + [f"metadata.{k}" for k in sorted(set(ma) | set(mb), key=str)
                  if not _same(ma.get(k, _ABSENT), mb.get(k, _ABSENT))]


def _turn(conv: Conversation, step: int) -> tuple[str, str, str]:
    if 1 <= step <= len(conv.turns):
        t = conv.turns[step - 1]
        return f"turn {step} ({t.turn_id})", t.turn_id, t.text
    return ("before turn 1", "", "") if step <= 0 else ("end of conversation", "", "")


class _Causes:
    """The events of one memory indexed by (step, item id), and the step -> turn labels."""

    def __init__(self, conv: Conversation, events: list[Event], side: str = "") -> None:
        self.conv, self.side = conv, side
        self.by: dict[tuple[int, str], list[dict[str, str]]] = {}
        for e in events:
            for iid in e.item_ids:
                self.by.setdefault((e.step, iid), []).append({"kind": e.kind, "reason": e.reason,
                                                              "item_kind": e.item_kind})

    def at(self, steps: list[int], item_id: str, kind: str) -> list[Cause]:
        """One cause per step: every event naming the item there, those about its own kind first (an event about
        another item may name it too: a fact attached to a theme names both)."""
        out = []
        for s in sorted(set(steps)):
            evs = sorted(self.by.get((s, item_id), []), key=lambda e: e["item_kind"] != kind)
            out.append(Cause(self.side, s, *_turn(self.conv, s),
                             [{"kind": e["kind"], "reason": e["reason"]} for e in evs]))
        return out


def _check_step(mem: MemoryView, step: int, label: str, ck: dict | None = None) -> None:
    ck = mem.checkpoint() if ck is None else ck
    if ck is None:
        raise MemcoreError(f"{label}: no stored memory of {mem.system} on {mem.conv_id} with these settings. Fix: "
                           "build it first (`memcore ingest`, or Build on Replay)")
    if step < 0 or step > int(ck["step"]):
        raise MemcoreError(f"{label}: step {step} is outside 0..{int(ck['step'])}, the steps this memory is built "
                           f"to{'' if ck['done'] else ' (its ingest is not complete: finish it to see later steps)'}")


def _indexed(events: Sequence[Event], lo: int, hi: int) -> int:
    return sum(e.kind == "indexed" and lo < e.step <= hi for e in events)


ItemsAt = Callable[[str, int], Sequence[MemoryItem] | None]  # None: not held, diff_steps reads them
MAX_IDS_READ = 500  # changed items read by id; more: every version alive between the two steps, filtered here


def diff_steps(mem: MemoryView, conv: Conversation, a: int, b: int, *, versions: pd.DataFrame | None = None,
               events: Sequence[Event] | None = None, items_at: ItemsAt | None = None,
               checkpoint: dict | None = None) -> MemoryDiff:
    """What changed in one memory from step `a` to step `b` (a < b; swapped when given the other way).

    Only an item with a version beginning or ending after `a` up to `b` can differ: any other item alive at both
    steps is the same stored version at both and counts as unchanged without being read. A caller that holds them
    already may give `versions` (mem.versions()), `events` (mem.events(), or any of them that holds the steps a+1..b)
    and `items_at(kind, step)` (what mem.items(kind, step) holds, e.g. from a cache; None for a kind it does not hold
    yet: that kind's changed items are read), and the memory's `checkpoint` ({"step", "done"}: the steps are checked
    against it): the diff is the same."""
    ck = mem.checkpoint() if checkpoint is None else checkpoint
    for s, lab in ((a, "from"), (b, "to")):  # checked as given, so an error names the step the user gave
        _check_step(mem, s, f"{mem.system} ({lab} step {s})", ck)
    a, b = min(a, b), max(a, b)
    out = MemoryDiff("steps", conv.id, Side(f"step {a}", mem.system, mem.space, a),
                     Side(f"step {b}", mem.system, mem.space, b))
    versions = mem.versions() if versions is None else versions
    evs = [e for e in (mem.events(b) if events is None else events) if a < e.step <= b]
    if versions.empty:
        out.raw_turns[mem.system] = _indexed(evs, a, b)
        out.notes.append(f"{mem.system} holds no memory items of its own: it indexes the raw turns "
                         f"({out.raw_turns[mem.system]} turn(s) indexed after step {a} up to step {b}).")
        return out
    causes = _Causes(conv, evs)
    out.kinds = sorted(set(versions["kind"]))
    for kind in out.kinds:
        vk = versions[versions["kind"] == kind]
        ids = vk["id"].to_numpy(dtype=object)
        vf, vt = vk["valid_from"].to_numpy(dtype=np.int64), vk["valid_to"].to_numpy(dtype=np.int64)
        starts: dict[str, list[int]] = {}
        ends: dict[str, list[int]] = {}
        for i in np.flatnonzero(((a < vf) & (vf <= b)) | ((a < vt) & (vt <= b))):  # in the versions' order
            if a < vf[i] <= b:
                starts.setdefault(ids[i], []).append(int(vf[i]))
            if a < vt[i] <= b:
                ends.setdefault(ids[i], []).append(int(vt[i]))
        touched = set(starts) | set(ends)
        both = len(set(ids[(vf <= a) & (vt > a)]) & set(ids[(vf <= b) & (vt > b)]))
        held = (items_at(kind, a), items_at(kind, b)) if items_at is not None and touched else (None, None)
        if not touched:
            before, after = {}, {}
        elif held[0] is not None and held[1] is not None:
            before = {it.id: it for it in held[0] if it.id in touched}
            after = {it.id: it for it in held[1] if it.id in touched}
        else:  # one read of the changed items' versions alive from a to b (every version alive then, for many)
            items, valid_to = mem.kind_versions(kind, touched if len(touched) <= MAX_IDS_READ else None, (a, b))
            alive = [(it, int(vt)) for it, vt in zip(items, valid_to, strict=True) if it.id in touched]
            before = {it.id: it for it, vt in alive if it.updated_step <= a < vt}
            after = {it.id: it for it, vt in alive if it.updated_step <= b < vt}
        rows: list[ItemChange] = []
        for iid, it in after.items():
            if iid not in before:
                rows.append(ItemChange(kind, iid, "added", None, it.text, [], [], causes.at(starts.get(iid, []), iid, kind)))
            elif it.text != before[iid].text or _fields(before[iid], it):
                rows.append(ItemChange(kind, iid, "changed", before[iid].text, it.text,
                                       word_diff(before[iid].text, it.text), _fields(before[iid], it),
                                       causes.at(starts.get(iid, []) + ends.get(iid, []), iid, kind)))
        for iid, it in before.items():
            if iid not in after:
                rows.append(ItemChange(kind, iid, "removed", it.text, None, [], [],
                                       causes.at(ends.get(iid, []), iid, kind)))
        out.unchanged[kind] = both - sum(r.change == "changed" for r in rows)
        out.changes[kind] = sorted(rows, key=lambda r: (CHANGES.index(r.change), _order(r.item_id)))
    return out


def diff_memories(mem_a: MemoryView, mem_b: MemoryView, conv: Conversation, step: int,
                  labels: tuple[str, str] = ("A", "B")) -> MemoryDiff:
    """Memory B against memory A (two memory spaces of one conversation, e.g. two variants) at one step.

    Items equal in kind and text on both sides are unchanged (under any id: ids count in creation order, so
    one extra item early shifts the later ids); of the rest, the same id on both sides is a changed item,
    and the others are added (only in B) or removed (only in A). Causes: the step each side's version began,
    its turn and that memory's events of the item there."""
    for mem, lab in ((mem_a, labels[0]), (mem_b, labels[1])):
        _check_step(mem, step, lab)
    out = MemoryDiff("memories", conv.id, Side(labels[0], mem_a.system, mem_a.space, step),
                     Side(labels[1], mem_b.system, mem_b.space, step))
    if mem_a.space == mem_b.space:
        out.notes.append(f"{labels[0]} and {labels[1]} are the same memory (their settings build the same memory "
                         f"space {mem_a.space}): nothing can differ.")
    va, vb = mem_a.versions(), mem_b.versions()
    for mem, v, lab in ((mem_a, va, labels[0]), (mem_b, vb, labels[1])):
        if v.empty:
            out.raw_turns[lab] = _indexed(mem.events(step), 0, step)
            out.notes.append(f"{lab}{'' if lab == mem.system else f' ({mem.system})'} holds no memory items of its own: it indexes the raw turns "
                             f"({out.raw_turns[lab]} turn(s) indexed up to step {step}).")
    out.kinds = sorted(set(va["kind"]) | set(vb["kind"]))
    ca, cb = _Causes(conv, mem_a.events(step), "A"), _Causes(conv, mem_b.events(step), "B")
    for kind in out.kinds:
        xa = {it.id: it for it in mem_a.items(kind, step, with_vectors=False)}
        xb = {it.id: it for it in mem_b.items(kind, step, with_vectors=False)}
        same = _match_text(xa, xb)
        out.unchanged[kind] = len(same)
        ra = {i: it for i, it in xa.items() if i not in same}
        rb = {i: it for i, it in xb.items() if i not in same.values()}
        rows: list[ItemChange] = []
        for iid, it in rb.items():
            cb_ = cb.at([it.updated_step], iid, kind)
            if iid in ra:
                rows.append(ItemChange(kind, iid, "changed", ra[iid].text, it.text, word_diff(ra[iid].text, it.text),
                                       _fields(ra[iid], it), ca.at([ra[iid].updated_step], iid, kind) + cb_))
            else:
                rows.append(ItemChange(kind, iid, "added", None, it.text, [], [], cb_))
        for iid, it in ra.items():
            if iid not in rb:
                rows.append(ItemChange(kind, iid, "removed", it.text, None, [], [], ca.at([it.updated_step], iid, kind)))
        out.changes[kind] = sorted(rows, key=lambda r: (CHANGES.index(r.change), _order(r.item_id)))
    if out.kinds:
        out.notes.append("Items equal in kind and text count as unchanged under any id; a changed item is the "
                         "same id holding different text or links on the two sides.")
    return out


def _match_text(xa: dict[str, MemoryItem], xb: dict[str, MemoryItem]) -> dict[str, str]:
    """A's id -> B's id of items with the same text (the same id first, then the first free one in id order)."""
    out = {i: i for i, it in xa.items() if i in xb and xb[i].text == it.text and not _fields(it, xb[i])}
    free: dict[str, list[str]] = {}
    for i in sorted(xb, key=_order):
        if i not in out.values():
            free.setdefault(xb[i].text, []).append(i)
    for i in sorted(xa, key=_order):
        if i not in out and free.get(xa[i].text):
            out[i] = free[xa[i].text].pop(0)
    return out


def _order(item_id: str) -> tuple:
    """Natural order of ids (episode-2 before episode-10)."""
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", item_id))
