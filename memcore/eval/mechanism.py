"""Mechanism statistics: what each memory system's own mechanism did over an evaluation run.

Scores say how well a system answered; these say whether its mechanism ran as the paper describes
(e.g. CoM chains that all stop at length 1 are plain top-3 retrieval). Two steps:
- per question, `question_stats(system, structure)` reads the answer trace's `structure` into a few
  numbers, stored in the result row as `mechanism` (rows stored before this existed have none and
  are left out);
- per run, `summarize(system, rows, construction)` turns them into `results["systems"][name]
  ["mechanism"]`; `construction` is the system's ingest usage from the ledger (calls).

What each system reports (trace fields read, all in `Trace.structure`):
- com: `chain_length_mean`, `chain_length_hist` {length: chains} over every chain of every question
  (`chains[].members`; a chain of length 1 is its anchor alone), `chains_per_question`;
- memcot: `steps_mean` (`steps`; the paper reports 1.87 on LoCoMo), `fallback_rate` = share of
  questions answered from the full conversation (`answered_from == "full conversation"`);
- xmemory: `reassignment_ratio` = mean over conversations of the memory's theme reassignment ratio
  (`reassignment_ratio`, a property of the built memory), `stage2_probes_mean` = Stage II episode
  probes per question (`episodes[]` whose `decision` is not "not probed");
- recmem: `consolidations` = consolidations fired, summed over conversations (`exchanges.consolidations`
  of the built memory), `units` (`exchanges.units`), `calls_per_unit` = construction LLM calls / units;
- memweaver: `seeds_mean` (`budgets.used.seed_triples`), `passages_forced_mean` (`passages[]` with
  `why == "forced-global"`), `triples_selected_mean` (chosen by the Eq. 10 LLM triple selector) and
  `triples_backfilled_mean` (added after it) from the trace field `triple_selector = {"enabled": bool,
  "selected": [relation ids], "backfill": [relation ids]}`; None, with `triples_selected_note` saying
  why, when no trace carries that field or the selector is off.
Systems without an entry (baselines, plugins) get an empty block. Means are over questions (or
chains, or conversations, as named); None when there is nothing to average.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Structure = dict[str, Any]
Stats = dict[str, Any]

FULL_CONVERSATION = "full conversation"
FORCED = "forced-global"
SELECTOR_KEY = "triple_selector"


@dataclass(frozen=True)
class Mechanism:
    """How to read one system's mechanism: per-question numbers, and their run-level summary."""

    system: str
    per_question: Callable[[Structure], Stats]
    summarize: Callable[[list[Stats], dict[str, Any]], Stats]


MECHANISMS: dict[str, Mechanism] = {}


def register_mechanism(mechanism: Mechanism) -> Mechanism:
    """Add (or replace) the mechanism statistics of a system."""
    MECHANISMS[mechanism.system] = mechanism
    return mechanism


def question_stats(system: str, structure: Structure | None) -> Stats | None:
    """The per-question mechanism numbers of a trace structure, or None for a system without any."""
    mech = MECHANISMS.get(system)
    if mech is None or not isinstance(structure, dict):
        return None
    try:
        return mech.per_question(structure)
    except (KeyError, TypeError, ValueError, AttributeError) as e:  # a trace of another shape: say so, score on
        return {"error": f"unreadable trace structure ({type(e).__name__}: {e})"}


def summarize(system: str, rows: list[dict[str, Any]], construction: dict[str, Any] | None = None) -> Stats:
    """The run-level mechanism block of a system from its result rows (their `mechanism` and `conv_id`)."""
    mech = MECHANISMS.get(system)
    if mech is None:
        return {}
    stats = [{**r["mechanism"], "conv_id": r.get("conv_id", "")} for r in rows
             if isinstance(r.get("mechanism"), dict) and "error" not in r["mechanism"]]
    out = mech.summarize(stats, construction or {})
    out["questions"] = len(stats)
    skipped = len(rows) - len(stats)
    if skipped:
        out["questions_without_stats"] = skipped
    return out


def _mean(values: list[float | int | None]) -> float | None:
    vals = [float(v) for v in values if v is not None]
    return round(sum(vals) / len(vals), 4) if vals else None


