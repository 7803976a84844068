"""Sweeps: one system evaluated over the product of settings, one resumable run per point.

    run_sweep(Settings(), SYSTEM, ["beta=0.3,0.5,0.8", "max_len=4,8"], presets="ablations", dataset="demo")

Each point is a canonical variant name (memcore.systems.variants: `SYSTEM[beta=0.8,max_len=4]`, a preset
`SYSTEM:PRESET`, paper defaults dropped) evaluated by `run_eval` (any engine: local, `workers`, Ray) under that
name (its rows, run record and ledger name the variant); its rows are stored under its own deterministic run id, so a killed
sweep rerun with the same arguments redoes only what no run stored and ends with identical results. Points are
ordered by memory space (the construction settings, memcore.systems.protocol.memory_space): the first point
of a space builds its memory, every other point of that space (its query-time settings, such as the
retriever) answers from the stored memory. The result counts the construction points and how often a
memory was built in this invocation.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import product
from pathlib import Path
from typing import Any

from memcore.errors import ConfigError
from memcore.eval.processes import parse_workers
from memcore.eval.ray_engine import connect
from memcore.eval.runner import load_conversations, run_eval, select_questions
from memcore.eval.sweep_report import KIND, write_sweep
from memcore.settings import Settings
from memcore.systems import load_all, make_config
from memcore.systems.fields import field_specs, format_value
from memcore.systems.variants import get_preset, get_sweep, parse_value, parse_variant, presets, variant_name
from memcore.workbench import Workbench

ABLATIONS = "ablations"  # --presets ablations: every registered preset of the system
PointCb = Callable[[int, int, dict], None]


@dataclass(frozen=True)
class Point:
    """One point of a sweep: its canonical variant name, preset ("" = the full system), the swept values
    (`params`, typed; a field the preset sets is `held` at the preset's value) and every override in force
    (`settings`: the preset's, then the swept ones)."""

    name: str
    system: str
    preset: str = ""
    params: dict[str, Any] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    held: tuple[str, ...] = ()  # swept fields the preset sets itself: held at the preset's value


def parse_grid(system: str, specs: list[str] | dict[str, list[str]]) -> dict[str, list[Any]]:
    """{field: typed values} from `["beta=0.3,0.5", "max_len=4,8"]` (or a dict of value texts), each value
    checked against the system's field spec; ConfigError (one line) naming the field and what is valid."""
    if system not in load_all():
        raise ConfigError(f"unknown memory system {system!r}; available: {', '.join(load_all())}")
    fields = {s.name: s for s in field_specs(load_all()[system].config_class)}
    items = list(specs.items()) if isinstance(specs, dict) else [_split_grid(s) for s in specs]
    grid: dict[str, list[Any]] = {}
    for key, texts in items:
        if key not in fields:
            raise ConfigError(f"--grid {key}: {system} has no field {key!r}; fields: {', '.join(fields)}")
        if key in grid:
            raise ConfigError(f"--grid {key} is given twice")
        try:
            values = [parse_value(fields[key], t, f"--grid {key}") for t in texts]
        except ValueError as err:
            raise ConfigError(str(err)) from None
        if not values or len(set(map(repr, values))) != len(values):
            raise ConfigError(f"--grid {key}: give distinct values, e.g. {key}=a,b")
        grid[key] = values
    return grid


def _split_grid(text: str) -> tuple[str, list[str]]:
    key, eq, values = text.partition("=")
    if not eq or not key.strip() or not values.strip():
        raise ConfigError(f"--grid {text!r} is not FIELD=v1,v2,... (e.g. --grid beta=0.3,0.5,0.8)")
    return key.strip(), [v for v in values.split(",") if v.strip()]


def paper_grid(system: str, name: str | None, grid: list[str] | dict[str, list[str]] | None) -> tuple[dict, dict]:
    """(grid texts, the sweep's record) of a paper's registered sweep `name` (memcore.systems.variants:
    `register_sweep`) joined with the explicit grid; ConfigError for an unknown sweep or a field given twice."""
    items = dict(grid.items()) if isinstance(grid, dict) else dict(_split_grid(g) for g in grid or [])
    if len(items) != len(grid or []):
        raise ConfigError("--grid: a field is given twice")
    if not name:
        return items, {}
    try:
        sw = get_sweep(system, name)
    except ValueError as err:
        raise ConfigError(f"--sweep {name}: {err}") from None
    both = sorted(set(sw.grid) & set(items))
    if both:
        raise ConfigError(f"--sweep {name} already sweeps {', '.join(both)}; leave it out of --grid")
    texts = {k: [format_value(v) for v in vals] for k, vals in sw.grid.items()}
    return {**texts, **items}, {"name": sw.name, "source": sw.source, "description": sw.description}


def preset_names(system: str, chosen: str | list[str] | None) -> list[str]:
    """The presets of a sweep: none, every registered one (`ablations`) or the named ones, checked."""
    if not chosen:
        return []
    names = chosen.split(",") if isinstance(chosen, str) else list(chosen)
    names = [n.strip() for n in names if n.strip()]
    if names == [ABLATIONS]:
        found = [p.name for p in presets(system)]
        if not found:
            raise ConfigError(f"--presets ablations: {system} has no registered presets "
                              "(memcore systems --variants lists them)")
        return found
    for n in names:
        try:
            get_preset(system, n)
        except ValueError as err:
            raise ConfigError(f"--presets {n}: {err}") from None
    return names


def sweep_points(system: str, grid: dict[str, list[Any]], retrievers: list[str] | None = None,
                 preset_list: list[str] | None = None) -> list[Point]:
    """The product of the full system and each preset, the grid's values and the retrievers, as Points with
    canonical names (a point that names the same variant as an earlier one is left out). A preset keeps the
    fields it sets (its ablation): the grid's values of such a field do not apply to its points (`held`)."""
    axes = dict(grid)
    if retrievers:
        axes["retriever"] = parse_grid(system, {"retriever": list(retrievers)})["retriever"]
    points: dict[str, Point] = {}
    for preset in ["", *(preset_list or [])]:
        base = dict(get_preset(system, preset).overrides) if preset else {}
        held = tuple(k for k in axes if k in base)  # the preset's own fields keep its values (else no ablation)
        for combo in product(*axes.values()):
            swept = {k: v for k, v in zip(axes, combo, strict=True) if k not in held}
            name = variant_name(system, swept, preset)
            params = {k: base[k] if k in held else swept[k] for k in axes}
            points.setdefault(name, Point(name, system, preset, params, {**base, **swept}, held))
    return list(points.values())


def plan_sweep(system: str, grid: list[str] | dict[str, list[str]] | None = None, *,
               retrievers: list[str] | None = None, presets: str | list[str] | None = None, sweep: str | None = None,
               dataset: str = "demo", file: str | Path | None = None, conversations: list[str] | None = None,
               categories: list | None = None, limit: int | None = None, lenient: bool = False) -> dict[str, Any]:
    """What a sweep would run, before anything runs or is written (no store, no model): its points (canonical
    names), its construction points (distinct memories: Variant.memory_name), the conversations and questions
    selected, and the work as counts: memories to build at most (construction points x conversations; a
    memory already stored is reused) and answers to produce (points x questions). ConfigError as run_sweep."""
    texts, _ = paper_grid(system, sweep, grid)
    points = sweep_points(system, parse_grid(system, texts), retrievers, preset_names(system, presets))
    convs, *_ = load_conversations(dataset, file, lenient=lenient)
    convs = [c for c in convs if not conversations or c.id in conversations]
    questions = sum(len(select_questions(c, categories, limit)) for c in convs)
    memories = len({parse_variant(p.name).memory_name for p in points})
    return {"system": system, "points": [p.name for p in points], "points_total": len(points),
            "construction_points": memories, "conversations": len(convs), "questions": questions,
            "memory_builds_at_most": memories * len(convs), "answers": len(points) * questions}


def plan_text(plan: dict[str, Any]) -> str:
    """One line: the point count and the estimate of the work, in counts."""
    return (f"sweep plan: {plan['points_total']} point(s) of {plan['system']} ({plan['construction_points']} "
            f"construction point(s)) x {plan['conversations']} conversation(s), {plan['questions']} question(s) "
            f"each point: estimate {plan['answers']} answer(s) to produce and at most "
            f"{plan['memory_builds_at_most']} memory build(s) (memories already stored are reused; each point's "
            "rows are stored under its own run, so a stopped sweep resumes)")


def _by_memory(points: list[Point], space: Callable[[Point], str]) -> list[tuple[str, list[Point]]]:
    """Points grouped by memory space, groups in order of first appearance."""
    groups: dict[str, list[Point]] = {}
    for p in points:
        groups.setdefault(space(p), []).append(p)
    return list(groups.items())


def run_sweep(settings: Settings, system: str, grid: list[str] | dict[str, list[str]] | None = None, *,
              retrievers: list[str] | None = None, presets: str | list[str] | None = None, sweep: str | None = None,
              dataset: str = "demo",
              file: str | Path | None = None, conversations: list[str] | None = None, categories: list | None = None,
              limit: int | None = None, judge: bool | int = True, workers: int | str = "auto", engine: str = "local",
              ray_address: str | None = None, out: str | Path | None = None, progress: PointCb | None = None,
              on_question: Callable[[int, int, dict], None] | None = None,
              should_stop: Callable[[], bool] | None = None, workbench: Any = None,
              lenient: bool = False) -> dict[str, Any]:
    """Run (or resume) a sweep and return its results (also written to `out` + .csv): the points of `grid`
    (and of the paper's registered sweep `sweep`) for the full system and each preset; per point its variant
    name, swept values, memory space, run id and the system's summary (metrics with n and intervals,
    mechanism statistics, tokens). `progress(i, n, info)` is called before and after each point; `on_question`
    is run_eval's progress of the point being run; `should_stop` ends after the current question (rerun to go on);
    `lenient` loads a dataset file with missing sessions, empty turns or dangling evidence with a warning, as run_eval."""
    t0, created = time.perf_counter(), time.time()
    texts, paper = paper_grid(system, sweep, grid)
    typed = parse_grid(system, texts)
    points = sweep_points(system, typed, retrievers, preset_names(system, presets))
    stop = should_stop or (lambda: False)
    wb = workbench or Workbench(settings)
    convs, *_ = load_conversations(dataset, file, lenient=lenient)
    convs = [c for c in convs if not conversations or c.id in conversations]
    spaces = {p.name: wb.runtime.space(system, _config(p)) for p in points}
    groups = _by_memory(points, lambda p: spaces[p.name])
    started = False
    if engine == "ray":  # one Ray for every point (run_ray joins it instead of starting its own)

        cpus = parse_workers(workers)  # "auto": Ray's own default, all cores
        started = connect(ray_address, cpus if isinstance(cpus, int) and cpus > 1 else None)
    out_points: list[dict] = []
    built: list[dict] = []
    last: dict[str, Any] = {}
    try:
        for space, group in groups:
            for p in group:
                if stop():
                    break
                i = len(out_points)
                missing = [c.id for c in convs if not wb.is_ingested(system, c, **p.settings)]
                if progress is not None:
                    progress(i, len(points), {"phase": "point", "point": p.name, "memory": space,
                                              "builds": missing})
                # the point runs under its own variant name: its run record, rows and ledger say which
                # configuration answered, and its construction cost is that of the memory it answered from
                res = run_eval(settings, dataset, file, [p.name], conversations=conversations, categories=categories,
                               limit=limit, workers=workers, retriever=p.settings.get("retriever", "dense"),
                               judge=judge, workbench=wb, engine=engine,
                               ray_address=ray_address, progress=on_question, should_stop=stop, lenient=lenient)
                done = [c for c in missing if wb.is_ingested(system, next(x for x in convs if x.id == c),
                                                             **p.settings)]
                built += [{"point": p.name, "memory": space, "conv_id": c} for c in done]
                out_points.append(_point_result(p, space, res))
                last = res
                if progress is not None:
                    progress(i + 1, len(points), {"phase": "done", "point": p.name, "complete": res["complete"]})
    finally:
        if started:
            import ray

            ray.shutdown()
    results = _assemble(system, typed, retrievers, points, out_points, groups, last, convs)
    results.update(paper_sweep=paper, memory_built=len(built), memory_builds=built, created=created,
                   wall_seconds=round(time.perf_counter() - t0, 3))
    if out:
        write_sweep(results, out)
    return results


def _config(p: Point) -> Any:
    return make_config(p.system, **p.settings)


def _point_result(p: Point, space: str, res: dict) -> dict[str, Any]:
    summary = next(iter(res["systems"].values()), {})  # one system per run (keyed by system or variant name)
    return {"name": p.name, "system": p.system, "preset": p.preset, "params": p.params, "held": list(p.held),
            "settings": p.settings,
            "memory_space": space, "run_id": res["run_id"], "complete": res["complete"],
            "questions_done": res["questions_done"], "questions_total": res["questions_total"],
            "n": (summary.get("overall") or {}).get("n", 0), "summary": summary, "wall_seconds": res["wall_seconds"],
            "errors": res.get("errors", [])[:10]}


def _assemble(system: str, grid: dict, retrievers: list[str] | None, points: list[Point],
              done: list[dict], groups: list, last: dict, convs: list) -> dict[str, Any]:
    ids = [d["run_id"] for d in done]
    sources = {p.preset: get_preset(system, p.preset).source for p in points if p.preset}
    return {
        "kind": KIND, "system": system,
        "sweep_id": "sweep-" + hashlib.sha256(json.dumps([p.name for p in points] + ids).encode()).hexdigest()[:12],
        "grid": {k: list(v) for k, v in grid.items()}, "retrievers": list(retrievers or []),
        "presets": sorted(sources), "preset_sources": sources, "points_total": len(points),
        "points_done": sum(1 for d in done if d["complete"]),
        "complete": len(done) == len(points) and all(d["complete"] for d in done),
        "construction_points": len(groups), "conversations": [c.id for c in convs],
        **{k: last.get(k) for k in ("dataset", "categories", "provider", "model", "engine", "embedder", "judge",
                                    "metrics", "limit")},
        "points": done,
    }
