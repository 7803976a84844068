"""What a stored evaluation run ran, in words: per result set the configuration that answered (its
canonical variant name, from the full config the run record holds), and one line per run naming its
variants, settings, dataset, retriever, model and date, so that two runs of different configurations
never read alike in a picker (the run id ends the line: two lines are never equal)."""

from __future__ import annotations

import time
from typing import Any

from memcore.systems.base import config_to_dict
from memcore.systems.variants import parse_variant, system_of, variant_name

__all__ = ["ran_as", "run_label", "run_variants"]


def ran_as(name: str, config: dict[str, Any] | None) -> str:
    """The configuration result set `name` ran with: `name` itself when its config is the one the name stands
    for, else the canonical variant of `config` (a run of `SYSTEM` given settings beside the name ran as
    `SYSTEM[field=value]`); `name` when neither can be read (a system not registered in this process)."""
    if not config:
        return name
    try:
        if config_to_dict(parse_variant(name).config()) == config:
            return name
    except ValueError:
        return name
    try:
        return variant_name(system_of(name), {k: v for k, v in config.items()})
    except (ValueError, KeyError):
        return name


def run_variants(rec: dict[str, Any]) -> dict[str, str]:
    """{result-set name: the configuration it ran as} of a run record (list_runs's)."""
    configs = ((rec.get("payload") or {}).get("fingerprint") or {}).get("configs") or {}
    return {n: ran_as(n, configs.get(n)) for n in rec.get("systems") or []}


def _dataset(rec: dict[str, Any]) -> str:
    name, _, path = str(rec.get("dataset") or "").partition(" ")
    base = path.replace("\\", "/").rsplit("/", 1)[-1]
    return f"{name} ({base})" if base and base != f"{name}.json" else name or "?"


def run_label(rec: dict[str, Any]) -> str:
    """One line per run: variants as they ran, dataset, retriever, model, start date (UTC), state, run id."""
    fp = (rec.get("payload") or {}).get("fingerprint") or {}
    ran = run_variants(rec)
    names = ", ".join(n if v == n else f"{n} = {v}" for n, v in ran.items()) or "?"
    started = rec.get("started")
    when = time.strftime("%Y-%m-%d %H:%M", time.gmtime(float(started))) if started else "date ?"
    model = fp.get("model") or "?"
    return (f"{names} · {_dataset(rec)} · retriever {fp.get('retriever', '?')} · {model} · {when} UTC · "
            f"{rec.get('state', rec.get('status', '?'))} · {rec.get('run_id')}")
