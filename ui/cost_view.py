"""Cost preview in the app: the estimate (memcore.eval.estimate) on a Build card and before "Start run".

Shown only when the provider is not free (the offline engine and the fake cost nothing). Computing an
estimate counts an earlier real run of the same configuration when the store holds one, else runs the same
work with the offline engine on a throwaway store (seconds on the demo, longer on a
long conversation), so it runs on a click and is kept for the session; the real store is not touched.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from memcore.eval.estimate import FREE, Estimate, estimate_eval, estimate_ingest
from memcore.viz.safe import md_escape
from memcore.workbench import Workbench


def needs_preview(wb: Workbench) -> bool:
    """Whether building or evaluating with this workbench's provider may cost money."""
    return wb.settings.provider not in FREE


def summary(est: dict[str, Any]) -> str:
    """One line (Markdown, escaped): calls, tokens and cost, with the model and the source named."""
    t = est["total"]
    cost = f"≈ ${t['cost_usd']:.4f}" if est["priced"] else "no price for this model: tokens only"
    several = len({r["system"] for r in est["rows"]}) > 1
    per = ", ".join(f"{r['system'] + ' ' if several else ''}{r['stage']} {r['calls']}" for r in est["rows"]
                    if r["calls"])
    return md_escape(f"Cost estimate ({est['provider']} / {est['model']}): {t['calls']} calls"
                     f"{f' ({per})' if per else ''}, {t['prompt_tokens']:,} prompt + {t['completion_tokens']:,} "
                     f"completion tokens, {cost}. {sources(est)}.")


def sources(est: dict[str, Any]) -> str:
    """Where the counts come from: one source, or the systems of each when they differ (plain text)."""
    by: dict[str, list[str]] = {}
    for r in est["rows"]:
        names = by.setdefault(r.get("source") or est["source"], [])
        if r["system"] not in names:
            names.append(r["system"])
    if len(by) <= 1:
        return f"Source: {est['source']}"
    return "Sources: " + "; ".join(f"{', '.join(names)}: {src}" for src, names in by.items())


def _show(slot: Any, key: str, compute: Any, label: str) -> None:
    """The stored estimate under `key`, else an 'Estimate cost' button that computes it."""
    cache: dict = st.session_state.setdefault("_cost_estimates", {})
    if key not in cache and slot.button(label, key=f"cost_{key}", icon=":material/payments:",
                                        help="Counts an earlier real run of the same configuration in the store, "
                                             "else runs the same work with the offline engine on a throwaway "
                                             "store, and prices the calls (memcore/eval/prices.json); calls no "
                                             "provider"):
        with st.spinner("Estimating…"):
            try:
                est: Estimate = compute()
                cache[key] = est.to_dict()
            except Exception as e:
                cache[key] = {"error": f"{type(e).__name__}: {e}"}
    got = cache.get(key)
    if got and "error" in got:
        slot.caption(md_escape(f"No cost estimate: {got['error']}"))
    elif got:
        slot.caption(summary(got))


def ingest_estimate(wb: Workbench, conv: Any, systems: list[str], key: str) -> None:
    """On a Build card: the estimated cost of building these systems' memory of the conversation."""
    if not needs_preview(wb):
        return
    s = wb.settings
    ident = f"ingest|{s.provider}|{s.llm_model}|{conv.id}|{','.join(systems)}|{key}"
    _show(st, ident, lambda: estimate_ingest(s, [conv], systems, workbench=wb), "Estimate cost")


def eval_estimate(wb: Workbench, key: str, **eval_args: Any) -> None:
    """Before "Start run": the estimated cost of the evaluation with these arguments."""
    if not needs_preview(wb):
        return
    s = wb.settings
    ident = f"eval|{s.provider}|{s.llm_model}|" + "|".join(f"{k}={v}" for k, v in sorted(eval_args.items())) + key
    _show(st, ident, lambda: estimate_eval(s, workbench=wb, **eval_args), "Estimate cost of this run")
