"""Cost preview from an earlier real run of the same configuration in the store (memcore.eval.estimate).

Ingest: a memory of the same space - system, construction settings, embedder, provider, model and LLM options
(memcore.systems.protocol.memory_space) - built to its end in the store. Its calls are the ledger's
construction rows of that memory (system, conversation, construction variant, provider, model), counted as a
run's results count them (memcore.eval.cost.construction_usage).

Eval: per result set, the newest earlier run on the same real provider and model whose fingerprint matches
(dataset file, retriever, embedder, judge, engine, LLM options, and that result set's full config) and which
answered every question this run selects. Its answering calls are the sum of those questions' stored usage
per stage (judge included); its construction calls are the ledger's rows of the memory it read, as above.

Nothing is scaled: another conversation, question, setting or model, a memory not built to its end or a
question the earlier run did not answer leaves that work to the offline engine's ledger, and the estimate
says which source each system's counts come from.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from memcore.errors import ConfigError
from memcore.eval.cost import construction_usage
from memcore.eval.run_record import list_runs
from memcore.eval.runner import load_conversations, resolve_variants, run_meta, select_questions
from memcore.eval.runs import run_fingerprint
from memcore.store.variants import saved_variant
from memcore.systems import load_all
from memcore.systems.base import config_to_dict

FREE = frozenset({"offline", "fake"})  # providers whose calls cost nothing (and need no preview)
STAGE_KEYS = ("calls", "prompt_tokens", "completion_tokens")


@dataclass
class Prior:
    """Counts taken from earlier real runs: aggregated ledger records, the names (as given) they cover and,
    per system (as estimate rows are keyed), where they come from."""

    records: list[dict] = field(default_factory=list)
    covered: list[str] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)
    built: set[tuple[str, str]] = field(default_factory=set)  # (memory, conv id) whose construction is counted

    def name_source(self, system: str, source: str) -> None:
        """Record where a system's counts come from (two names of one system from two places: both named)."""
        old = self.sources.get(system)
        self.sources[system] = source if old in (None, source) else f"{old}; {source}"

    def construction(self, wb: Any, system: str, memory: str, convs: list) -> None:
        """Add the construction records of a built memory, once per memory and conversation (variants that
        differ only in query-time settings read, and the real run builds, one memory)."""
        for conv in convs:
            if (memory, conv.id) not in self.built:
                self.built.add((memory, conv.id))
                self.records.append(_construction(wb, system, memory, conv.id))


def when(ts: float) -> str:
    """A ledger or run time as a date and minute (UTC)."""
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(ts))


def _construction(wb: Any, system: str, memory: str, conv_id: str) -> dict:
    """One aggregated construction record of a built memory, from the ledger (real provider and model)."""
    u = construction_usage(wb.store, system, [conv_id], wb.llm.provider.name, wb.llm.provider.model,
                           variant=memory)
    return {"stage": "construction", "system": system, **{k: u[k] for k in STAGE_KEYS}}


def _built(wb: Any, name: str, conv: Any, config: dict) -> tuple[str, float] | None:
    """(memory space, when its ingest finished) when this configuration's memory is complete in the store."""
    space = wb.space(name, conv, **config)
    ck = wb.store.checkpoint(space, conv.id)
    return (space, float(ck.get("updated") or 0.0)) if ck and ck["done"] else None


def _keep_whole_systems(prior: Prior, system_of: dict[str, str]) -> Prior:
    """Drop a system's counts when only some of its names are covered: estimate rows are per system, and one
    row never mixes two sources."""
    partial = {system_of[n] for n in system_of if n not in prior.covered}
    if not partial & {system_of[n] for n in prior.covered}:
        return prior
    return Prior([r for r in prior.records if r["system"] not in partial],
                 [n for n in prior.covered if system_of[n] not in partial],
                 {s: v for s, v in prior.sources.items() if s not in partial}, prior.built)


def prior_ingest(wb: Any, convs: list, names: list[str], config: dict) -> Prior:
    """Counts of building these memories, from the ledger of an earlier real build of each (every conversation
    built to its end with this provider, model, embedder and construction settings); names without one are
    left out of `covered`."""
    prior = Prior()
    if wb.settings.provider in FREE or not convs:
        return prior
    model = f"{wb.llm.provider.name} / {wb.llm.provider.model}"
    system_of = {}
    for name in names:
        v = wb.variant(name, **config)
        system_of[name] = v.system
        built = [_built(wb, name, conv, config) for conv in convs]
        if not all(built):
            continue
        prior.construction(wb, v.system, v.memory_name, convs)
        prior.covered.append(name)
        spaces = ", ".join(f"{b[0]} of {c.id}" for b, c in zip(built, convs, strict=True) if b)
        prior.name_source(v.system, f"earlier real run: memory {spaces} built with {model} on "
                                    f"{when(max(b[1] for b in built if b))}")
    return _keep_whole_systems(prior, system_of)


