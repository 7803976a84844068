"""Per-question result rows and their aggregation into the results JSON (per system and category) and CSV.

A row (`build_row`) is what the runner stores per (system, question): scores, evidence diagnostics,
failure attribution, usage by stage, latency, the mechanism numbers of its trace and the full
trace (`row_trace` reads it, and the older rows that kept the whole Answer there). Which metrics a row, a block, the CSV and the text report carry comes from the metric registry
(memcore.eval.metric_registry): aggregates are means over rows, except `n` and the counts (failures)
and the judge's own block fields. Metrics that do
not apply to a row (no gold evidence, answer never covered, no judge, no embedder) are None in the
row and left out of that mean. With K judge runs, `judge` is the mean over the runs of each run's
accuracy and `judge_std` their standard deviation (sample, K - 1); each system also carries its
`mechanism` block (memcore.eval.mechanism).
"""

from __future__ import annotations

import csv
import json
import math
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from memcore.eval.beam_scores import DATASET_SCORES
from memcore.eval.content import content_measures
from memcore.eval.cost import Prices, cost_usd
from memcore.eval.diagnostics import (
    all_evidence_hit,
    attribute_failure,
    coverage,
    evidence_recall,
    first_evidence_rank,
    split_evidence,
)
from memcore.eval.fallbacks import answer_fallbacks, fallback_counts
from memcore.eval.limits import limit_lines
from memcore.eval.mechanism import question_stats
from memcore.eval.mechanism import summarize as mechanism_summary
from memcore.eval.metric_registry import ANSWERABLE, COUNT, CSV, REPORT, Metric, MetricInput, metrics
from memcore.eval.metrics import Embeds, count_tokens
from memcore.eval.paper_metrics import (
    DENSITY_LABEL,
    FOOTPRINT_LABEL,
    density_by_category,
    density_counts,
    report_lines,
)
from memcore.eval.scores import CI_LABEL, block_intervals, category_sources, citation_content
from memcore.systems.variants import system_of
from memcore.types import Answer, Question

TIMING_KEYS = frozenset({"created", "finished", "wall_seconds", "timing", "latency_ms", "latency_ms_p50",
                         "latency_ms_p95", "ts", "retrieve_ms", "retrieve_ms_p50", "retrieve_ms_p95"})
SYSTEM_CSV = ("construction_tokens", "query_tokens_per_question", "llm_calls", "latency_ms_p50", "latency_ms_p95",
              "cost_usd", "gold_category_questions", "fallback_answers", "memory_rows", "memory_bytes")  # per system, after the block's columns
_BOUNDS = ("lo", "hi", "n")
_DIGITS = 6
CORRECT_RULE = ("a question counts as correct (for failure attribution) when the judge says CORRECT if the "
                "judge ran, else when the official LoCoMo F1 >= 0.5; category 5 (adversarial) and LongMemEval "
                "abstention questions are scored by the abstention rule")


