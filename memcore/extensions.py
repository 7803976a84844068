"""Every extension point of memcore in one place: what it adds, the function that registers it (with its
signature), how an installed package provides it, and an example (as simonw/llm's hookspecs.py lists its hooks).

All eight kinds live in the one registry (memcore.registry), so they share one set of rules:
- a name is registered once: another object under a taken name raises `memcore.registry.NameTaken` (a
  ValueError) naming both owners, the module or the plugin and its package that registered each; registering
  the same object again is a no-op. A plugin never replaces a built-in (a view included): to replace an entry,
  call its `unregister_*` first.
- every kind has an `unregister_*` that removes the entry and returns it (None when there was none);
- lists load lazily: memcore's own entries first, then installed packages' entry points (`memcore.systems`,
  `memcore.retrievers`, `memcore.views`, `memcore.metrics`), once per process. A plugin that fails to load is
  skipped with a `PluginWarning` naming it and its error (`memcore.plugins.plugin_errors()`; the app's home
  page lists them) and the rest of memcore works. `MEMCORE_PLUGINS=0` runs without installed plugins.
- roles, reader families, presets and sweeps have no entry-point group: they register when the module that
  defines them is imported (a system's package imports its `roles`, `reader` and `presets`).

This module only describes; it imports nothing from memcore, and tests/test_registry.py checks that every kind
in the registry is listed here and that each signature below is the function's own.
The example plugin (examples/memcore-example-plugin) uses every point.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ExtensionPoint:
    """One kind of extension: `kind` (its name in memcore.registry), what it adds, the registering function
    (`register`, "module:function") and its `signature`, the `unregister` function, the functions that read
    it (`read`), the entry-point `group` an installed package declares it under ("" when it registers on
    import), and an `example`."""

    kind: str
    adds: str
    register: str
    signature: str
    unregister: str
    read: tuple[str, ...]
    group: str
    example: str


EXTENSION_POINTS: tuple[ExtensionPoint, ...] = (
    ExtensionPoint(
        kind="system",
        adds="a memory system: a BaseSystem subclass with `name`, `title`, `paper`, `rank`, `config_class`, "
             "`kinds`, `on_turn`, `retrieve` (memcore.systems.protocol; docs/architecture.md, the checklist)",
        register="memcore.systems:register_system",
        signature="(cls: 'type[BaseSystem]') -> 'type[BaseSystem]'",
        unregister="memcore.systems:unregister_system",
        read=("memcore.systems:load_all", "memcore.systems:get_system", "memcore.systems:builtin_systems"),
        group="memcore.systems",
        example='''
from memcore.systems import register_system
from memcore.systems.naive_rag import NaiveRAGSystem

@register_system
class RecentTurns(NaiveRAGSystem):
    name, title, rank = "recent_turns", "Recent turns", 90

# or, from an installed package's pyproject.toml:
# [project.entry-points."memcore.systems"]
# recent_k = "memcore_example.system:RecentKSystem"
''',
    ),
    ExtensionPoint(
        kind="retriever",
        adds="a search over the store: Retriever(name, search(scope, query, vector, k) -> [(row, score)], title); "
             "`reranking(name, base, rerank, pool)` wraps another one",
        register="memcore.retrievers:register_retriever",
        signature="(r: 'Retriever') -> 'Retriever'",
        unregister="memcore.retrievers:unregister_retriever",
        read=("memcore.retrievers:retriever_names", "memcore.retrievers:get_retriever"),
        group="memcore.retrievers",
        example='''
from memcore.retrievers import register_retriever, reranking

def by_length(query, rows):
    return sorted(rows, key=lambda rs: len(rs[0]["text"]))

register_retriever(reranking("hybrid+short", base="hybrid", rerank=by_length, pool=50))
# [project.entry-points."memcore.retrievers"]  "dense+overlap" = "memcore_example.retriever:OVERLAP"
''',
    ),
    ExtensionPoint(
        kind="view",
        adds="how a system looks on every page and in the export: SystemView(name, color, rank, structure, "
             "growth, growth_rank, picks, pick_when_built); a system without one gets the default view",
        register="memcore.viz.views:register_view",
        signature="(view: 'SystemView') -> 'SystemView'",
        unregister="memcore.viz.views:unregister_view",
        read=("memcore.viz.views:get_view", "memcore.viz.views:load_views", "memcore.viz.views:view_order"),
        group="memcore.views",
        example='''
from memcore.viz.views import ASK, SystemView, register_view

register_view(SystemView("recent_turns", color="#117733", rank=90, picks=frozenset({ASK})))
# [project.entry-points."memcore.views"]  recent_k = "memcore_example.view:VIEW"
''',
    ),
    ExtensionPoint(
        kind="metric",
        adds="a per-question score read by rows, aggregates, intervals, the CSV, reports, comparisons and the "
             "Benchmark page: Metric(name, label, compute(MetricInput) -> value, bounds, higher_better, ...)",
        register="memcore.eval.metric_registry:register_metric",
        signature="(metric: 'Metric') -> 'Metric'",
        unregister="memcore.eval.metric_registry:unregister_metric",
        read=("memcore.eval.metric_registry:metrics", "memcore.eval.metric_registry:get_metric"),
        group="memcore.metrics",
        example='''
from memcore.eval.metric_registry import Metric, register_metric

register_metric(Metric("answer_words", "answer words", compute=lambda m: len(m.prediction.split()),
                       bounds=None, higher_better=False))
# [project.entry-points."memcore.metrics"]  words = "my_metrics:WORDS"
''',
    ),
    ExtensionPoint(
        kind="role",
        adds="one kind of LLM call: Role(name, system, user, output, offline, fallback, temperature, ...): the "
             "prompt, its pydantic output and the offline engine's rule",
        register="memcore.llm.roles:register",
        signature="(role: 'Role') -> 'Role'",
        unregister="memcore.llm.roles:unregister",
        read=("memcore.llm.roles:get_role", "memcore.llm.roles:load_all"),
        group="",
        example='''
from memcore.llm.roles import Role, TextOutput, register

SUMMARY = register(Role("recent_turns_summary", system="Summarise.", user="{turns}", output=TextOutput,
                        offline=lambda inputs: TextOutput(text=inputs["turns"][:200]), json_output=False))
''',
    ),
    ExtensionPoint(
        kind="reader family",
        adds="a family of reader (answer) prompts and how it picks one per source and question category: "
             "ReaderFamily(name, pick(source, category) -> Role, uses_category, temperatures, source)",
        register="memcore.llm.roles.readers:register_family",
        signature="(family: 'ReaderFamily') -> 'ReaderFamily'",
        unregister="memcore.llm.roles.readers:unregister_family",
        read=("memcore.llm.roles.readers:family_names", "memcore.llm.roles.readers:get_family"),
        group="",
        example='''
from memcore.llm.roles.readers import ReaderFamily, reader_role, register_family

PLAIN = reader_role("answer_recent_turns", "Answer briefly.", "{context}\\nQ: {question}\\nA:", 0.0, "a plugin")
register_family(ReaderFamily("recent_turns", pick=lambda source, category: PLAIN, source="the plugin's prompt"))
''',
    ),
    ExtensionPoint(
        kind="preset",
        adds="a named variant of a system (a paper's ablation), `system:name`, usable wherever a system name is",
        register="memcore.systems.variants:register_preset",
        signature="(system: 'str', name: 'str', overrides: 'Mapping[str, Any]', source: 'str', "
                  "description: 'str') -> 'Preset'",
        unregister="memcore.systems.variants:unregister_preset",
        read=("memcore.systems.variants:presets", "memcore.systems.variants:get_preset"),
        group="",
        example='''
from memcore.systems.variants import register_preset

register_preset("recent_turns", "top-3", {"k": 3}, source="the plugin's README", description="three turns only")
''',
    ),
    ExtensionPoint(
        kind="sweep",
        adds="a named grid of a system's field values (a paper's hyperparameter analysis), run by `memcore sweep`",
        register="memcore.systems.variants:register_sweep",
        signature="(system: 'str', name: 'str', grid: 'Mapping[str, list[Any]]', source: 'str', "
                  "description: 'str', paired: 'bool' = False) -> 'Sweep'",
        unregister="memcore.systems.variants:unregister_sweep",
        read=("memcore.systems.variants:sweeps", "memcore.systems.variants:get_sweep"),
        group="",
        example='''
from memcore.systems.variants import register_sweep

register_sweep("recent_turns", "k", {"k": [2, 4, 8]}, source="the plugin's README", description="turns read")
''',
    ),
)


def extension_point(kind: str) -> ExtensionPoint:
    """The extension point of one kind (KeyError naming the kinds when there is none)."""
    for point in EXTENSION_POINTS:
        if point.kind == kind:
            return point
    raise KeyError(f"no extension point {kind!r}; kinds: {', '.join(p.kind for p in EXTENSION_POINTS)}")