def eval_plan(wb: Any, args: dict[str, Any]) -> dict[str, Any]:
    """What `run_eval(settings, **args)` on this workbench would run: conversations, selected question ids,
    result sets (canonical names, their Variant, keyword settings and the name given) and the run's fingerprint."""
    convs, fmt, path, sha = load_conversations(args.get("dataset", "locomo"), args.get("file"),
                                                bool(args.get("lenient")))
    if args.get("conversations"):
        have = {c.id: c for c in convs}
        missing = [c for c in args["conversations"] if c not in have]
        if missing:  # as run_eval says it
            raise ConfigError(f"no conversation(s) {missing} in {path}; have: {', '.join(have)}")
        convs = [have[c] for c in args["conversations"]]
    systems = args.get("systems", "all")
    retriever = args.get("retriever") or "dense"
    given = list(load_all()) if systems == "all" else list(systems)
    variants = resolve_variants(given, retriever, args.get("configs"), lambda n: saved_variant(wb.store, n))
    names = list(variants)  # one per name given, in order
    configs = {n: config_to_dict(v.config()) for n, v in variants.items()}
    fp = run_fingerprint(run_meta(wb, wb.settings), sha, fmt, names, configs, retriever, args.get("judge", True))
    return {"convs": convs, "names": names, "variants": variants, "fingerprint": fp,
            "given": dict(zip(names, given, strict=True)),
            "settings": {n: dict(v.settings) for n, v in variants.items()},
            "selected": {c.id: [q.id for q in select_questions(c, args.get("categories"), args.get("limit"))]
                         for c in convs}}


def _matches(fp: dict, want: dict, name: str) -> bool:
    """Whether a stored run's fingerprint is the same evaluation as `want` for result set `name`."""
    same = ("dataset_sha256", "format", "retriever", "embedder", "judge", "provider", "model", "engine",
            "llm_options")
    return all(fp.get(k) == want.get(k) for k in same) and name in (fp.get("configs") or {}) \
        and fp["configs"][name] == want["configs"][name]


def _answering(rows: list[dict], system: str) -> list[dict]:
    """Aggregated records per stage of the stored usage of these answered questions."""
    out: dict[str, dict] = {}
    for r in rows:
        for stage, u in (r.get("usage") or {}).items():
            rec = out.setdefault(stage, {"stage": stage, "system": system, "calls": 0, "prompt_tokens": 0,
                                         "completion_tokens": 0})
            for k in STAGE_KEYS:
                rec[k] += int(u.get(k) or 0)
    return list(out.values())


def prior_eval(wb: Any, plan: dict) -> Prior:
    """Counts of an evaluation from earlier real runs of the same configuration, per result set.

    `plan` (eval_plan): the new run's `fingerprint`, `names`, `variants`
    (name -> Variant), `settings` (name -> keyword settings), `selected` (conv id -> question ids) and `convs`."""
    prior = Prior()
    want = plan["fingerprint"]
    if want["provider"] in FREE:
        return prior
    runs = [r for r in list_runs(wb.store) if r["payload"].get("fingerprint")]
    model = f"{want['provider']} / {want['model']}"
    for name in plan["names"]:
        v = plan["variants"][name]
        built = [_built(wb, v.system, conv, plan["settings"][name]) for conv in plan["convs"]]
        if not all(built):
            continue
        wanted = {q for qs in plan["selected"].values() for q in qs}
        if not wanted:  # nothing to answer: no run's counts stand for it
            continue
        for rec in runs:  # newest first
            if not _matches(rec["payload"]["fingerprint"], want, name):
                continue
            rows = {r["question_id"]: r for r in wb.store.results(rec["run_id"], [name], traces=False)
                    if not r.get("error")}
            if not wanted <= set(rows):
                continue
            prior.records += _answering([rows[q] for q in sorted(wanted)], v.system)
            prior.construction(wb, v.system, v.memory_name, plan["convs"])
            prior.covered.append(name)
            prior.name_source(v.system, f"earlier real run {rec['run_id']} ({model}) on "
                                        f"{when(float(rec['finished'] or rec['started']))}")
            break
    return _keep_whole_systems(prior, {n: plan["variants"][n].system for n in plan["names"]})
