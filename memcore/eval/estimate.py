"""Cost preview: calls and tokens per stage and system before a build or eval on a real provider.

The estimate comes from an earlier real run of the same configuration when the store holds one
(memcore.eval.estimate_prior: the same memory space built to its end, or an evaluation with the same
fingerprint that answered the same questions; its ledger's calls and the real model's token counts, nothing
scaled), else from the offline engine's ledger for the same work: the same ingest (or eval) runs with the
offline engine into a throwaway store and its LLM calls are counted per stage and system. Either is priced for
the chosen model (memcore.eval.cost; an unknown price gives tokens only, said so), and every row names its
source. The offline engine asks the same roles the same number of times per turn and question, so its calls
are the real run's calls; its token counts are its own prompts' and replies' and only approximate a hosted
model's. After a real run, `actual_usage` counts the run's calls from the store's ledger the same way, so
estimate and actual sit side by side (results["cost_estimate"]).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from memcore.eval.cost import Prices, cost_usd, price_for
from memcore.eval.estimate_prior import FREE, Prior, eval_plan, prior_eval, prior_ingest
from memcore.eval.report import write_results
from memcore.eval.runner import run_eval
from memcore.llm.ledger import PROBE_STAGE
from memcore.llm.windows import DOES_NOT_FIT, context_window
from memcore.settings import Settings
from memcore.systems.variants import parse_variant
from memcore.workbench import Workbench

OFFLINE_SOURCE = "offline engine ledger of the same work (throwaway store)"
NO_PRIOR = "no earlier real run of this configuration in the store"
__all__ = ["FREE", "OFFLINE_SOURCE", "Estimate", "EstimateRow", "actual_usage", "estimate_eval", "estimate_ingest",
           "format_estimate", "record_estimate", "tally"]


@dataclass
class EstimateRow:
    """Calls and tokens of one stage of one system."""

    stage: str
    system: str
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None
    source: str = ""  # where this row's counts come from (the estimate's source when all rows share one)


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
    """Ledger rows (dicts with stage, system, prompt_tokens, completion_tokens; `calls` when one dict stands
    for several calls) counted per stage and system and priced for `model` on `provider`; each of `systems` without a call gets a zero construction row. The
    structured-outputs probe is left out (a one-time overhead)."""
    groups: dict[tuple[str, str], EstimateRow] = {}
    for r in records:
        if r["stage"] == PROBE_STAGE:
            continue
        row = groups.setdefault((str(r["stage"]), str(r["system"])), EstimateRow(str(r["stage"]), str(r["system"])))
        row.calls += int(r.get("calls", 1))
        row.prompt_tokens += int(r["prompt_tokens"])
        row.completion_tokens += int(r["completion_tokens"])

    for name in systems:  # a variant's calls may be booked under its memory's name (a preset `sys:no-x` under `sys`)
        if not any(k[1] in (name, _memory_name(name, parse_variant)) for k in groups):
            groups[("construction", name)] = EstimateRow("construction", name)
    for row in groups.values():
        c = cost_usd(row.prompt_tokens, row.completion_tokens, model, provider, prices)
        row.cost_usd = None if c is None else round(c, 6)
    rows = sorted(groups.values(), key=lambda r: (r.system, r.stage))
    est = Estimate(provider, model, source, rows, priced=price_for(model, provider, prices) is not None)
    unsent: dict[str, int] = {}
    for r in records:
        if r.get("outcome") == "does_not_fit":
            who = str(r.get("variant") or r["system"])
            unsent[who] = unsent.get(who, 0) + 1
    if unsent:  # booked with no tokens: never sent
        est.notes.append(f"prompts that do not fit ({DOES_NOT_FIT}) the context window of {model} (never sent, no tokens counted; "
                         "those questions go unanswered): " + ", ".join(f"{k} {v}" for k, v in sorted(unsent.items())))
    if not est.priced:
        est.notes.append(f"no price for model {model!r} in the price table (memcore/eval/prices.json): "
                         "tokens only, no dollars")
    return est


def offline_ledger(settings: Settings, work: Callable[[Any], None]) -> list[dict]:
    """Run `work(workbench)` with the offline engine on a throwaway store and return its ledger rows.

    The throwaway store shares only the embedding cache with `settings` (same embedder); nothing is
    written to the real store and no provider is called."""
    window, _ = context_window(settings.provider, settings.llm_model, settings.llm_context_window)
    with tempfile.TemporaryDirectory(prefix="memcore-estimate-") as tmp:
        # the offline engine simulates the real model's context window: cut contexts and prompts that do not fit
        off = settings.with_(llm_provider="offline", store_uri=tmp, cache_dir=str(settings.cache_path),
                             llm_check=False, llm_context_window=window or 0)
        wb = Workbench(off)
        work(wb)
        wb.ledger.flush()
        return [r.to_dict() for r in wb.ledger.records]


def _lookup(settings: Settings, workbench: Any, find: Callable[[Any], Prior]) -> tuple[Prior, str]:
    """Earlier real runs found by `find(workbench)` (a workbench on `settings`' store and provider, made when not
    given; it calls no provider), and why none was looked up (a free provider, or the lookup failed: named)."""
    if settings.provider in FREE:
        return Prior(), NO_PRIOR
    try:
        if workbench is None:
            workbench = Workbench(settings.with_(llm_check=False))
        return find(workbench), NO_PRIOR
    except Exception as e:
        return Prior(), f"earlier real runs not looked up ({type(e).__name__}: {e})"


def _sourced(settings: Settings, records: list[dict], prior: Prior, why: str, prices: Prices | None,
             systems: Iterable[str]) -> Estimate:
    """The estimate of these records, each row naming its source (an earlier real run, or the offline engine's
    ledger), and the estimate's source all of them in order."""
    offline = OFFLINE_SOURCE if prior.covered else f"{OFFLINE_SOURCE}; {why}"
    est = tally(records, settings.provider, settings.llm_model, offline, prices, systems)
    for r in est.rows:
        r.source = prior.sources.get(r.system, offline)
    est.source = "; ".join(dict.fromkeys(r.source for r in est.rows)) or offline
    if prior.covered:
        est.notes.append(f"{', '.join(prior.covered)}: counts of an earlier real run of the same configuration "
                         "(its ledger and the real model's token counts; a model's replies vary, so a new run's "
                         "calls and tokens are close to these, not equal)")
    return est


