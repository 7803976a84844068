"""Cost preview: calls and tokens per stage and system before a build or eval on a real provider.

The estimate is the offline engine's ledger for the same work: the same ingest (or eval) runs with the
offline engine into a throwaway store and its LLM calls are counted per stage and system, then priced for
the chosen model (memcore.eval.cost; an unknown price gives tokens only, said so). The offline engine asks
the same roles the same number of times per turn and question, so the calls are the real run's calls; its
token counts are its own prompts' and replies' and only approximate a hosted model's. After a real run,
`actual_usage` counts the run's calls from the store's ledger the same way, so estimate and actual sit side
by side (results["cost_estimate"]).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from memcore.eval.cost import Prices, cost_usd, price_for
from memcore.llm.ledger import PROBE_STAGE
from memcore.settings import Settings

OFFLINE_SOURCE = "offline engine ledger of the same work (throwaway store)"
FREE = frozenset({"offline", "fake"})  # providers whose calls cost nothing (and need no preview)


@dataclass
class EstimateRow:
    """Calls and tokens of one stage of one system."""

    stage: str
    system: str
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None


@dataclass
class Estimate:
    """A cost estimate (or an actual count): rows per stage and system, the provider and model priced, and
    where the counts come from."""

    provider: str
    model: str
    source: str
    rows: list[EstimateRow] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    priced: bool = True  # whether the model has a price (else the estimate is tokens only)

    def total(self) -> EstimateRow:
        """All rows summed (cost None when any row has no price)."""
        t = EstimateRow("all", "all")
        for r in self.rows:
            t.calls += r.calls
            t.prompt_tokens += r.prompt_tokens
            t.completion_tokens += r.completion_tokens
        t.cost_usd = round(sum(r.cost_usd or 0.0 for r in self.rows), 6) if self.priced else None
        return t

    def to_dict(self) -> dict[str, Any]:
        """The estimate as JSON-ready data (stored in results)."""
        return {"provider": self.provider, "model": self.model, "source": self.source, "priced": self.priced,
                "rows": [asdict(r) for r in self.rows], "total": asdict(self.total()), "notes": list(self.notes)}


def tally(records: Iterable[dict], provider: str, model: str, source: str,
          prices: Prices | None = None, systems: Iterable[str] = ()) -> Estimate:
    """Ledger rows (dicts with stage, system, prompt_tokens, completion_tokens) counted per stage and system
    and priced for `model` on `provider`; each of `systems` without a call gets a zero construction row. The
    structured-outputs probe is left out (a one-time overhead)."""
    groups: dict[tuple[str, str], EstimateRow] = {}
    for r in records:
        if r["stage"] == PROBE_STAGE:
            continue
        row = groups.setdefault((str(r["stage"]), str(r["system"])), EstimateRow(str(r["stage"]), str(r["system"])))
        row.calls += 1
        row.prompt_tokens += int(r["prompt_tokens"])
        row.completion_tokens += int(r["completion_tokens"])
    from memcore.systems.variants import parse_variant

    for name in systems:  # a variant's calls may be booked under its memory's name (a preset `sys:no-x` under `sys`)
        if not any(k[1] in (name, _memory_name(name, parse_variant)) for k in groups):
            groups[("construction", name)] = EstimateRow("construction", name)
    for row in groups.values():
        c = cost_usd(row.prompt_tokens, row.completion_tokens, model, provider, prices)
        row.cost_usd = None if c is None else round(c, 6)
    rows = sorted(groups.values(), key=lambda r: (r.system, r.stage))
    est = Estimate(provider, model, source, rows, priced=price_for(model, provider, prices) is not None)
    if not est.priced:
        est.notes.append(f"no price for model {model!r} in the price table (memcore/eval/prices.json): "
                         "tokens only, no dollars")
    return est


def offline_ledger(settings: Settings, work: Callable[[Any], None]) -> list[dict]:
    """Run `work(workbench)` with the offline engine on a throwaway store and return its ledger rows.

    The throwaway store shares only the embedding cache with `settings` (same embedder); nothing is
    written to the real store and no provider is called."""
    from memcore.workbench import Workbench

    with tempfile.TemporaryDirectory(prefix="memcore-estimate-") as tmp:
        off = settings.with_(llm_provider="offline", store_uri=tmp, cache_dir=str(settings.cache_path),
                             llm_check=False)
        wb = Workbench(off)
        work(wb)
        wb.ledger.flush()
        return [r.to_dict() for r in wb.ledger.records]


def estimate_ingest(settings: Settings, convs: list, systems: list[str], prices: Prices | None = None,
                    **config: Any) -> Estimate:
    """Calls and tokens an ingest of `systems` over `convs` makes, from the offline engine's ledger."""
    def work(wb: Any) -> None:
        for conv in convs:
            for name in systems:
                rep = wb.ingest(name, conv, **config)
                if rep.error:
                    raise RuntimeError(f"the offline estimate run of {name} on {conv.id} failed: {rep.message}")

    recs = offline_ledger(settings, work)
    est = tally(recs, settings.provider, settings.llm_model, OFFLINE_SOURCE, prices, systems)
    est.notes.append("counts building every memory from its start: a memory already (partly) built in the "
                     "store is resumed or skipped by the real ingest and costs less")
    return est


