"""Stored evaluation runs: run ids, resume checks, run metadata, and results assembled from stored rows."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from memcore import __version__
from memcore.errors import ConfigError
from memcore.eval.compare import rank_systems
from memcore.eval.cost import construction_usage
from memcore.eval.paper_metrics import memory_footprint
from memcore.eval.report import CORRECT_RULE, aggregate, metric_labels, variant_of
from memcore.llm.redact import redact
from memcore.settings import Settings
from memcore.systems.variants import parse_variant, system_of
from memcore.types import Conversation, Question


def _memory_name(name: str) -> str | None:
    """The memory a variant answers from (Variant.memory_name); None (any) for a name no longer parseable
    (a system or preset not registered in this process): its construction calls are then the system's."""
    try:
        return parse_variant(name).memory_name
    except ValueError:
        return None


def run_fingerprint(meta: dict, sha: str, fmt: str, names: list[str], configs: dict[str, dict], retriever: str,
                    judge: bool | int) -> dict[str, Any]:
    """What makes two evaluations the same run (its id is `make_run_id` of it): the dataset file's hash and
    format, the result sets and their full configs, retriever, embedder, judge, provider, model, engine and
    the LLM options that change what is stored or scored (`meta`: run_meta's)."""
    return {"dataset_sha256": sha, "format": fmt, "systems": names, "configs": configs,
            "retriever": retriever, "embedder": meta["embedder"], "judge": judge,
            **{k: meta[k] for k in ("provider", "model", "engine")},
            **({"llm_options": meta["llm_options"]} if meta.get("llm_options") else {})}


def make_run_id(fingerprint: dict) -> str:
    """The deterministic run id of a fingerprint (dataset hash, systems, configs, provider, ...)."""
    blob = json.dumps(fingerprint, sort_keys=True, default=str)
    return "eval-" + hashlib.sha256(blob.encode()).hexdigest()[:12]



def existing_rows(store: Any, run_id: str) -> tuple[set[tuple[str, str]], dict | None]:
    """(variant, question_id) pairs already stored for the run (a plain system is its own variant), and one
    stored row (for checks)."""
    have = store.result_keys(run_id)
    if not have:
        return set(), None
    return have, store.results(run_id, limit=1)[0]


def check_compatible(run_id: str, old: dict | None, meta: dict) -> None:
    """Refuse to resume a run whose stored rows came from another provider or setup."""
    if old is None:
        return
    was = {k: old.get(k) for k in ("provider", "model", "engine")}
    now = {k: meta[k] for k in ("provider", "model", "engine")}
    if was != now:
        raise ConfigError(
            f"run {run_id} holds results from provider {was['provider']} / model {was['model']} "
            f"({was['engine']}), but this run uses {now['provider']} / {now['model']} ({now['engine']}); results "
            "never mix providers. Fix: rerun with that provider, or drop --run-id to start a separate run")
    if old.get("fingerprint") != meta["fingerprint"]:
        raise ConfigError(f"run {run_id} was made with other settings (dataset file, systems, retriever, "
                          "embedder, configs or judge). Fix: use the same settings, or drop --run-id")


def run_meta(wb: Any, settings: Settings) -> dict[str, Any]:
    """Run-level fields copied into every row: provider, model, engine label, embedder, store, version."""
    return {"provider": settings.provider, "provider_name": wb.llm.provider.name, "model": wb.llm.provider.model,
            "engine": wb.provider_label, "embedder": wb.embedder.name, "store": redact(wb.settings.store_uri),
            "memcore_version": __version__, "llm_options": wb.llm.options()}



def load_rows(store: Any, run_id: str, systems: list[str]) -> list[dict]:
    """Stored rows of a run (of the named variants) without their traces (streamed in batches to bound memory)."""
    return store.results(run_id, systems, traces=False)


def assemble(store: Any, run_id: str, convs: list[Conversation], selected: dict[str, list[Question]],
             names: list[str], meta: dict, judge_info: dict, fingerprint: dict, path: str,
             dataset: str) -> dict[str, Any]:
    """The results dict of a run from its stored rows (only the selected questions), one result set per
    variant in `names` (canonical variant names; a plain system is its own). A variant's construction usage is
    that of the memory it answers from (its memory_name: variants differing only in query-time settings
    report the same memory's)."""
    wanted = {(n, q.id) for n in names for qs in selected.values() for q in qs}
    rows = [r for r in load_rows(store, run_id, names) if (variant_of(r), r["question_id"]) in wanted]
    conv_ids = [c.id for c in convs]
    construction = {n: construction_usage(store, system_of(n), conv_ids, meta["provider_name"], meta["model"],
                                          variant=_memory_name(n)) for n in names}
    summaries = aggregate(rows, construction, judge=judge_info["enabled"], model=meta["model"],
                          provider=meta["provider"], systems=names)
    if meta.get("spaces"):  # the memory each system read (runs stored before it was recorded: no footprint)
        for n, fp in memory_footprint(store, meta["spaces"], conv_ids).items():
            summaries[n].update(footprint=fp, memory_rows=fp["rows"], memory_bytes=fp["bytes"])
    cats = sorted({str(q.category) for qs in selected.values() for q in qs}, key=lambda s: (len(s), s))
    return {
        "run_id": run_id, "complete": len(rows) == len(wanted), "questions_total": len(wanted),
        "questions_done": len(rows), "questions_missing": len(wanted) - len(rows),
        "missing_by_system": {n: sum(1 for s, _ in wanted if s == n) - sum(1 for r in rows if variant_of(r) == n)
                              for n in names}, "memcore_version": meta["memcore_version"],
        "provider": meta["provider"], "model": meta["model"], "engine": meta["engine"],
        "embedder": meta["embedder"], "store": meta["store"], "retriever": fingerprint["retriever"],
        "dataset": {"name": dataset, "format": fingerprint["format"], "file": path,
                    "sha256": fingerprint["dataset_sha256"]},
        "conversations": conv_ids, "categories": cats,
        "questions_per_category": {c: sum(str(q.category) == c for qs in selected.values() for q in qs)
                                   for c in cats},
        "judge": judge_info, "correct_rule": CORRECT_RULE, "metrics": metric_labels(meta["embedder"]),
        "systems": summaries,
        "ranking": rank_systems(rows, "judge" if judge_info["enabled"] else "f1"),  # ties marked (eval.compare)
    }