def _per_conversation(stats: list[Stats], key: str) -> dict[str, float]:
    """A memory-level number per conversation (the same on every question; the largest is kept)."""
    out: dict[str, float] = {}
    for s in stats:
        if s.get(key) is not None:
            out[s["conv_id"]] = max(out.get(s["conv_id"], 0.0), float(s[key]))
    return out


# ------------------------------------------------------------------ the five systems
def _com_q(st: Structure) -> Stats:
    return {"chain_lengths": [len(ch["members"]) for ch in st.get("chains", [])]}


def _com(stats: list[Stats], _: dict) -> Stats:
    lengths = [n for s in stats for n in s["chain_lengths"]]
    hist = Counter(lengths)
    return {"chain_length_mean": _mean(lengths),
            "chain_length_hist": {str(k): hist[k] for k in sorted(hist)},
            "chains_per_question": _mean([len(s["chain_lengths"]) for s in stats])}


def _memcot_q(st: Structure) -> Stats:
    return {"steps": int(st["steps"]), "fallback": st.get("answered_from") == FULL_CONVERSATION}


def _memcot(stats: list[Stats], _: dict) -> Stats:
    return {"steps_mean": _mean([s["steps"] for s in stats]),
            "fallback_rate": _mean([s["fallback"] for s in stats])}


def _xmemory_q(st: Structure) -> Stats:
    probes = sum(1 for e in st.get("episodes", []) if e.get("decision") != "not probed")
    return {"reassignment_ratio": st.get("reassignment_ratio"), "stage2_probes": probes}


def _xmemory(stats: list[Stats], _: dict) -> Stats:
    per_conv = _per_conversation(stats, "reassignment_ratio")
    return {"reassignment_ratio": _mean(list(per_conv.values())),
            "stage2_probes_mean": _mean([s["stage2_probes"] for s in stats])}


def _recmem_q(st: Structure) -> Stats:
    ex = st.get("exchanges", {})
    return {"units": ex.get("units"), "consolidations": ex.get("consolidations")}


def _recmem(stats: list[Stats], construction: dict) -> Stats:
    units = sum(_per_conversation(stats, "units").values())
    calls = construction.get("calls")
    return {"consolidations": int(sum(_per_conversation(stats, "consolidations").values())),
            "units": int(units), "construction_calls": calls,
            "calls_per_unit": round(calls / units, 4) if units and calls is not None else None}


def _memweaver_q(st: Structure) -> Stats:
    sel = st.get(SELECTOR_KEY)
    on = isinstance(sel, dict) and sel.get("enabled", True)
    return {"seeds": st["budgets"]["used"]["seed_triples"],
            "passages_forced": sum(1 for p in st.get("passages", []) if p.get("why") == FORCED),
            "triples_selected": _count(sel.get("selected", [])) if on else None,
            "triples_backfilled": _count(sel.get("backfill", [])) if on else None, "selector": SELECTOR_KEY in st}


def _count(ids: list | int) -> int:
    return ids if isinstance(ids, int) else len(ids)


def _memweaver(stats: list[Stats], _: dict) -> Stats:
    out = {"seeds_mean": _mean([s["seeds"] for s in stats]),
           "passages_forced_mean": _mean([s["passages_forced"] for s in stats]),
           "triples_selected_mean": _mean([s["triples_selected"] for s in stats]),
           "triples_backfilled_mean": _mean([s.get("triples_backfilled") for s in stats])}
    if out["triples_selected_mean"] is None:
        out["triples_selected_note"] = (
            "the LLM triple selector was off in these traces" if any(s["selector"] for s in stats) else
            f"no LLM triple selector in these traces (no structure.{SELECTOR_KEY})")
    return out


for _m in (Mechanism("com", _com_q, _com), Mechanism("memcot", _memcot_q, _memcot),
           Mechanism("xmemory", _xmemory_q, _xmemory), Mechanism("recmem", _recmem_q, _recmem),
           Mechanism("memweaver", _memweaver_q, _memweaver)):
    register_mechanism(_m)
