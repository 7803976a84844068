"""The view registry: each system's visual parts declared once, used by every page and the export.

A `SystemView` says how a memory system looks everywhere: its colour, its place in system lists,
the structure of one retrieval (drawn on Ask and written by the export: the same blocks), its
growth view on Replay, and on which pages it starts selected. A system's view lives in its own package
(memcore/systems/<name>/view.py registers it; the registry imports that module by name: "system
views" in tests/test_import_graph.py), the baselines' in memcore/viz/baselines.py, or it comes from
outside memcore:

    from memcore.viz.views import SystemView, register_view
    register_view(SystemView("my_system", color="#117733", rank=55, structure=my_structure))

An installed package declares it under the `memcore.views` entry-point group instead (a SystemView,
or a module that registers views; memcore.plugins): plugins' views load after the built-in ones.

A system that registers none gets `default_view(name)`: a stable fallback colour, listed after
the registered ones, its structure shown as JSON, no growth view. Pure data -> figure functions,
no Streamlit: ui/render.py draws the blocks, memcore.viz.export writes them.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memcore.plugins import VIEWS_GROUP, LoadOnce, is_module, load_plugins
from memcore.systems import builtin_systems, get_system
from memcore.systems.variants import system_of
from memcore.viz.parts import Block, Part, Text
from memcore.viz.theme import fallback_color

if TYPE_CHECKING:
    from memcore.types import Trace
    from memcore.viz.hierarchy import HNode
    from memcore.viz.replay import ReplayData

# Pages whose system picker a view can start selected on (SystemView.picks).
ASK, COMPARE, REPLAY, ANNOTATE, BENCHMARK = "ask", "compare", "replay", "annotate", "benchmark"
PAGES = (ASK, COMPARE, REPLAY, ANNOTATE, BENCHMARK)
DEFAULT_RANK = 1000

StructureFn = Callable[["Trace", Mapping[str, str]], list[Block]]
ItemsAt = Callable[[str, int], list[Any]]  # (kind, step) -> the items of that kind alive at that step
GrowthFn = Callable[["ReplayData", int, ItemsAt], list[Block]]
LevelsFn = Callable[[ItemsAt, int], list["HNode"]]  # (items_at, step) -> the memory as a hierarchy (viz.hierarchy)


def generic_structure(trace: Trace, texts: Mapping[str, str]) -> list[Block]:
    """The structure of a system without a view of its own: its trace's structure as JSON."""
    if trace.structure:
        return [Part("Structure", dict(trace.structure))]
    return [Part("Structure", Text("This system reports no extra structure."))]


@dataclass(frozen=True)
class SystemView:
    """How one memory system looks on every page and in the export.

    - `color`: its colour in every chart ("" = a stable fallback colour).
    - `rank`: its place in system lists (lower first, ties by name).
    - `structure(trace, texts)`: one retrieval's structure as blocks; `texts` maps turn ids to
      "Speaker: text". Ask draws these blocks and the answer export writes the same ones.
    - `growth(replay_data, step, items_at)`: its memory at one Replay step as blocks, or None
      (Replay's Growth tab then shows only the generic memory table). `items_at(kind, step)`
      reads the items alive at a step.
    - `growth_rank`: which growth view Replay opens first (lowest among the systems shown).
    - `picks`: pages whose system picker starts with it selected (ASK, COMPARE, REPLAY,
      ANNOTATE, BENCHMARK). COMPARE is the fallback when fewer than two memories are built.
    - `pick_when_built`: Compare preselects it once its memory is built (when two or more are).
    - `levels(items_at, step)`: its memory at a step as a hierarchy (memcore.viz.hierarchy.HNode, top level
      first), or None: Replay's Growth tab and Explore then draw a navigable drill-down of it.
    """

    name: str
    color: str = ""
    rank: int = DEFAULT_RANK
    structure: StructureFn = generic_structure
    growth: GrowthFn | None = None
    growth_rank: int = DEFAULT_RANK
    picks: frozenset[str] = field(default_factory=lambda: frozenset({REPLAY}))
    pick_when_built: bool = True
    levels: LevelsFn | None = None

    def __post_init__(self) -> None:
        if not self.name:
            raise ValueError("a SystemView needs the system's registry name")
        object.__setattr__(self, "picks", frozenset(self.picks))
        unknown = self.picks - set(PAGES)
        if unknown:
            raise ValueError(f"view {self.name!r}: unknown page(s) {sorted(unknown)} in picks; pages: {PAGES}")
        if not self.color:
            object.__setattr__(self, "color", fallback_color(self.name))


