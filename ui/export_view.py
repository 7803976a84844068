"""What the Export page can export right now: answers, comparisons, replays and benchmarks of this session."""

from __future__ import annotations

from collections.abc import Callable

from memcore.types import Conversation
from memcore.viz.bundles import Bundle, answer_bundle, benchmark_bundle, comparison_bundle, replay_bundle
from memcore.workbench import Workbench
from ui import state, widgets
from ui.structure_view import turn_texts

Builder = Callable[[], Bundle]


def available_bundles(wb: Workbench, conv: Conversation | None) -> dict[str, tuple[str, Builder]]:
    """Label -> (file name, builder) for everything exportable in this session."""
    out: dict[str, tuple[str, Builder]] = {}
    if conv is not None:
        texts = turn_texts(conv)
        qs = {q.id: q for q in conv.questions}
        answers = state.answers_all(conv)
        by_q: dict[str, dict] = {}
        for (system, qid, qtext), ans in answers.items():
            q = qs.get(qid) if qid in qs and qs[qid].text == qtext else state.adhoc_question(conv, qtext)
            out[f"Answer · {system} · {qtext[:60]}"] = (
                f"answer_{system}_{qid}", lambda q=q, s=system, a=ans: answer_bundle(q, s, a, wb.provider_label, texts))
            by_q.setdefault(qtext, {"q": q, "answers": {}})["answers"][system] = ans
        for qtext, g in by_q.items():
            if len(g["answers"]) > 1:
                out[f"Comparison · {len(g['answers'])} systems · {qtext[:60]}"] = (
                    f"comparison_{g['q'].id}", lambda g=g: comparison_bundle(g["q"], g["answers"], wb.provider_label))
        built = [s for s in widgets.systems() if state.ingest_status(wb, s, conv)[1]]
        if built:
            data = {s: state.replay_data(wb, s, conv) for s in built}
            out[f"Replay · {conv.id} · {', '.join(built)}"] = (f"replay_{conv.id}", lambda: replay_bundle(data))
    results = state.benchmark_results()
    if results:
        out["Benchmark results"] = ("benchmark", lambda: benchmark_bundle(results))
    return out
