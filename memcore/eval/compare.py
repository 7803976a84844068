"""Paired comparisons over result rows: systems within a run (ranking with ties marked) and two runs
(per system and category: paired deltas with 95% intervals, McNemar on the verdicts, flipped questions).

Rows pair on (conv_id, question_id); only questions both sides answered count (n says how many). A
difference whose paired interval contains 0 is a tie the intervals do not separate. Verdicts are the
rows' `correct` (the judge's label when it ran, else F1 >= 0.5: memcore.eval.report.CORRECT_RULE).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from memcore.errors import ConfigError
from memcore.eval.cost import cost_usd
from memcore.eval.diagnostics import locate_missed_evidence, split_evidence
from memcore.eval.metric_registry import COMPARE, get_metric, metric_names
from memcore.eval.report import row_trace, variant_of
from memcore.eval.scores import row_score
from memcore.eval.stats import interval, mcnemar, paired_delta
from memcore.types import Trace

COST_SCORES = ("query_tokens", "query_cost_usd")  # read from a row's usage, beside the registered metrics
Key = tuple[str, str]

__all__ = ["COST_SCORES", "compare_runs", "delta_scores", "evidence_kept", "flip_detail", "judge_ids", "pair_key", "pair_rows",
           "rank_systems"]


def _key(row: dict) -> Key:
    return str(row.get("conv_id", "")), str(row.get("question_id", ""))


def pair_rows(a: Iterable[dict], b: Iterable[dict]) -> list[tuple[dict, dict]]:
    """Rows of the same question on both sides, in a's order."""
    by_b = {_key(r): r for r in b}
    return [(r, by_b[_key(r)]) for r in a if _key(r) in by_b]


def delta_scores() -> tuple[str, ...]:
    """What a comparison takes paired deltas of: the registered metrics shown in comparisons (registry
    order), then query tokens and query cost."""
    return (*metric_names(COMPARE), *COST_SCORES)


def _query_usage(row: dict) -> tuple[int, int]:
    stages = [u for stage, u in (row.get("usage") or {}).items() if stage != "judge"]
    return sum(u.get("prompt_tokens", 0) for u in stages), sum(u.get("completion_tokens", 0) for u in stages)


def _score(row: dict, metric: str) -> float | None:
    if metric == "query_tokens":
        return float(sum(_query_usage(row)))
    if metric == "query_cost_usd":  # None when the row's model has no price (e.g. the offline engine)
        return cost_usd(*_query_usage(row), str(row.get("model", "")), str(row.get("provider", "")))
    return row_score(row, metric)


def _deltas(pairs: list[tuple[dict, dict]], metrics: Iterable[str]) -> dict[str, Any]:
    out: dict[str, Any] = {"n": len(pairs)}
    for m in metrics:
        a, b = [_score(x, m) for x, _ in pairs], [_score(y, m) for _, y in pairs]
        if any(v is not None for v in a) and any(v is not None for v in b):
            out[m] = {"a": interval(a)["mean"], "b": interval(b)["mean"], **paired_delta(a, b)}
    out["mcnemar"] = mcnemar([x.get("correct") for x, _ in pairs], [y.get("correct") for _, y in pairs])
    return out


def rank_systems(rows: list[dict], metric: str = "f1") -> list[dict[str, Any]]:
    """Systems (result sets: variants) of one run by mean `metric`, best first (highest, or lowest for a metric
    the registry marks lower-is-better), each with its interval and n, and the paired difference to the best on
    their common questions; `tied_with_best` when that interval holds 0. An entry's `system` is the result
    set's name (its canonical variant, the key of results["systems"])."""
    by_sys: dict[str, list[dict]] = {}
    for r in rows:
        by_sys.setdefault(variant_of(r), []).append(r)
    scored = []
    for name, rs in by_sys.items():
        iv = interval([row_score(r, metric) for r in rs])
        if iv["mean"] is not None:
            scored.append({"system": name, "metric": metric, "score": iv["mean"], "lo": iv["lo"], "hi": iv["hi"],
                           "n": iv["n"]})
    sign = -1 if getattr(get_metric(metric), "higher_better", True) else 1
    scored.sort(key=lambda s: (sign * s["score"], s["system"]))
    if not scored:
        return []
    best = by_sys[scored[0]["system"]]
    for s in scored:
        pairs = pair_rows(best, by_sys[s["system"]])
        d = paired_delta([row_score(x, metric) for x, _ in pairs], [row_score(y, metric) for _, y in pairs])
        s.update(delta_to_best=d["delta"], delta_lo=d["lo"], delta_hi=d["hi"], delta_n=d["n"],
                 tied_with_best=s is scored[0] or not d["separated"])
    return scored