VIEWS: dict[str, SystemView] = {}
_DEFAULTS: dict[str, SystemView] = {}
_LOCK = threading.RLock()  # guards VIEWS against a register racing a read
_once = LoadOnce()
BASELINE_VIEWS = "memcore.viz.baselines"  # the views of the baselines (modules, not packages, of memcore.systems)
VIEW_MODULE = "view"  # a built-in system package's view: memcore.systems.<name>.view


def builtin_view_modules() -> list[str]:
    """The view modules of memcore's own systems: `<package>.view` of each built-in system that is a package
    under memcore.systems and has one (found by name; memcore.systems itself never imports them)."""
    out = []
    for name in builtin_systems():
        package = ".".join(get_system(name).__module__.split(".")[:3])  # memcore.systems.<name>
        if hasattr(sys.modules.get(package), "__path__") and importlib.util.find_spec(f"{package}.{VIEW_MODULE}"):
            out.append(f"{package}.{VIEW_MODULE}")
    return list(dict.fromkeys(out))


def load_views() -> dict[str, SystemView]:
    """Register the built-in views once (the baselines', then each built-in system package's view module), then
    the installed plugins' (entry points `memcore.views`; a failing plugin is skipped with a warning); the
    registered views."""
    def load() -> None:
        for module in (BASELINE_VIEWS, *builtin_view_modules()):
            importlib.import_module(module)
        load_plugins(VIEWS_GROUP, _accept)

    _once(load)  # a module being imported registers its view (and may ask for the views so far)
    return dict(VIEWS)


def _accept(obj: object) -> None:
    """Register what a `memcore.views` entry point names: a SystemView, or a module that registered some."""
    if isinstance(obj, SystemView):
        register_view(obj)
    elif not is_module(obj):
        raise TypeError(f"a memcore.views entry point must name a SystemView or a module; got {obj!r}")


def register_view(view: SystemView) -> SystemView:
    """Register a system's view under its name (after the built-in ones: a later one replaces them)."""
    load_views()
    with _LOCK:
        VIEWS[view.name] = view
    return view


def unregister_view(name: str) -> SystemView | None:
    """Remove a registered view (the system falls back to the default view); returns it."""
    load_views()
    with _LOCK:
        return VIEWS.pop(name, None)


def default_view(name: str) -> SystemView:
    """The view of a system that registered none."""
    view = _DEFAULTS.get(name)
    if view is None:
        view = _DEFAULTS.setdefault(name, SystemView(name))
    return view


def get_view(name: str) -> SystemView:
    """The view of a system (a variant, `sys[alpha=0.8]` or `sys:no-x`, gets its system's): its registered one,
    else the default view."""
    load_views()
    return VIEWS.get(name) or VIEWS.get(system_of(name)) or default_view(system_of(name))


def has_view(name: str) -> bool:
    """Whether a system registered a view of its own."""
    return name in load_views()


def system_color(system: str) -> str:
    """The colour of a system, the same in every chart: its view's."""
    return get_view(system).color


def view_order(names: Iterable[str]) -> list[str]:
    """System names in display order (view rank, then name)."""
    return sorted(names, key=lambda n: (get_view(n).rank, n))


def picked(names: Iterable[str], page: str) -> list[str]:
    """The systems (in display order) a page's picker starts with."""
    return [n for n in view_order(names) if page in get_view(n).picks]
