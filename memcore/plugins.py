"""Plugins from outside memcore: systems, retrievers and views that an installed package registers
through Python entry points, so `pip install my-memory` adds a system to the CLI, the app and the
benchmark without editing memcore.

A plugin's pyproject.toml names, per group, an object or a module:

    [project.entry-points."memcore.systems"]
    recent_k = "memcore_example.system:RecentKSystem"     # a BaseSystem subclass (or a module that
    [project.entry-points."memcore.retrievers"]           # registers its systems when imported)
    overlap = "memcore_example.retriever:OVERLAP"          # a Retriever (or a module)
    [project.entry-points."memcore.views"]
    recent_k = "memcore_example.view:VIEW"                 # a SystemView (or a module)
    [project.entry-points."memcore.metrics"]
    words = "my_metrics:WORDS"                             # a Metric (or a module; memcore.eval.metric_registry)

Each registry loads its group once, after the built-ins (memcore.systems.load_all, the retriever
registry, memcore.viz.views.load_views, memcore.eval.metric_registry). A plugin that fails to import
or to register (an import error, a name already taken, an object of the wrong type) is skipped: a `PluginWarning` names the
plugin, its package and its error, `plugin_errors()` keeps it for the app and the CLI, and every
other plugin still loads.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from types import ModuleType
from typing import Any

SYSTEMS_GROUP = "memcore.systems"
RETRIEVERS_GROUP = "memcore.retrievers"
VIEWS_GROUP = "memcore.views"
METRICS_GROUP = "memcore.metrics"
GROUPS = (SYSTEMS_GROUP, RETRIEVERS_GROUP, VIEWS_GROUP, METRICS_GROUP)


class PluginWarning(UserWarning):
    """A plugin could not be loaded (it is skipped; the rest of memcore works)."""


@dataclass(frozen=True)
class PluginError:
    """One plugin that failed to load: its entry point, its package and the error."""

    group: str
    name: str
    target: str  # the entry point's value, "module:attr"
    package: str  # the distribution that declares it ("" when unknown)
    error: str  # "ExceptionType: message"

    def message(self) -> str:
        """One line naming the plugin, where it comes from and why it was skipped."""
        pkg = f" from package {self.package!r}" if self.package else ""
        return (f"memcore plugin {self.name!r} ({self.group} = {self.target}){pkg} was not loaded: {self.error}. "
                f"The other systems, retrievers and views work; fix or uninstall the plugin.")


_ERRORS: list[PluginError] = []
_LOCK = threading.Lock()


def _package(ep: EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    return f"{dist.name} {dist.version}" if dist is not None else ""


def load_plugins(group: str, accept: Callable[[Any], None]) -> list[str]:
    """Load every entry point of `group` (sorted by name) and pass the loaded object to `accept`, which
    registers it. A plugin whose import or `accept` raises is skipped with a PluginWarning naming it and
    its error (kept in `plugin_errors()`); the others load. Returns the names of the plugins loaded."""
    loaded = []
    for ep in sorted(entry_points(group=group), key=lambda e: (e.name, e.value)):
        try:
            accept(ep.load())
        except Exception as e:  # noqa: BLE001 - any failure of a third-party plugin must not break memcore
            err = PluginError(group, ep.name, ep.value, _package(ep), f"{type(e).__name__}: {e}")
            with _LOCK:
                _ERRORS.append(err)
            warnings.warn(err.message(), PluginWarning, stacklevel=2)
        else:
            loaded.append(ep.name)
    return loaded


def plugin_errors() -> list[PluginError]:
    """The plugins that failed to load in this process so far, in the order they failed."""
    with _LOCK:
        return list(_ERRORS)


def is_module(obj: Any) -> bool:
    """Whether an entry point named a module (which registered its objects when imported)."""
    return isinstance(obj, ModuleType)


class LoadOnce:
    """Run a registry's loading once per process, thread-safe and re-entrant: while it runs (a plugin being
    imported asks the registry), a nested call returns at once instead of loading twice or deadlocking."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self.loaded = False
        self._loading = False

    def __call__(self, load: Callable[[], None]) -> None:
        """Call `load()` unless it already ran to the end or is running now (then return at once)."""
        if self.loaded:
            return
        with self._lock:
            if self.loaded or self._loading:
                return
            self._loading = True
            try:
                load()
                self.loaded = True
            finally:
                self._loading = False