def evidence_kept(row: dict) -> dict[str, Any]:
    """Per gold turn of a row: cited (in the context's turn ids) and content present (None: not judged)."""
    cited = set(row.get("context_turn_ids") or [])
    content = row.get("content_present") or {}
    return {t: {"cited": t in cited, "content": content.get(t)} for t in split_evidence(row.get("evidence"))}


def flip_detail(a: dict, b: dict) -> dict[str, Any]:
    """One flipped question: both answers, the gold evidence each side kept, and where each lost what it
    missed (memcore.eval.diagnostics.locate_missed_evidence; needs the rows' traces, else empty)."""
    out: dict[str, Any] = {k: a.get(k) for k in ("conv_id", "question_id", "category", "category_name",
                                                   "question", "gold")}
    out["direction"] = "right_to_wrong" if a.get("correct") else "wrong_to_right"
    for side, r in (("a", a), ("b", b)):
        trace = row_trace(r)
        out[side] = {"prediction": r.get("prediction"), "correct": r.get("correct"), "f1": r.get("f1"),
                     "context_tokens": r.get("context_tokens"), "evidence": evidence_kept(r),
                     "missed": locate_missed_evidence(Trace.from_dict(trace), r.get("evidence")) if trace else [],
                     "notes": (trace or {}).get("notes", [])}
    return out


def judge_ids(pairs: list[tuple[dict, dict]]) -> dict[str, list[str]]:
    """The judges (model | prompt version, rows' `judge_id`) that scored each side's paired rows; rows stored
    before judge ids were recorded count as "unrecorded"."""
    def ids(side: int) -> list[str]:
        return sorted({str(p[side].get("judge_id") or "unrecorded") for p in pairs if p[side].get("judge") is not None
                       or p[side].get("judge_id")})
    return {"a": ids(0), "b": ids(1)}


def pair_key(a: str, b: str) -> str:
    """The key of a compared pair of result sets: the name when both sides have it, else 'A vs B'."""
    return a if a == b else f"{a} vs {b}"


def compare_runs(rows_a: list[dict], rows_b: list[dict], systems: list[str] | None = None,
                 full: Callable[[str, dict], dict] | None = None,
                 pairs: list[tuple[str, str]] | None = None) -> dict[str, Any]:
    """Run B against run A, per system present in both (or `systems`, or `pairs` of result sets: A's name,
    B's name, e.g. ("SYSTEM", "SYSTEM[field=value]")): overall and per category, the paired deltas (B - A) of
    delta_scores() (query cost for priced models only) with 95% intervals and McNemar's test, and the
    flipped questions with both sides' evidence. Keyed by pair_key; each entry names its `a_name` and
    `b_name`. `full(side, row)` returns a row with its trace ("a"/"b"), for the flips only (default: the rows
    as given). When the two sides were judged by different judges (model or prompt version: `judge_ids`), the
    judge's metrics are left out of the deltas and the entry says so (`judge_comparable` False, `judge_ids` per
    side)."""
    if pairs is None:
        names = systems or sorted({variant_of(r) for r in rows_a} & {variant_of(r) for r in rows_b})
        pairs = [(n, n) for n in names]
    out: dict[str, Any] = {}
    for name_a, name_b in pairs:
        name = pair_key(name_a, name_b)
        pairs_ = pair_rows([r for r in rows_a if variant_of(r) == name_a],
                           [r for r in rows_b if variant_of(r) == name_b])
        cats: dict[str, list[tuple[dict, dict]]] = {}
        for p in pairs_:
            cats.setdefault(str(p[0].get("category")), []).append(p)
        flips = [flip_detail(full("a", x) if full else x, full("b", y) if full else y)
                 for x, y in pairs_ if x.get("correct") is not None and y.get("correct") is not None
                 and bool(x["correct"]) != bool(y["correct"])]
        judges = judge_ids(pairs_)
        comparable = judges["a"] == judges["b"]
        metrics = tuple(m for m in delta_scores() if comparable or not getattr(get_metric(m), "needs_judge", False))
        out[name] = {"a_name": name_a, "b_name": name_b, "overall": _deltas(pairs_, metrics),
                     "judge_comparable": comparable, "judge_ids": judges,
                     "categories": {c: {"name": ps[0][0].get("category_name", c), **_deltas(ps, metrics)}
                                    for c, ps in sorted(cats.items())},
                     "flips": flips,
                     "only_a": sum(variant_of(r) == name_a for r in rows_a) - len(pairs_),
                     "only_b": sum(variant_of(r) == name_b for r in rows_b) - len(pairs_)}
    return out


