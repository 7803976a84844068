"""Cost: an editable per-model price table (prices.json) and the token -> USD arithmetic."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

PRICES_PATH = Path(__file__).with_name("prices.json")
FREE_PROVIDERS = frozenset({"offline", "fake", "local"})

Prices = dict[str, dict[str, float]]


def load_prices(path: str | Path | None = None) -> Prices:
    """The price table {model: {"prompt_per_1m", "completion_per_1m"}} (keys starting with _ skipped)."""
    p = Path(path) if path else PRICES_PATH
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ValueError(f"cannot read the price table {p}: {e}. Fix: make it a JSON object "
                         '{"model": {"prompt_per_1m": x, "completion_per_1m": y}}') from e
    out: Prices = {}
    for model, entry in data.items():
        if model.startswith("_"):
            continue
        if not isinstance(entry, dict) or not {"prompt_per_1m", "completion_per_1m"} <= set(entry):
            raise ValueError(f"{p}: model {model!r} needs prompt_per_1m and completion_per_1m")
        out[model] = {"prompt_per_1m": float(entry["prompt_per_1m"]),
                      "completion_per_1m": float(entry["completion_per_1m"])}
    return out


def price_for(model: str, provider: str = "", prices: Prices | None = None) -> dict[str, float] | None:
    """The model's price per 1M tokens: 0 for offline/fake/local providers, else the longest matching
    model prefix in the table, else None (unknown price)."""
    if provider in FREE_PROVIDERS:
        return {"prompt_per_1m": 0.0, "completion_per_1m": 0.0}
    table = load_prices() if prices is None else prices
    if model in table:
        return table[model]
    matches = [m for m in table if model.startswith(m)]
    return table[max(matches, key=len)] if matches else None


def cost_usd(prompt_tokens: int, completion_tokens: int, model: str, provider: str = "",
             prices: Prices | None = None) -> float | None:
    """Dollars for these token counts, or None when the model has no price in the table."""
    price = price_for(model, provider, prices)
    if price is None:
        return None
    return (prompt_tokens * price["prompt_per_1m"] + completion_tokens * price["completion_per_1m"]) / 1e6


def same_model(recorded: str, model: str) -> bool:
    """Whether a model name recorded in the ledger is `model` (or a dated version: gpt-4o-mini-2024-07-18)."""
    rest = recorded[len(model) + 1:] if recorded.startswith(model + "-") else ""
    return recorded == model or rest[:1].isdigit()


def construction_usage(store: Any, system: str, conv_ids: list[str], provider: str, model: str,
                       variant: str | None = None) -> dict:
    """Ingest LLM usage of a system over conversations, from the ledger in the store; with `variant`, of that
    memory only (the calls whose ledger variant is that construction variant name, Variant.memory_name).

    Every stored construction call counts once: a resumed ingest first deletes the ledger rows of
    the steps it rolls back (store.rollback), so redone calls are not counted twice; calls answered
    by the call cache count like the others (a resumed ingest's redone calls hit it).
    """
    df = store.llm_calls(stage="construction", system=system, provider=provider, conv_id=list(conv_ids),
                         variant=variant) if conv_ids else None
    out = {"prompt_tokens": 0, "completion_tokens": 0, "calls": 0, "latencies_ms": []}
    if df is None or df.empty:
        return out
    df = df[[same_model(m, model) for m in df["model"].astype(str)]]
    out["prompt_tokens"] = int(df["prompt_tokens"].sum())
    out["completion_tokens"] = int(df["completion_tokens"].sum())
    out["calls"] = len(df)
    out["latencies_ms"] = [float(x) for x in df.sort_values(["step", "ts"], kind="stable")["latency_ms"]]
    return out
