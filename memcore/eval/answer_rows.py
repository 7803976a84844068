"""The rows of an answer as the comparison table and the export show them: evidence hits and misses (where each
was lost), the verdict, context size, tokens, calls and latency (memcore.viz.evidence draws them; bundles export
them)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memcore.eval.diagnostics import evidence_hits, locate_missed_evidence
from memcore.eval.fallbacks import answer_fallbacks
from memcore.text.tokens import count_tokens
from memcore.types import Answer
from memcore.viz.evidence import STATUS_TEXT, usage_dict, usage_tokens, verdict_text

__all__ = ["FALLBACK_SHORT", "NOT_RETRIEVED", "answer_summary", "export_row"]

FALLBACK_SHORT = {"full_conversation": "whole conversation", "backfill_only": "backfill only",
                  "unusable_reply": "unusable reply"}  # memcore.eval.fallbacks' kinds, as a table cell says them
NOT_RETRIEVED = {"full_conversation", "backfill_only"}  # fallbacks whose context the system did not retrieve


def answer_summary(system: str, answer: Answer, evidence: list[str] | str | None,
                   verdict: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """One row of the comparison table: the retriever, the fallback behind the answer (memcore.eval.fallbacks;
    "none"), evidence hits (an answer from a fallback context, the whole conversation or backfill only, gets no
    evidence recall: its retrieval found nothing), then the verdict and F1 when given ({"correct", "f1"}: a
    dataset question's judgement), the answer, context size, tokens, latency."""
    tr = answer.trace
    hits = evidence_hits(tr, evidence)
    rec = hits.recall
    kinds = answer_fallbacks(tr)
    borrowed = bool(NOT_RETRIEVED & set(kinds))  # the context is not the system's retrieval: no recall credited
    count = f"{len(hits.hit)}/{len(hits.gold)}" if hits.gold else "n/a"
    row: dict[str, Any] = {"system": system, "retriever": tr.retriever,
                           "fallback": ", ".join(FALLBACK_SHORT[k] for k in kinds) or "none",
                           "evidence hits": f"{count} (fallback context)" if borrowed and hits.gold else count,
                           "evidence recall": None if rec is None or borrowed else round(rec, 3)}
    if verdict is not None:
        f1 = verdict.get("f1")
        row |= {"verdict": verdict_text(verdict), "F1": None if f1 is None else round(float(f1), 3)}
    return row | {"answer": answer.text, "context items": len(tr.items),
                  "context tokens": count_tokens(tr.context) if tr.context else 0,
                  "tokens": sum(usage_tokens(u) for u in answer.usage.values()),
                  "LLM calls": sum(usage_dict(u).get("calls", 0) for u in answer.usage.values()),
                  "latency ms": round(answer.latency_ms, 1), "error": answer.error}


def export_row(system: str, answer: Answer, evidence: list[str] | str | None,
               verdict: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """answer_summary's row as exported, with what the page shows beside it: each gold evidence turn hit or
    missed (a miss with where it was lost), and the verdict's judge and its reason (or why it could not judge);
    `variant` is the answer's canonical variant name (its system for a plain one)."""
    row = answer_summary(system, answer, evidence, verdict)
    hits = evidence_hits(answer.trace, evidence)
    lost = {m["turn_id"]: STATUS_TEXT.get(m["status"], m["status"]) + (f" at {m['stage']}" if m["stage"] else "")
            for m in locate_missed_evidence(answer.trace, evidence)}
    head = {k: row.pop(k) for k in ("system", "retriever", "fallback", "evidence hits", "evidence recall")}
    head = {"system": head.pop("system"), "variant": answer.trace.variant, **head}  # the canonical variant answering
    head |= {"evidence hit": ", ".join(hits.hit),
             "evidence missed": "; ".join(f"{t} ({lost[t]})" for t in hits.gold if t in lost)}
    if verdict is not None:
        head |= {"verdict": row.pop("verdict"), "F1": row.pop("F1"), "judge": verdict.get("judge") or "",
                 "judge reason": verdict.get("error") or verdict.get("reason") or ""}
    return head | row