def _check_names(what: str, asked: list[str] | None, held: Iterable[str]) -> None:
    """A ConfigError (one line) when a result set asked for is not in the run, naming the ones it holds."""
    held = sorted(set(held))
    unknown = [n for n in dict.fromkeys(asked or []) if n not in held]
    if not unknown or not held:  # a run without rows: the caller's own "no rows" error says so
        return
    shown = ", ".join(held[:20]) + (f" (and {len(held) - 20} more)" if len(held) > 20 else "")
    raise ConfigError(f"{what} has no result set {', '.join(unknown)}; it holds {len(held)}: {shown}. Fix: name one of these")


def load_run(arg: str, store: Any, systems: list[str] | None) -> tuple[dict[str, Any], list[dict], Callable]:
    """(side info, rows, full(row) -> row with trace) of a run id in `store` or a results JSON file; only the
    result sets `systems` (canonical variant names) when given, each of which the run must hold (a ConfigError
    naming the ones it holds otherwise)."""
    path = Path(arg)
    if path.suffix == ".json" or path.is_file():
        if not path.is_file():
            raise ConfigError(f"no results file {arg}")
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, ValueError) as err:
            raise ConfigError(f"{arg} is not a results JSON file ({type(err).__name__}: "
                              f"{' '.join(str(err).split())[:120]}). Fix: pass a run id, or a results JSON that "
                              "embeds its rows (memcore eval --out, the Export page)") from None
        if not isinstance(data, dict):
            raise ConfigError(f"{arg} holds a JSON {type(data).__name__}, not a results object with its rows. Fix: "
                              "pass a run id, or a results JSON that embeds its rows (memcore eval --out)")
        rows = data.get("rows")
        if not isinstance(rows, list):
            raise ConfigError(f"{arg} holds no per-question rows; pass its run id ({data.get('run_id', '?')}) "
                              "with --store, or export the run with its rows")
        _check_names(f"results file {arg}", systems, (variant_of(r) for r in rows if isinstance(r, dict)))
        rows = [r for r in rows if not systems or variant_of(r) in systems]
        return {"label": f"{path.name} ({data.get('run_id', '')})", "run_id": data.get("run_id"),
                "source": str(path)}, rows, lambda r: r
    if store is None:
        raise ConfigError(f"no results file {arg!r}, and no store to look the run id up in. Fix: pass a results "
                          "JSON path, or --store with the store holding the run")
    if systems:
        _check_names(f"run {arg!r}", systems, (name for name, _ in store.result_keys(arg)))
    rows = store.results(arg, systems, traces=False)
    if not rows:
        raise ConfigError(f"no stored rows for run {arg!r} in store {store.uri}" + (f" (systems {systems})"
                          if systems else "") + "; check the run id (Benchmark page) or pass --store")

    def full(row: dict) -> dict:
        return store.result(arg, variant_of(row), row["question_id"]) or row

    return {"label": arg, "run_id": arg, "source": str(store.uri)}, rows, full


def build_comparison(run_a: str, run_b: str, store: Any, systems: list[str] | None = None,
                     pairs: list[tuple[str, str]] | None = None) -> dict[str, Any]:
    """The comparison of run B against run A (deltas B - A), with both sides named; `pairs` compares A's
    result set with B's of another name (a variant against the system it varies)."""
    side_a, rows_a, full_a = load_run(run_a, store, [a for a, _ in pairs] if pairs else systems)
    side_b, rows_b, full_b = load_run(run_b, store, [b for _, b in pairs] if pairs else systems)
    fulls = {"a": full_a, "b": full_b}
    return {"a": side_a, "b": side_b,
            "systems": compare_runs(rows_a, rows_b, systems, full=lambda side, row: fulls[side](row), pairs=pairs)}