def estimate_ingest(settings: Settings, convs: list, systems: list[str], prices: Prices | None = None,
                    workbench: Any = None, **config: Any) -> Estimate:
    """Calls and tokens an ingest of `systems` over `convs` makes: from the ledger of an earlier real build
    of the same memory (memcore.eval.estimate_prior.prior_ingest), else the offline engine's ledger."""
    prior, why = _lookup(settings, workbench, lambda wb: prior_ingest(wb, convs, systems, config))
    rest = [n for n in systems if n not in prior.covered]

    def work(wb: Any) -> None:
        for conv in convs:
            for name in rest:
                rep = wb.ingest(name, conv, **config)
                if rep.error:
                    raise RuntimeError(f"the offline estimate run of {name} on {conv.id} failed: {rep.message}")

    recs = prior.records + (offline_ledger(settings, work) if rest else [])
    est = _sourced(settings, recs, prior, why, prices, systems)
    if prior.covered:
        est.notes.append("a memory built to its end in the store is skipped by `memcore ingest` (no calls): the "
                         "counts are what building it again from its start costs (after a reset, or elsewhere)")
    if rest:
        est.notes.append("counts building every memory from its start: a memory already (partly) built in the "
                         "store is resumed or skipped by the real ingest and costs less")
    return est


def estimate_eval(settings: Settings, prices: Prices | None = None, workbench: Any = None,
                  **eval_args: Any) -> Estimate:
    """Calls and tokens `run_eval(settings, **eval_args)` makes (construction of memories not yet built,
    answers, judge): per result set from an earlier real run of the same configuration that answered the same
    questions (memcore.eval.estimate_prior.prior_eval), else from the offline engine's ledger of the same eval."""
    plan: dict[str, Any] = {}

    def find(wb: Any) -> Prior:
        plan.update(eval_plan(wb, eval_args))
        return prior_eval(wb, plan)

    prior, why = _lookup(settings, workbench, find)
    rest = [n for n in plan.get("names", []) if n not in prior.covered]
    got: dict[str, Any] = {}

    def work(wb: Any) -> None:
        args = {**eval_args, "out": None, "workers": 1, "engine": "local", "progress": None, "run_id": None,
                **({"systems": [plan["given"][n] for n in rest]} if plan else {})}
        got["res"] = run_eval(wb.settings, workbench=wb, **args)

    recs = prior.records + (offline_ledger(settings, work) if rest or not plan else [])
    names = eval_args.get("systems") or []
    systems = plan.get("names") or list((got.get("res") or {}).get("systems") or ([] if names == "all" else names))
    est = _sourced(settings, recs, prior, why, prices, systems)
    est.notes.append("counts the whole run from nothing: memories already built in the store and a resumed "
                     "run's saved answers cost less")
    cut = {n: s["fallbacks"].get("context_cut", 0) for n, s in ((got.get("res") or {}).get("systems") or {}).items()
           if (s.get("fallbacks") or {}).get("context_cut")}
    if cut:
        est.notes.append("answers whose context is cut to fit the model's context window (counted as cut): "
                         + ", ".join(f"{k} {v}" for k, v in sorted(cut.items())))
    return est


def actual_usage(store: Any, conv_ids: list[str], systems: list[str], provider: str, model: str,
                 since_ts: float, prices: Prices | None = None) -> Estimate:
    """The calls a real run made (ledger rows of these conversations and systems on `provider` after
    `since_ts`), counted like an estimate."""
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
    by_system = {r["system"]: r.get("source") or e["source"] for r in e["rows"]}
    mixed = len(set(by_system.values())) > 1
    lines = [f"cost estimate for {e['provider']} / {e['model']} (source: "
             f"{'per system, below' if mixed else e['source']})", head]
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
    lines += [f"source of {name}: {src}" for name, src in by_system.items()] if mixed else []
    lines += [f"note: {n}" for n in e.get("notes", [])]
    return "\n".join(lines)


def record_estimate(res: dict, estimate: Estimate, settings: Settings, started: float,
                    out: str | None) -> tuple[dict, dict]:
    """Put the estimate beside the run's actual calls (ledger rows since `started`) into the results
    (res["cost_estimate"] = {"estimate", "actual"}), rewrite `out` with them, and return both."""
    store = Workbench(settings.with_(llm_provider="offline", llm_check=False)).store
    actual = actual_usage(store, list(res.get("conversations") or []), list(res.get("systems") or []),
                          settings.provider, settings.llm_model, started)
    res["cost_estimate"] = {"estimate": estimate.to_dict(), "actual": actual.to_dict()}
    if out:
        write_results(res, out)
    return res["cost_estimate"]["estimate"], res["cost_estimate"]["actual"]
