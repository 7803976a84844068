"""The view registry: each system's visual parts declared once, used by every page and the export.

A `SystemView` says how a memory system looks everywhere: its colour, its place in system lists,
the structure of one retrieval (drawn on Ask and written by the export: the same blocks), its
growth view on Replay, and on which pages it starts selected. A system's view lives in its own package
(memcore/systems/<name>/view.py registers it; the registry finds that module by name in the
memcore.systems folder and imports it, as an entry point: no import arrow from viz up to systems), the baselines' in memcore/viz/baselines.py, or it comes from
outside memcore:

    from memcore.viz.views import SystemView, register_view
    register_view(SystemView("my_system", color="#117733", rank=55, structure=my_structure))

An installed package declares it under the `memcore.views` entry-point group instead (a SystemView,
or a module that registers views): plugins' views load after the built-in ones. The table lives in the one
registry (memcore.registry, kind "view"): a view under a taken name is refused, naming both owners, so a
plugin cannot replace a built-in system's view (unregister_view first, deliberately, to replace one).

A system that registers none gets `default_view(name)`: a stable fallback colour, listed after
the registered ones, its structure shown as JSON, no growth view. Pure data -> figure functions,
no Streamlit: ui/render.py draws the blocks, memcore.viz.export writes them.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memcore import registry
from memcore.registry import VIEWS_GROUP, is_module
from memcore.types import system_of
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


KIND = "view"
_DEFAULTS: dict[str, SystemView] = {}
BASELINE_VIEWS = "memcore.viz.baselines"  # the views of the baselines (modules, not packages, of memcore.systems)
SYSTEMS_PACKAGE = "memcore.systems"  # memcore's own systems: one package each under this folder
VIEW_MODULE = "view"  # a built-in system package's view: memcore.systems.<name>.view


def builtin_view_modules() -> list[str]:
    """The view modules of memcore's own systems, by name: `memcore.systems.<name>.view` for each package in the
    memcore.systems folder that has one, in name order. Found in the folder without importing memcore.systems
    (viz sits below systems: the registry imports these by name, as it does plugins' entry points)."""
    spec = importlib.util.find_spec(SYSTEMS_PACKAGE)  # imports `memcore` only, not memcore.systems
    locations = list(spec.submodule_search_locations or []) if spec else []
    out = []
    for pkg in sorted(pkgutil.iter_modules(locations), key=lambda m: m.name):
        if pkg.ispkg and any(m.name == VIEW_MODULE for m in pkgutil.iter_modules(
                [str(Path(loc) / pkg.name) for loc in locations])):
            out.append(f"{SYSTEMS_PACKAGE}.{pkg.name}.{VIEW_MODULE}")
    return out


def _import_builtin_views() -> None:
    for module in (BASELINE_VIEWS, *builtin_view_modules()):
        importlib.import_module(module)


def _accept(obj: object) -> None:
    """Register what a `memcore.views` entry point names: a SystemView, or a module that registered some."""
    if isinstance(obj, SystemView):
        register_view(obj)
    elif not is_module(obj):
        raise TypeError(f"a memcore.views entry point must name a SystemView or a module; got {obj!r}")


registry.define(KIND, "view", load=_import_builtin_views, group=VIEWS_GROUP, accept=_accept)
VIEWS = registry.Table(KIND)  # system name -> SystemView (a live view of the registry)


def load_views() -> dict[str, SystemView]:
    """Register the built-in views once (the baselines', then each built-in system package's view module), then
    the installed plugins' (entry points `memcore.views`; a failing plugin is skipped with a warning); the
    registered views. A module being imported that asks for the views gets those registered so far."""
    return {e.key: e.obj for e in registry.entries(KIND)}


def register_view(view: SystemView) -> SystemView:
    """Register a system's view under its name. Another view under a taken name (a plugin's for a built-in
    system) raises registry.NameTaken naming both owners: unregister_view first to replace one. The built-in
    views are registered first (a view registered early cannot take a built-in system's name)."""
    registry.ensure(KIND, plugins=False)
    return registry.register(KIND, view.name, view, skip=(__name__,))


def unregister_view(name: str) -> SystemView | None:
    """Remove a registered view (the system falls back to the default view); returns it."""
    return registry.unregister(KIND, name)


def default_view(name: str) -> SystemView:
    """The view of a system that registered none."""
    view = _DEFAULTS.get(name)
    if view is None:
        view = _DEFAULTS.setdefault(name, SystemView(name))
    return view


def get_view(name: str) -> SystemView:
    """The view of a system (a variant, `sys[alpha=0.8]` or `sys:no-x`, gets its system's): its registered one,
    else the default view."""
    return (registry.get(KIND, name) or registry.get(KIND, system_of(name), load=False)
            or default_view(system_of(name)))


def has_view(name: str) -> bool:
    """Whether a system registered a view of its own."""
    return name in load_views()


def system_color(system: str) -> str:
    """The colour of a system, the same in every chart: its view's."""
    return get_view(system).color


SHADES = (0.0, -0.4, 0.45, -0.65, 0.7, -0.2, 0.25)  # a system's colour, then darker / lighter shades of it
SYMBOLS = ("circle", "diamond", "square", "triangle-up", "cross", "star", "hexagon")  # one per shade


def _shade(color: str, t: float) -> str:
    """`color` (#RRGGBB) mixed with black (t < 0) or white (t > 0) by |t|; another colour form is returned as is."""
    if len(color) != 7 or not color.startswith("#"):
        return color
    rgb = [int(color[i:i + 2], 16) for i in (1, 3, 5)]
    end = 255 if t > 0 else 0
    return "#" + "".join(f"{round(c + (end - c) * abs(t)):02X}" for c in rgb)


def series_looks(names: Iterable[str]) -> dict[str, tuple[str, str]]:
    """Each series' (colour, marker symbol) in one chart: a system's own colour (system_color, as in every chart),
    and for each further variant of the same system in `names` (`sys[alpha=0.3]` beside `sys`) a darker or lighter
    shade of it with its own marker, so no two series look alike while a system's variants stay its family. A plain
    system name keeps the system's colour itself; a shade another series already took is skipped."""
    names = list(dict.fromkeys(names))
    taken: set[str] = set()
    out: dict[str, tuple[str, str]] = {}
    for name in sorted(names, key=lambda n: (system_of(n) != n, names.index(n))):  # plain names first
        base = system_color(name)
        shades = [(i, _shade(base, t) if t else base) for i, t in enumerate(SHADES)]
        # every shade taken (or a colour that cannot be shaded): the marker alone tells it apart
        i, color = next(((i, c) for i, c in shades if c.upper() not in taken),
                        (sum(1 for n in out if system_of(n) == system_of(name)), base))
        taken.add(color.upper())
        out[name] = (color, SYMBOLS[i % len(SYMBOLS)])
    return {n: out[n] for n in names}


def view_order(names: Iterable[str]) -> list[str]:
    """System names in display order (view rank, then name)."""
    return sorted(names, key=lambda n: (get_view(n).rank, n))


def picked(names: Iterable[str], page: str) -> list[str]:
    """The systems (in display order) a page's picker starts with."""
    return [n for n in view_order(names) if page in get_view(n).picks]