def build_row(q: Question, ans: Answer, meta: dict, judge: dict | None = None,
              embedder: Embeds | None = None, turn_texts: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The stored row of one answered question. `judge` = {"correct": bool | None, "label", "usage", "error",
    "runs": [verdict per judge run], "prompt", "judge_id" (model | prompt version), "scores" (rubric / LoCoMo-Plus
    questions: {metric: score}; their `judge` field stays None)}.

    `meta` holds run-level fields copied into every row (run_id, system, provider, model, engine, ...);
    `embedder` (the run's) gives the embedding similarity of answer and gold (None without one);
    `turn_texts` (turn id -> text, at least the gold evidence turns) gives the content measures
    (memcore.eval.content; None without it).
    """
    pred, gold = ans.text or "", q.answer
    abstain = is_abstention_question(q)
    scores = computed_scores(MetricInput(q, ans, pred, gold, abstain, embedder, turn_texts or {}))
    f1 = scores["f1"]
    verdict = judge.get("correct") if judge else None
    correct = verdict if verdict is not None else f1 is not None and f1 >= 0.5  # f1 None: no reference answer
    scored = (judge or {}).get("scores")  # a rubric / LoCoMo-Plus verdict: its score, not a CORRECT / WRONG label
    if scored is not None:
        verdict = None
    items = list({it.id: it for it in ans.trace.items}.values())
    ctx_ids = ans.trace.context_turn_ids()
    recall = evidence_recall(ctx_ids, q.evidence)
    blocks, btokens = coverage([it.text for it in items], gold) if not abstain else (None, None)
    usage = {k: dict(vars(v)) for k, v in ans.usage.items()}
    if judge and judge.get("usage"):
        usage["judge"] = judge["usage"]
    return {
        **meta, "conv_id": q.conv_id, "question_id": q.id, "category": q.category,
        "category_name": q.category_name, "question": q.text, "gold": gold, "prediction": pred,
        **{k: v if isinstance(v, bool) else _r(v) for k, v in scores.items()}, "judge": verdict, "judge_runs": (judge or {}).get("runs"),
        "judge_prompt": (judge or {}).get("prompt", ""), "judge_label": (judge or {}).get("label", ""),
        "judge_reason": (judge or {}).get("reason", ""), "judge_error": (judge or {}).get("error", ""),
        "judge_id": (judge or {}).get("judge_id", ""), **{k: _r(v) for k, v in (scored or {}).items()},
        "correct": bool(correct), "evidence": split_evidence(q.evidence), "context_turn_ids": ctx_ids,
        "evidence_recall": _r(recall), "all_evidence_hit": all_evidence_hit(ctx_ids, q.evidence),
        "first_evidence_rank": first_evidence_rank(ctx_ids, q.evidence), "coverable": not abstain,
        "coverage_blocks": blocks, "coverage_tokens": btokens, "context_items": len(items),
        "context_tokens": count_tokens(ans.trace.context),
        **content_measures(gold, q.evidence, q.category, ans.trace.context, turn_texts or {}, abstain), "failure": attribute_failure(bool(correct), recall),
        "usage": usage, "latency_ms": round(ans.latency_ms, 3), "error": ans.error,
        "retrieve_ms": None if ans.retrieve_ms is None else round(ans.retrieve_ms, 3),  # the retrieve step alone
        "evidence_density": None if abstain else density_counts([it.text for it in items], gold),  # Hu et al. Fig. 4
        "category_source": (ans.trace.reader or {}).get("category_source", "none"),  # gold labels named
        "fallbacks": answer_fallbacks(ans.trace),  # answers from a fallback path, named (memcore.eval.fallbacks)
        "mechanism": question_stats(meta.get("system", ans.trace.system), ans.trace.structure),
        "trace": ans.trace.to_dict(),  # the trace alone: the answer's text, usage, latency and error are the row's
    }


def row_trace(row: Mapping[str, Any]) -> dict[str, Any] | None:
    """A result row's trace in `Trace.to_dict` form (None when the row carries none). Rows stored before issue 28
    kept the whole Answer under "trace" ({"text", "trace", "usage", ...}), copying the row's own fields."""
    tr = row.get("trace")
    if isinstance(tr, dict) and isinstance(tr.get("trace"), dict):
        return tr["trace"]
    return tr if isinstance(tr, dict) else None


def is_abstention_question(q: Question) -> bool:
    """LoCoMo category 5 or a LongMemEval abstention question: the right reply abstains (scored by that rule)."""
    return str(q.category) == "5" or bool(q.metadata.get("abstention"))


def computed_scores(inp: MetricInput) -> dict[str, float | int | bool | None]:
    """Every registered metric with a `compute`, in registry order, on one answered question (unrounded);
    None for a metric that applies to answerable questions only when this one is an abstention question."""
    return {m.name: None if m.applies == ANSWERABLE and inp.abstain else m.compute(inp)
            for m in metrics() if m.compute is not None}


def metric_labels(embedder: str) -> dict[str, str]:
    """What each metric in the results is (the registry's descriptions), the similarity naming the run's embedder."""
    labels = {m.name: m.description for m in metrics() if m.description}
    if "similarity" in labels:
        labels["similarity"] = f"{labels['similarity']}; embedder: {embedder}"
    return {**labels, "ci": CI_LABEL, "evidence_density": DENSITY_LABEL, "footprint": FOOTPRINT_LABEL}


def _r(x: float | None) -> float | None:
    return None if x is None else round(float(x), _DIGITS)


def mean(values: Iterable[float | int | bool | None]) -> float | None:
    """Mean of the non-None values (booleans count as 0/1), or None when there are none."""
    vals = [float(v) for v in values if v is not None]
    return _r(sum(vals) / len(vals)) if vals else None


def percentile(values: Iterable[float], q: float) -> float | None:
    """The q-th percentile (0-100, linear interpolation) of the values, or None when empty."""
    vals = sorted(float(v) for v in values)
    if not vals:
        return None
    pos = (len(vals) - 1) * q / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    return round(vals[lo] + (vals[hi] - vals[lo]) * (pos - lo), 3)


def _natural(s: str) -> tuple:
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", str(s)))


def variant_of(row: dict) -> str:
    """The result set a row belongs to: its canonical variant name (memcore.systems.variants); a row stored
    before variants existed has none and belongs to its plain system."""
    return str(row.get("variant") or row.get("system", ""))


def row_order(row: dict) -> tuple:
    """Sort key of a row: variant, conversation, question id (natural order)."""
    return (variant_of(row), _natural(row.get("conv_id", "")), _natural(row.get("question_id", "")))


def _aggregate(m: Metric, rows: list[dict]) -> dict[str, Any]:
    """One metric's fields in a block: its mean (MEAN), its count of true values (COUNT) or its own fields."""
    if callable(m.aggregate):
        return m.aggregate(rows)
    if m.aggregate == COUNT:
        return {m.name: sum(bool(m.value(r)) for r in rows)}
    return {m.name: mean(m.value(r) for r in rows)}


def metric_block(rows: list[dict], judge: bool) -> dict[str, Any]:
    """Scores and diagnostics of a group of rows (one system, one category or all): n, each registered
    metric's aggregate (the judge's only when it ran) and their 95% bootstrap intervals (`ci`)."""
    block: dict[str, Any] = {"n": len(rows)}
    for m in metrics(judge=judge):
        block.update(_aggregate(m, rows))
    block["ci"] = block_intervals(rows, judge)  # {metric: {"lo", "hi", "n"}}: 95% bootstrap over questions
    return block


def _usage(row: dict, query: bool) -> tuple[int, int, int]:
    """(prompt, completion, calls) of a row's query stages (query=True) or its judge stage.

    Calls count every call the system made, answered by the provider or by the call cache (the
    tokens of a cached reply are counted too): a question redone after a resume, whose calls now
    hit the cache, costs what it cost the first time.
    """
    p = c = n = 0
    for stage, u in (row.get("usage") or {}).items():
        if (stage != "judge") == query:
            p, c = p + u.get("prompt_tokens", 0), c + u.get("completion_tokens", 0)
            n += u.get("calls", 0) + u.get("cache_hits", 0)
    return p, c, n


def _stage_latency(rows: list[dict], stage: str) -> list[float]:
    return [r["usage"][stage]["latency_ms"] for r in rows if stage in (r.get("usage") or {})]


def system_summary(rows: list[dict], construction: dict[str, Any] | None, *, judge: bool, model: str,
                   provider: str, prices: Prices | None = None, name: str = "") -> dict[str, Any]:
    """One system's (variant's) results: overall, per category, tokens, calls, latency percentiles, cost and the
    mechanism statistics of the registered system of variant `name` (default: the rows' system).

    `construction` = {"prompt_tokens", "completion_tokens", "calls", "latencies_ms"} of the ingest
    LLM calls of this system over the run's conversations (from the usage ledger).
    """
    rows = sorted(rows, key=row_order)
    cats: dict[str, list[dict]] = {}
    for r in rows:
        cats.setdefault(str(r["category"]), []).append(r)
    categories = {}
    for key in sorted(cats, key=_natural):
        categories[key] = {"name": cats[key][0].get("category_name", key), **metric_block(cats[key], judge)}
    con = construction or {}
    cp, cc, cn = con.get("prompt_tokens", 0), con.get("completion_tokens", 0), con.get("calls", 0)
    qp = qc = qn = jp = jc = jn = 0
    for r in rows:
        p, c, n = _usage(r, True)
        qp, qc, qn = qp + p, qc + c, qn + n
        p, c, n = _usage(r, False)
        jp, jc, jn = jp + p, jc + c, jn + n
    lat = [r.get("latency_ms", 0.0) for r in rows]
    latency = {"question": {"p50": percentile(lat, 50), "p95": percentile(lat, 95)},
               "construction_call": {"p50": percentile(con.get("latencies_ms", []), 50),
                                     "p95": percentile(con.get("latencies_ms", []), 95)}}
    for stage in ("retrieval", "answer", "judge"):
        vals = _stage_latency(rows, stage)
        if vals:
            latency[stage] = {"p50": percentile(vals, 50), "p95": percentile(vals, 95)}
    costs = {"construction": cost_usd(cp, cc, model, provider, prices),
             "query": cost_usd(qp, qc, model, provider, prices),
             "judge": cost_usd(jp, jc, model, provider, prices)}
    costs = {k: _r(v) for k, v in costs.items()}
    total = None if costs["construction"] is None or costs["query"] is None else \
        _r(costs["construction"] + costs["query"])
    return {
        "overall": metric_block(rows, judge),
        "categories": categories,
        "construction_tokens": cp + cc,
        "construction_prompt_tokens": cp,
        "construction_completion_tokens": cc,
        "construction_calls": cn,
        "query_tokens": qp + qc,
        "query_tokens_per_question": _r((qp + qc) / len(rows)) if rows else None,
        "query_calls": qn,
        "llm_calls": cn + qn,
        "judge_tokens": jp + jc,
        "judge_calls": jn,
        "latency_ms_p50": latency["question"]["p50"],
        "latency_ms_p95": latency["question"]["p95"],
        "latency_ms": latency,
        "cost_usd": total,
        "cost_usd_by_stage": costs,
        "mechanism": mechanism_summary(system_of(name) if name else (rows[0]["system"] if rows else ""), rows,
                                       con),
        "citation_content": citation_content(rows),
        "category_sources": category_sources(rows),
        "fallbacks": fallback_counts(rows),
        "gold_category_questions": category_sources(rows).get("gold", 0),  # named in the CSV too
        "fallback_answers": fallback_counts(rows)["any"],
        "evidence_density": density_by_category(rows),  # Hu et al., Fig. 4 (memcore.eval.paper_metrics)
    }


def aggregate(rows: list[dict], construction: dict[str, dict] | None = None, *, judge: bool,
              model: str, provider: str, prices: Prices | None = None,
              systems: list[str] | None = None) -> dict[str, dict]:
    """Per-variant summaries of per-question rows (keyed by canonical variant name; a plain system's name is
    its own variant), each naming its registered `system` and `variant`; `construction` maps variant -> ingest
    usage."""
    by_sys: dict[str, list[dict]] = {s: [] for s in systems or []}
    for r in rows:
        by_sys.setdefault(variant_of(r), []).append(r)
    return {s: {"system": system_of(s), "variant": s,
                **system_summary(rs, (construction or {}).get(s), judge=judge, model=model, provider=provider,
                                 prices=prices, name=s)} for s, rs in by_sys.items()}


def csv_fields() -> tuple[str, ...]:
    """The CSV's columns: system, variant (the result set: canonical variant name), category, n; each metric's
    block fields (registry order); the 95% interval (lo, hi, n) of the headline metrics; the counts (failures);
    then the per-system figures (SYSTEM_CSV)."""
    ms = metrics(CSV)
    scores = [f for m in ms if m.aggregate != COUNT for f in (m.name, *m.extra)]
    ci = [f"{m.name}_{b}" for m in ms if m.headline for b in _BOUNDS]
    counts = [m.name for m in ms if m.aggregate == COUNT]
    return ("system", "variant", "category", "category_name", "n", *scores, *ci, *counts, *SYSTEM_CSV)


def csv_rows(results: dict[str, Any]) -> list[dict[str, Any]]:
    """One CSV row per variant x category, plus an "overall" row per variant (columns: csv_fields()); results
    written before variants have no `variant` in their blocks: it is the system's name."""
    intervals = {f"{m.name}_{b}": (m.name, b) for m in metrics() if m.headline for b in _BOUNDS}
    fields, out = csv_fields()[4:], []
    for name, s in results["systems"].items():
        groups = [(k, v.get("name", k), v) for k, v in s["categories"].items()]
        groups.append(("overall", "overall", s["overall"]))
        for key, label, block in groups:
            ci = block.get("ci") or {}
            row: dict[str, Any] = {"system": s.get("system") or system_of(name), "variant": name, "category": key,
                                   "category_name": label}
            for f in fields:
                row[f] = s.get(f) if f in SYSTEM_CSV else block.get(f) if f not in intervals else \
                    ci.get(intervals[f][0], {}).get(intervals[f][1])
            out.append(row)
    return out


def write_json_csv(results: dict[str, Any], path: str | Path, fields: list[str],
                   rows: list[dict[str, Any]]) -> tuple[Path, Path]:
    """Write `results` as JSON at `path` and `rows` as CSV beside it (same name, .csv). Returns both paths."""
    jpath = Path(path)
    jpath.parent.mkdir(parents=True, exist_ok=True)
    jpath.write_text(json.dumps(results, indent=2, default=str), encoding="utf-8")
    cpath = jpath.with_suffix(".csv")
    with cpath.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
    return jpath, cpath


def write_results(results: dict[str, Any], path: str | Path) -> tuple[Path, Path]:
    """Write the results JSON and, beside it, the CSV (same name, .csv). Returns both paths."""
    return write_json_csv(results, path, list(csv_fields()), csv_rows(results))


def strip_timing(obj: Any) -> Any:
    """A copy without wall-clock fields (latencies, timestamps): what must match across resumes."""
    if isinstance(obj, dict):
        return {k: strip_timing(v) for k, v in obj.items() if k not in TIMING_KEYS}
    if isinstance(obj, list):
        return [strip_timing(v) for v in obj]
    return obj


def diff_results(a: Any, b: Any, path: str = "", ignore: frozenset[str] = frozenset({"store"})) -> list[str]:
    """Paths (a.b[2].c) where two results differ, wall-clock fields and `ignore` keys left out."""
    if isinstance(a, dict) and isinstance(b, dict):
        keys = [k for k in dict.fromkeys([*a, *b]) if k not in TIMING_KEYS and k not in ignore]
        return [d for k in keys for d in (diff_results(a.get(k), b.get(k), f"{path}.{k}" if path else str(k), ignore)
                                          if k in a and k in b else [f"{path}.{k}" if path else str(k)])]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True)) for d in diff_results(x, y, f"{path}[{i}]", ignore)]
    return [] if a == b else [path]


