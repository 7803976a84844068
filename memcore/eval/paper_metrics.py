"""Metrics the papers report beside accuracy: retrieval latency, memory footprint, evidence density.

- Retrieval latency (papers/004, Table 2): the retrieve step's wall time per question (`Answer.retrieve_ms`:
  the system's `retrieve`, without the reader's answer call), as p50 and p95 per block of rows
  (`latency_block`, the aggregate of the registered metric "retrieve_ms_p50").
- Memory footprint (papers/004, Table 2): per system and conversation, the current rows per memory kind
  and their payload bytes, read from the store (`LanceStore.footprint`); the conversation's shared raw turns
  (read by every system, stored once) are counted apart (`memory_footprint`).
- Evidence density (Hu et al., papers/001, Sec. 5.2 and Fig. 4): the reference answer's content words
  (stopwords removed, stemmed: memcore.eval.diagnostics.content_words) are the evidence units; a retrieved
  block (context item) is 1-hit when it contains exactly one distinct unit, 2-hit with two, multi-hit with
  three or more. Per question the row stores the block counts (`density_counts`); per group, the share of
  all retrieved blocks in each class (`density_block`; blocks with no unit are in the denominator, as
  the paper's proportions are of all retrieved blocks). Abstention questions have no answer units: left out.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from memcore.eval.diagnostics import content_words
from memcore.eval.metrics import stem_token_set

HIT_CLASSES = ("hit1", "hit2", "multi")
HIT_LABELS = {"hit1": "1-hit", "hit2": "2-hit", "multi": "multi-hit"}
DENSITY_LABEL = ("evidence density (Hu et al., Fig. 4): share of retrieved blocks holding exactly 1, 2 or >= 3 "
                 "distinct content words of the reference answer (stopwords removed, stemmed)")
FOOTPRINT_LABEL = ("memory footprint: current rows per memory kind and their payload bytes (UTF-8 bytes of every "
                   "string, 4 per float32 vector value and int32 field); the shared raw turns counted apart")
__all__ = ["DENSITY_LABEL", "FOOTPRINT_LABEL", "HIT_CLASSES", "HIT_LABELS", "density_block", "density_by_category",
           "density_counts", "latency_block", "memory_footprint"]


def _percentile(values: list[float], q: float) -> float | None:
    """The q-th percentile (linear interpolation, numpy's default), 3 decimals; None when empty."""
    return round(float(np.percentile(values, q)), 3) if values else None


def latency_block(rows: list[dict]) -> dict[str, float | None]:
    """{"retrieve_ms_p50", "retrieve_ms_p95"} over the rows that measured it (None when none did)."""
    vals = [float(r["retrieve_ms"]) for r in rows if r.get("retrieve_ms") is not None]
    return {"retrieve_ms_p50": _percentile(vals, 50), "retrieve_ms_p95": _percentile(vals, 95)}


def density_counts(blocks: Iterable[str], gold_answer: Any) -> dict[str, int] | None:
    """One question's retrieved blocks by hit class: {"blocks", "hit1", "hit2", "multi"}; None when the answer
    has no content words (nothing to hit)."""
    units = content_words(gold_answer)
    if not units:
        return None
    out = {"blocks": 0, "hit1": 0, "hit2": 0, "multi": 0}
    for block in blocks:
        out["blocks"] += 1
        hits = len(units & stem_token_set(block))
        if hits:
            out[HIT_CLASSES[min(hits, 3) - 1]] += 1
    return out


def density_block(rows: list[dict]) -> dict[str, Any]:
    """A group's evidence density: {"questions", "blocks", "hit1", "hit2", "multi"} with each class the share of
    all retrieved blocks (None without blocks); rows without the field (older runs, abstention) left out."""
    counts = [r["evidence_density"] for r in rows if r.get("evidence_density")]
    blocks = sum(c["blocks"] for c in counts)
    out: dict[str, Any] = {"questions": len(counts), "blocks": blocks}
    for k in HIT_CLASSES:
        out[k] = round(sum(c[k] for c in counts) / blocks, 6) if blocks else None
    return out


def density_by_category(rows: list[dict]) -> dict[str, Any]:
    """{"overall": density_block(rows), "categories": {category: density_block}} for one system's rows."""
    cats: dict[str, list[dict]] = {}
    for r in rows:
        cats.setdefault(str(r.get("category")), []).append(r)
    return {"overall": density_block(rows),
            "categories": {c: density_block(rs) for c, rs in sorted(cats.items(), key=lambda kv: (len(kv[0]), kv[0]))}}


def memory_footprint(store: Any, spaces: dict[str, str], conv_ids: list[str]) -> dict[str, dict[str, Any]]:
    """Per system: {"space", "conversations": {conv_id: {"kinds": {kind: {"rows", "bytes"}}, "rows", "bytes",
    "shared_turns": {"rows", "bytes"}}}, "rows", "bytes", "shared_turns"} (totals over its conversations; the
    shared turns apart, never in rows/bytes). `spaces`: system -> the memory space its run read."""
    turns = {c: store.footprint(None, c) for c in conv_ids}
    out: dict[str, dict[str, Any]] = {}
    for name, space in spaces.items():
        convs = {}
        for c in conv_ids:
            kinds = store.footprint(space, c)
            convs[c] = {"kinds": kinds, "rows": sum(k["rows"] for k in kinds.values()),
                        "bytes": sum(k["bytes"] for k in kinds.values()),
                        "shared_turns": turns[c].get("turns", {"rows": 0, "bytes": 0})}
        out[name] = {"space": space, "conversations": convs, "rows": sum(v["rows"] for v in convs.values()),
                     "bytes": sum(v["bytes"] for v in convs.values()),
                     "shared_turns": {k: sum(v["shared_turns"][k] for v in convs.values()) for k in ("rows", "bytes")}}
    return out


def report_lines(results: dict[str, Any]) -> list[str]:
    """The text report's paper-metric lines per system: retrieval latency p50/p95, memory footprint, density."""
    out = []
    for name, s in results.get("systems", {}).items():
        o = s.get("overall") or {}
        parts = []
        if o.get("retrieve_ms_p50") is not None:
            parts.append(f"retrieval p50 {o['retrieve_ms_p50']:.1f} ms, p95 {o['retrieve_ms_p95']:.1f} ms")
        fp = s.get("footprint")
        if fp:
            sh = fp.get("shared_turns") or {}
            parts.append(f"memory {fp['rows']} rows, {fp['bytes']:,} bytes (+ shared raw turns {sh.get('rows', 0)} "
                         f"rows, {sh.get('bytes', 0):,} bytes)")
        d = (s.get("evidence_density") or {}).get("overall") or {}
        if d.get("blocks"):
            parts.append("density " + ", ".join(f"{HIT_LABELS[k]} {d[k]:.1%}" for k in HIT_CLASSES)
                         + f" of {d['blocks']} blocks")
        if parts:
            out.append(f"  {name}: " + "; ".join(parts))
    return out
