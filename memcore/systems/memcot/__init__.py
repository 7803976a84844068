"""MemCoT: an iterative memory-reasoning loop over the flat turn index.

Paper: "MemCoT: Test-Time Scaling through Memory-Driven Chain-of-Thought"
(../shared/papers/002_*.txt). Each step: zoom-in (top-K turns per query in the queue,
de-duplicated and shown in conversation order with dates; the `memcot_zoom_in` role keeps the
useful ones and says what is missing), zoom-out (+-W turns around each useful hit within its
session; the `memcot_zoom_out` role picks useful lines), then the `memcot_judge` role decides:
answer, or Break / Delete the query into at most two new ones. Short-term memory = the growing
list of picked turns (semantic part) + the failed-query trajectory (episodic part; the last
three are fed back, and no failed query is ever issued again; when the judge proposes only issued
queries it is asked again, up to judge_retries times). The loop answers when the judge can, at step
J-1, or when no new query is left; the responder (the reader: LoCoMo's / LongMemEval's standard prompt,
temperature 1.0) reads the short-term memory. The full conversation replaces it as `fallback`
says (default "abstain": the loop ended without an answer, i.e. with an empty short-term memory or
with the responder abstaining from it, as papers/README.md specifies). Trace structure: `steps` (iterations
run, paper: 1.87 on LoCoMo) and `fallback` (whether the full conversation was the context).
The paper's panoramic visual grounding (page images) has no counterpart on text-only data: memcore has no
visual module, and `visual_grounding` says so (the w/o visual grounding ablation only notes itself).
Settings: .config; the paper's ablations and sweeps as named presets: .presets.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from memcore.llm.roles.readers import ABSTENTIONS, Reader
from memcore.systems import register_system
from memcore.systems.base import BaseSystem, render_context, turn_sort_key
from memcore.systems.memcot import presets as _presets  # noqa: F401  (registers this system's ablations, sweeps)
from memcore.systems.memcot import reader as _reader  # noqa: F401  (registers its reader family)
from memcore.systems.memcot import roles as _roles  # noqa: F401  (registers this system's LLM roles)
from memcore.systems.memcot.config import FALLBACKS, MemCoTConfig, ablation_notes
from memcore.systems.memcot.fidelity import FIDELITY
from memcore.systems.memcot.stats import MECHANISM
from memcore.types import Candidate, Question, Trace, TraceItem, Turn


def _norm(q: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", q.lower()))


def line(t: Turn) -> str:
    """How a turn is shown to the MemCoT roles: "D3:5 [date] Speaker: text"."""
    return f"{t.turn_id} [{t.session_date}] {t.speaker}: {t.content}"


@register_system
class MemCoTSystem(BaseSystem):
    """Zoom-in / zoom-out perception and a judge-driven query loop over raw turns."""

    name = "memcot"
    rank = 60
    title = "MemCoT (memory-driven chain of thought)"
    paper = "002"
    reader_family = "memcot"  # its paper's reader prompts (reader.py)
    config_class = MemCoTConfig
    mechanism = MECHANISM
    fidelity = FIDELITY

    def __init__(self, *a: Any, **kw: Any) -> None:
        super().__init__(*a, **kw)
        self.by_id = {t.turn_id: t for t in self.conv.turns}

    @property
    def window(self) -> int:
        """The zoom-out half-width in force for this conversation."""
        return self.config.W_longmemeval if self.conv.source == "longmemeval" else self.config.W

    def on_turn(self, turn: Turn) -> None:
        self.emit("indexed", [turn.turn_id], "turn stored in the long-term memory (flat index, position kept "
                  "for zoom-out)", item_kind="turn", session=turn.session, index=turn.index)

    def _item(self, t: Turn) -> dict[str, Any]:
        return {"id": t.turn_id, "date": t.session_date, "speaker": t.speaker, "text": t.content}

    def _ids(self, raw: list, shown: Iterable[str]) -> list[str]:
        """Valid turn ids from a role's id list (dialogue ids, or 1-based positions in `shown`)."""
        shown = list(shown)
        out: list[str] = []
        for x in raw:
            s = str(x).strip().strip("[]'\"")
            if s.isdigit() and 1 <= int(s) <= len(shown) and s not in shown:
                s = shown[int(s) - 1]
            if s in shown and s not in out:
                out.append(s)
        return out

    def _windows(self, centres: list[str]) -> list[list[str]]:
        """Merged +-W windows around the centres, each within one session, in conversation order."""
        spans: list[tuple[int, int]] = []
        turns = self.conv.turns
        for tid in sorted(centres, key=turn_sort_key):
            t = self.by_id[tid]
            lo, hi = t.index, t.index
            while lo > 0 and t.index - lo < self.window and turns[lo - 1].session == t.session:
                lo -= 1
            while hi + 1 < len(turns) and hi - t.index < self.window and turns[hi + 1].session == t.session:
                hi += 1
            if spans and lo <= spans[-1][1] + 1 and turns[spans[-1][1]].session == t.session:
                spans[-1] = (spans[-1][0], max(hi, spans[-1][1]))
            else:
                spans.append((lo, hi))
        return [[turns[i].turn_id for i in range(lo, hi + 1)] for lo, hi in spans]

    def retrieve(self, question: Question) -> Trace:
        cfg = self.config
        tr = self.new_trace(question)
        tr.stages = ["zoom_in", "zoom_out", "judge"] if cfg.zoom_out else ["zoom_in", "judge"]
        tr.notes += ablation_notes(cfg)
        speakers = list(self.conv.speakers)
        queue, issued, failed = [question.text], {_norm(question.text)}, []
        stm: dict[str, str] = {}  # picked turn id -> where it was picked (semantic short-term memory)
        iterations: list[dict[str, Any]] = []
        answered, reason = False, ""
        for step in range(1, cfg.J + 1):
            base = {"query": question.text, "queries": queue, "failed": list(failed),
                    "failed_text": failed or ["(none)"], "speakers": speakers}
            hits = self._zoom_in_hits(queue)
            known = [line(self.by_id[i]) for i in sorted(stm, key=turn_sort_key)] or ["(nothing yet)"]
            zi = self.llm.run("memcot_zoom_in", {
                **base, "known": known, "results": [line(self.by_id[h]) for h in hits],
                "items": [self._item(self.by_id[h]) for h in hits]}, stage="retrieval",
                temperature=cfg.temperature_perception, seed=cfg.seed)
            useful = self._ids(zi.output.useful_ids, hits)
            if zi.error:
                tr.errors.append(f"step {step}: {zi.error}")
                tr.notes.append(f"step {step}: zoom-in role unusable; every zoom-in hit treated as useful")
                useful = list(hits)
            for r, h in enumerate(hits, start=1):
                tr.candidates.append(self.candidate("zoom_in", h, r, h in useful, f"zoom-in role did not mark "
                                                    f"it useful (step {step})", score=hits[h][1], step=step,
                                                    query=hits[h][0]))
            wins = self._windows(useful) if cfg.zoom_out else []  # w/o zoom-out (Table 4): no window, no call
            flat = [tid for w in wins for tid in w]
            picked_out: list[str] = []
            if cfg.zoom_out:
                zo = self.llm.run("memcot_zoom_out", {
                    **base, "known": known, "windows": ["\n".join(line(self.by_id[t]) for t in w) for w in wins],
                    "items": [{**self._item(self.by_id[t]), "window": k} for k, w in enumerate(wins) for t in w]},
                    stage="retrieval", temperature=cfg.temperature_perception, seed=cfg.seed)
                picked_out = self._ids(zo.output.useful_ids, flat)
                if zo.error:
                    tr.errors.append(f"step {step}: {zo.error}")
                    tr.notes.append(f"step {step}: zoom-out role unusable; kept the zoom-in picks only")
            picked = list(dict.fromkeys(useful + picked_out))
            for r, tid in enumerate(flat, start=1):
                tr.candidates.append(self.candidate("zoom_out", tid, r, tid in picked, f"zoom-out role did not "
                                                    f"pick it (step {step})", step=step, centre=tid in useful))
            for tid in picked:
                stm.setdefault(tid, f"step {step} " + ("zoom-in" if tid in useful else "zoom-out"))
            shown = list(dict.fromkeys([*sorted(stm, key=turn_sort_key), *hits]))
            jd, new, retries = self._judge(base, stm, hits, issued)
            j = jd.output
            for tid in self._ids(j.useful_id, shown):
                stm.setdefault(tid, f"step {step} judge")
            for r, tid in enumerate(shown, start=1):
                tr.candidates.append(self.candidate("judge", tid, r, tid in stm, f"not picked by zoom-out nor "
                                                    f"marked useful by the judge (step {step})", step=step))
            iterations.append({
                "step": step, "queries": list(queue), "zoom_in_hits": list(hits), "useful": useful,
                "missing": zi.output.missing_information, "zoom_out_windows": wins, "picked": picked,
                "judge": {"useful_id": [str(x) for x in j.useful_id], "can_answer": j.can_answer,
                          "action": j.action, "new_queries": list(j.new_queries), "thinking": j.thinking,
                          "error": jd.error, "retries": retries},
                "action": j.action, "accepted_queries": new, "failed": list(failed)})
            if jd.error:
                tr.errors.append(f"step {step}: {jd.error}")
                tr.notes.append(f"step {step}: judge role unusable; answering from the short-term memory"
                                if stm else f"step {step}: judge role unusable and nothing picked")
                answered, reason = bool(stm), "judge role unusable"
                break
            if j.can_answer and stm:
                answered, reason = True, f"judge can answer at step {step}"
                break
            if step >= cfg.J - 1:
                answered, reason = bool(stm), f"reached step J-1 = {cfg.J - 1}"
                break
            failed = (failed + queue)[-cfg.max_failed:]
            if not new:
                answered = bool(stm)
                reason = (f"no new query at step {step} after {retries} retr{'y' if retries == 1 else 'ies'} "
                          "(every proposed query was already issued)")
                break
            issued.update(_norm(q) for q in new)
            queue = new
        fallback = not answered and cfg.fallback != "never"
        tr.structure = {"iterations": iterations, "stop_reason": reason, "steps": len(iterations),
                        "fallback": fallback, "fallback_mode": cfg.fallback,
                        "answered_from": "full conversation" if fallback else "short-term memory",
                        "J": cfg.J, "K": cfg.K, "W": self.window, "failed_queries": failed,
                        "temperatures": {"perception": cfg.temperature_perception, "judge": cfg.temperature_judge,
                                         "responder": cfg.temperature_responder}, "seed": cfg.seed}
        self.finish_trace(tr, stm, not fallback, reason)
        return tr

    def _judge(self, base: dict[str, Any], stm: dict[str, str], hits: dict[str, tuple[str, float]],
               issued: set[str]) -> tuple[Any, list[str], int]:
        """The judge's decision and its new (never issued) queries; asked again, naming the repeated
        queries, up to judge_retries times while it proposes only issued ones and cannot answer."""
        cfg = self.config
        inputs = {**base, "queries_num": cfg.max_queries, "retry_note": "",
                  "short_memory": [line(self.by_id[i]) for i in sorted(stm, key=turn_sort_key)] or ["(empty)"],
                  "conv_memory": [line(self.by_id[h]) for h in hits] or ["(nothing retrieved)"],
                  "stm_items": [self._item(self.by_id[i]) for i in sorted(stm, key=turn_sort_key)],
                  "conv_items": [self._item(self.by_id[h]) for h in hits]}
        retries = 0
        while True:
            jd = self.llm.run("memcot_judge", inputs, stage="retrieval", temperature=cfg.temperature_judge,
                              seed=cfg.seed)
            j = jd.output
            new = [q for q in (str(x).strip() for x in j.new_queries) if q and _norm(q) not in issued]
            new = list(dict.fromkeys(new))[: cfg.max_queries]
            if new or j.can_answer or jd.error or retries >= cfg.judge_retries:
                return jd, new, retries
            retries += 1
            repeated = [str(q) for q in j.new_queries if str(q).strip()] or ["(no query)"]
            inputs = {**inputs, "failed": list(inputs["failed"]) + repeated,
                      "failed_text": [x for x in inputs["failed_text"] if x != "(none)"] + repeated,
                      "retry_note": f"You just proposed {repeated}: those were already searched. Do NOT repeat "
                                    "them: try the other action, or shorter keyword queries.\n"}

    def _zoom_in_hits(self, queue: list[str]) -> dict[str, tuple[str, float]]:
        """Top-K turns per query, de-duplicated by turn id (best score kept), in conversation order."""
        hits: dict[str, tuple[str, float]] = {}
        for q in queue:
            for row, s in self.search_turns(q, self.config.K):
                tid = row["turn_id"]
                if tid in self.by_id and (tid not in hits or s > hits[tid][1]):
                    hits[tid] = (q, float(s))
        return {tid: hits[tid] for tid in sorted(hits, key=turn_sort_key)}

    def finish_trace(self, tr: Trace, stm: dict[str, str], answered: bool, reason: str) -> None:
        """Items = short-term memory in conversation order, or the full conversation as the fallback."""
        if answered:
            ids = sorted(stm, key=turn_sort_key)
            origin = stm
            if not stm:
                tr.notes.append(f"MemCoT loop ended with an empty short-term memory ({reason}); fallback="
                                f"{self.config.fallback}: the responder reads nothing")
        else:
            ids = [t.turn_id for t in self.conv.turns]
            origin = {i: "full conversation (fallback)" for i in ids}
            tr.notes.append(f"MemCoT loop ended without an answer ({reason}): answering from the full "
                            f"conversation (fallback={self.config.fallback}: {FALLBACKS[self.config.fallback]})")
        for r, tid in enumerate(ids, start=1):
            t = self.by_id[tid]
            tr.items.append(TraceItem(id=tid, kind="turn", text=t.embed_text, score=1.0,
                                      turn_ids=[tid], origin=origin[tid], rank=r,
                                      metadata={"date": t.session_date, "speaker": t.speaker,
                                                "session": t.session}))

    def reader(self, question: Question) -> Reader:
        """The responder: the paper's reader at temperature_responder, with the configured seed."""
        r = super().reader(question)
        return replace(r, temperature=float(self.config.temperature_responder), seed=self.config.seed)

    def generate(self, question: Question, trace: Trace) -> str:
        """The responder's answer; with fallback="abstain" (the authors' code), an abstention from the
        short-term memory is followed by a second answer from the full conversation."""
        text = super().generate(question, trace)
        if (self.config.fallback != "abstain" or trace.structure.get("fallback")
                or not text.strip().lower().startswith(ABSTENTIONS)):
            return text
        trace.structure.update(fallback=True, answered_from="full conversation",
                               abstained_from_memory=text)
        trace.items = []
        self.finish_trace(trace, {}, False, f"the responder abstained from the short-term memory ({text!r})")
        trace.context = render_context(trace.items)
        return super().generate(question, trace)

    @staticmethod
    def candidate(stage: str, tid: str, rank: int, kept: bool, reason: str, score: float = 0.0,
                  **data: Any) -> Candidate:
        """A candidate record for one turn at one stage."""
        return Candidate(stage=stage, id=tid, score=score, rank=rank, kept=kept, turn_ids=[tid],
                         reason="" if kept else reason, data=data)


__all__ = ["MemCoTConfig", "MemCoTSystem", "line"]