def _fmt(v: Any) -> str:
    if v is None:
        return "-"
    return f"{v:.3f}" if isinstance(v, float) else str(v)


def _ci(row: dict, metric: str) -> str:
    """'0.412 [0.380, 0.445]' (n shown when it differs from the row's n), or the bare score without an interval."""
    lo, hi, n = row.get(f"{metric}_lo"), row.get(f"{metric}_hi"), row.get(f"{metric}_n")
    text = _fmt(row.get(metric))
    if lo is not None and hi is not None:
        text += f" [{lo:.3f}, {hi:.3f}]"
    return text + (f" n={n}" if n is not None and n != row.get("n") else "")


def _cell(row: dict, m: Metric, runs: int) -> Any:
    """A metric's cell of the text report: headline metrics with their interval; a judge metric with the std
    over its runs (its first extra field) when it ran more than once."""
    text = _ci(row, m.name) if m.headline else row.get(m.name)
    if m.needs_judge and m.extra and runs > 1:
        text = f"{_fmt(text)}+-{_fmt(row.get(m.extra[0]))}"
    return text


def format_table(results: dict[str, Any]) -> str:
    """A plain-text table: system x category with n, the registry's report metrics (f1, rouge-2, meteor,
    similarity, judge (+- std over runs), citation and content recall, answer in context, context tokens, and
    any metric registered to show there), construction and query tokens, p50 latency; then the mechanism
    statistics."""
    judge = results.get("judge", {}).get("enabled", False)
    runs = results.get("judge", {}).get("runs", 1) or 1
    rows = csv_rows(results)
    shown = [m for m in metrics(REPORT, judge=judge)  # a dataset's own scores (BEAM, LoCoMo-Plus) only when present
             if m.name not in DATASET_SCORES or any(r.get(m.name) is not None for r in rows)]
    head = ["system", "cat", "n", *[m.column for m in shown], "constr_tok", "q_tok/q", "p50_ms"]
    lines = [head]
    for row in rows:
        vals = [row["variant"], row["category"], row["n"], *[_cell(row, m, runs) for m in shown],
                row["construction_tokens"], row["query_tokens_per_question"], row["latency_ms_p50"]]
        lines.append([_fmt(v) for v in vals])
    widths = [max(len(str(r[i])) for r in lines) for i in range(len(head))]
    table = "\n".join("  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)) for r in lines)
    mech = [f"  {name}: " + ", ".join(f"{k} {_fmt(v)}" for k, v in s["mechanism"].items())
            for name, s in results["systems"].items() if s.get("mechanism")]
    gold = [f"{name} ({s['category_sources']['gold']} questions)" for name, s in results["systems"].items()
            if (s.get("category_sources") or {}).get("gold")]
    fb = [f"{name} {s['fallbacks']['any']}/{s['overall']['n']}" for name, s in results["systems"].items()
          if (s.get("fallbacks") or {}).get("any")]
    note = ("\nanswers from a fallback path: " + ", ".join(fb) if fb else "") + \
        ("\nGOLD LABELS: the reader picked its prompt by the question's gold category: " + ", ".join(gold)
         if gold else "")
    note += "".join(f"\n{line}" for line in limit_lines(results))  # long turns, context window (memcore.eval.limits)
    paper = report_lines(results)  # retrieval latency, footprint, evidence density (memcore.eval.paper_metrics)
    return table + note + ("\nmechanism statistics:\n" + "\n".join(mech) if mech else "") + \
        ("\npaper metrics:\n" + "\n".join(paper) if paper else "")