def estimate_eval(settings: Settings, prices: Prices | None = None, **eval_args: Any) -> Estimate:
    """Calls and tokens `run_eval(settings, **eval_args)` makes, from the offline engine's ledger of the
    same eval (construction of memories not yet built, answers, judge)."""
    from memcore.eval.runner import run_eval

    got: dict[str, Any] = {}

    def work(wb: Any) -> None:
        args = {**eval_args, "out": None, "workers": 1, "engine": "local", "progress": None, "run_id": None}
        got["res"] = run_eval(wb.settings, workbench=wb, **args)

    recs = offline_ledger(settings, work)
    names = eval_args.get("systems") or []
    est = tally(recs, settings.provider, settings.llm_model, OFFLINE_SOURCE, prices,
                systems=list((got.get("res") or {}).get("systems") or ([] if names == "all" else names)))
    est.notes.append("counts the whole run from nothing: memories already built in the store and a resumed "
                     "run's saved answers cost less")
    return est


def actual_usage(store: Any, conv_ids: list[str], systems: list[str], provider: str, model: str,
                 since_ts: float, prices: Prices | None = None) -> Estimate:
    """The calls a real run made (ledger rows of these conversations and systems on `provider` after
    `since_ts`), counted like an estimate."""
    from memcore.systems.variants import parse_variant

    names = {*systems, *(_memory_name(s, parse_variant) for s in systems)}  # a variant builds under its memory's name
    df = store.llm_calls(provider=provider, conv_id=list(conv_ids)) if conv_ids else None
    recs: list[dict] = []
    if df is not None and not df.empty:
        df = df[(df["ts"] >= since_ts) & df["system"].isin(names)]
        recs = df.to_dict("records")
    return tally(recs, provider, model, "the run's own ledger", prices, systems)


def _memory_name(name: str, parse: Callable[[str], Any]) -> str:
    """The name a variant's construction calls are booked under (the name itself when it does not parse)."""
    try:
        return str(parse(name).memory_name)
    except ValueError:
        return name


def format_estimate(est: Estimate | dict, actual: Estimate | dict | None = None) -> str:
    """The estimate as a text table (with the actual beside it when given)."""
    e = est.to_dict() if isinstance(est, Estimate) else est
    a = actual.to_dict() if isinstance(actual, Estimate) else actual
    act = {(r["stage"], r["system"]): r for r in (a or {}).get("rows", [])}
    def money(v: float | None) -> str:
        return "-" if v is None else f"${v:.4f}"

    head = f"{'system':18s} {'stage':13s} {'calls':>7s} {'prompt tok':>11s} {'compl. tok':>11s} {'cost':>10s}"
    if a:
        head += f" | {'actual calls':>12s} {'prompt tok':>11s} {'compl. tok':>11s} {'cost':>10s}"
    lines = [f"cost estimate for {e['provider']} / {e['model']} (source: {e['source']})", head]
    keys = [(r["stage"], r["system"]) for r in e["rows"]] + [k for k in act if k not in
                                                            {(r["stage"], r["system"]) for r in e["rows"]}]
    rows = {(r["stage"], r["system"]): r for r in e["rows"]}
    for k in [*keys, ("all", "all")]:
        r = e["total"] if k == ("all", "all") else rows.get(k, {"calls": 0, "prompt_tokens": 0,
                                                                   "completion_tokens": 0, "cost_usd": 0.0})
        line = (f"{k[1]:18s} {k[0]:13s} {r['calls']:7d} {r['prompt_tokens']:11d} {r['completion_tokens']:11d} "
                f"{money(r['cost_usd']):>10s}")
        if a:
            x = a["total"] if k == ("all", "all") else act.get(k, {"calls": 0, "prompt_tokens": 0,
                                                                   "completion_tokens": 0, "cost_usd": 0.0})
            line += (f" | {x['calls']:12d} {x['prompt_tokens']:11d} {x['completion_tokens']:11d} "
                     f"{money(x['cost_usd']):>10s}")
        lines.append(line)
    lines += [f"note: {n}" for n in e.get("notes", [])]
    return "\n".join(lines)


def record_estimate(res: dict, estimate: Estimate, settings: Settings, started: float,
                    out: str | None) -> tuple[dict, dict]:
    """Put the estimate beside the run's actual calls (ledger rows since `started`) into the results
    (res["cost_estimate"] = {"estimate", "actual"}), rewrite `out` with them, and return both."""
    from memcore.eval.report import write_results
    from memcore.workbench import Workbench

    store = Workbench(settings.with_(llm_provider="offline", llm_check=False)).store
    actual = actual_usage(store, list(res.get("conversations") or []), list(res.get("systems") or []),
                          settings.provider, settings.llm_model, started)
    res["cost_estimate"] = {"estimate": estimate.to_dict(), "actual": actual.to_dict()}
    if out:
        write_results(res, out)
    return res["cost_estimate"]["estimate"], res["cost_estimate"]["actual"]
