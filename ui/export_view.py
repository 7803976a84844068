"""What the Export page can export: this session's answers and comparisons, and what the store holds
(every built system's replay of the conversation, every recorded benchmark run), so a fresh session
exports what is persisted.

Answers and comparisons exist only in the session that asked them: memcore persists an answer's LLM
calls (the ledger), not the answer or its trace, so a new browser session cannot export them.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from memcore.eval.bundles import answer_bundle, benchmark_bundle, comparison_bundle
from memcore.eval.run_record import results_so_far
from memcore.eval.runs import load_rows
from memcore.types import Conversation
from memcore.viz.bundles import Bundle, replay_bundle
from memcore.workbench import Workbench
from ui import state, widgets
from ui.ask_view import verdict
from ui.bench_live import store_runs
from ui.structure_view import turn_texts
from ui.variant_names import label as variant_label

Builder = Callable[[], Bundle]
Bundles = dict[str, tuple[str, Builder]]


def available_bundles(wb: Workbench, conv: Conversation | None) -> Bundles:
    """Label -> (file name, builder) for everything exportable: this session's answers and comparisons,
    the stored replays of the conversation, the loaded benchmark results and the store's benchmark runs."""
    out: Bundles = {}
    if conv is not None:
        out.update(_answers(wb, conv))
        out.update(_replays(wb, conv))
    results = state.benchmark_results()
    if results:
        out[f"Benchmark results (loaded file) · {results.get('retriever') or '?'} retriever"] = (
            "benchmark", lambda: benchmark_bundle(results))
    out.update(_stored_runs(wb))
    return out


def _answers(wb: Workbench, conv: Conversation) -> Bundles:
    out: Bundles = {}
    texts = turn_texts(conv)
    qs = {q.id: q for q in conv.questions}
    by_q: dict[str, dict] = {}
    for (entry, qid, qtext), ans in state.answers_all(conv).items():
        q = qs.get(qid) if qid in qs and qs[qid].text == qtext else state.adhoc_question(conv, qtext)
        system = variant_label(wb, entry)  # a variant by its canonical name (issue 26)
        out[f"Answer · {system} · {ans.trace.retriever} retriever · {qtext[:60]}"] = (
            f"answer_{system}_{qid}", lambda q=q, s=system, a=ans: answer_bundle(q, s, a, wb.provider_label, texts,
                                                                                verdict(wb, q, a)))
        by_q.setdefault(qtext, {"q": q, "answers": {}})["answers"][system] = ans
    for qtext, g in by_q.items():
        if len(g["answers"]) > 1:
            retrievers = "/".join(sorted({a.trace.retriever for a in g["answers"].values()}))
            out[f"Comparison · {len(g['answers'])} systems · {retrievers} retriever · {qtext[:60]}"] = (
                f"comparison_{g['q'].id}", lambda g=g: comparison_bundle(
                    g["q"], g["answers"], wb.provider_label, {s: verdict(wb, g["q"], a) for s, a in g["answers"].items()}))
    return out


def _replays(wb: Workbench, conv: Conversation) -> Bundles:
    """Every built system's replay of the conversation (all together, then each alone); a memory does not
    depend on the retriever (a query-time setting), so these entries name none."""
    built = [s for s in widgets.systems() if state.ingest_status(wb, s, conv)[1]]
    if not built:
        return {}

    def build(systems: list[str]) -> Bundle:
        return replay_bundle({s: state.replay_data(wb, s, conv) for s in systems})

    out: Bundles = {}
    if len(built) > 1:
        out[f"Replay · {conv.id} · {', '.join(built)}"] = (f"replay_{conv.id}", lambda: build(built))
    for s in built:
        out[f"Replay · {conv.id} · {s}"] = (f"replay_{conv.id}_{s}", lambda s=s: build([s]))
    return out


def _stored_runs(wb: Workbench) -> Bundles:
    """Each benchmark run recorded in the store, newest first, by date, retriever, systems and run id."""
    out: Bundles = {}
    for rec in store_runs(wb):
        out[run_label(rec)] = (f"benchmark_{rec['run_id']}", lambda rec=rec: benchmark_bundle(stored_run(wb, rec)))
    return out


def run_label(rec: dict[str, Any]) -> str:
    """A run record's export label: date (UTC), retriever, systems, run id and state when not done."""
    when = datetime.fromtimestamp(float(rec.get("started") or 0), UTC).strftime("%Y-%m-%d %H:%M UTC")
    retriever = (rec.get("payload") or {}).get("fingerprint", {}).get("retriever") or "?"
    state_ = "" if rec.get("state") == "done" else f" · {rec.get('state')} {rec.get('done')}/{rec.get('total')}"
    return f"Benchmark run · {when} · {retriever} retriever · {', '.join(rec['systems'])} · {rec['run_id']}{state_}"


def stored_run(wb: Workbench, rec: dict[str, Any]) -> dict[str, Any]:
    """A stored run's results (as `memcore eval` assembles them) with its per-question rows, without
    their traces (those stay in the store; the Benchmark page's drill-down shows one)."""
    results = results_so_far(wb.store, rec)
    results["rows"] = load_rows(wb.store, rec["run_id"], list(rec["systems"]))
    return results
