"""memcore's one registry: every kind of extension (memory system, retriever, view, metric, LLM role, reader
family, preset, sweep) is kept here, under one lock, with one rule for names and one lazy loader.

memcore/extensions.py lists every extension point with its signature and an example; the modules that own a
kind keep their public functions (`register_system`, `register_retriever`, `register`, `register_family`,
`register_preset`, `register_sweep`, `register_metric`, `register_view`, `get_*`, `*_names`, ...) as thin
wrappers over `define`, `register`, `unregister`, `get` and `entries`.

The rules, the same for every kind:
- **One name, one owner.** A name is registered once. Registering the same object again (or, for presets and
  sweeps, an equal one) is a no-op; another object under a taken name raises `NameTaken`, which names both
  owners (the module, or the plugin and its package, that registered each). Nothing is replaced silently, a
  built-in by a plugin least of all: to replace an entry, `unregister` it first.
- **One `unregister(kind, name)`**: removes the entry and returns it (None when there was none).
- **One lazy loader.** Reading a kind (`entries`, `get`, `names`) first runs, once per process, the kind's
  built-in loader (`define(..., load=)`: the modules that register memcore's own entries), then, when
  plugins are enabled, its entry-point group (`define(..., group=, accept=)`): every installed package's
  entry point, sorted by name, each object handed to `accept`. A plugin that fails to import or to register
  is skipped with a `PluginWarning` naming it, its package and its error (`plugin_errors()` keeps it); the
  others load. A nested read while a loader runs (a plugin being imported asks for the systems so far)
  returns at once with what is registered so far.
- **Plugins can be switched off**: `MEMCORE_PLUGINS=0` (also "false", "no", "off") leaves installed plugins
  unloaded, and hides the entries of installed plugin packages already loaded in this process (an entry
  belongs to the package of the module that registered it). memcore's tests run that way unless a test opts
  in (tests/conftest.py: the `plugins` fixture or the `plugins` marker), so lists in tests come from the
  registry, not from names pinned by hand.
- **One lock** (re-entrant) guards every table and every loader: registering, reading and loading are
  thread-safe.
"""

from __future__ import annotations

import os
import sys
import threading
import warnings
from collections.abc import Callable, Hashable, Iterator, MutableMapping
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from types import ModuleType
from typing import Any

PLUGINS_ENV = "MEMCORE_PLUGINS"
_OFF = {"0", "false", "no", "off"}

SYSTEMS_GROUP = "memcore.systems"
RETRIEVERS_GROUP = "memcore.retrievers"
VIEWS_GROUP = "memcore.views"
METRICS_GROUP = "memcore.metrics"
GROUPS = (SYSTEMS_GROUP, RETRIEVERS_GROUP, VIEWS_GROUP, METRICS_GROUP)


class PluginWarning(UserWarning):
    """A plugin could not be loaded (it is skipped; the rest of memcore works)."""


class NameTaken(ValueError):
    """A name already registered under a kind, by another object: the message names both owners."""


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


@dataclass(frozen=True)
class Kind:
    """A kind of extension: `label` names one in messages ("memory system"); `load()` registers memcore's own
    entries (run once, before the first read); `group` is the entry-point group installed packages use, and
    `accept(obj)` registers what one of its entry points names (or raises TypeError); `same(old, new)` says
    when registering `new` under `old`'s name is a no-op (default: the same object)."""

    name: str
    label: str
    load: Callable[[], object] | None = None
    group: str = ""
    accept: Callable[[Any], None] | None = None
    same: Callable[[Any, Any], bool] | None = None


@dataclass(frozen=True)
class Entry:
    """One registered object: its kind, its name (a string, or a tuple such as (system, preset)), and who
    registered it (`owner`, for people; `module`, the module whose package it belongs to)."""

    kind: str
    key: Hashable
    obj: Any
    owner: str
    module: str


_LOCK = threading.RLock()
_KINDS: dict[str, Kind] = {}
_TABLES: dict[str, dict[Hashable, Entry]] = {}
_BUILTINS: dict[str, str] = {}  # kind -> "loading" | "loaded"
_GROUPS_DONE: dict[str, str] = {}  # entry-point group -> "loading" | "loaded"
_ERRORS: list[PluginError] = []
_LOCAL = threading.local()  # .plugin: (owner, module) while an entry point is imported; .forced: while accepted
_plugin_packages: frozenset[str] | None = None


def key_text(key: Hashable) -> str:
    """How messages print a name: "com", or "com:no-apt" for a (system, name) key."""
    return ":".join(map(str, key)) if isinstance(key, tuple) else str(key)


def define(name: str, label: str, *, load: Callable[[], object] | None = None, group: str = "",
           accept: Callable[[Any], None] | None = None, same: Callable[[Any, Any], bool] | None = None) -> Kind:
    """Declare a kind of extension (the module that owns it does, when imported); see `Kind`. Declaring it again
    (a reloaded module) replaces its loaders and keeps its entries."""
    kind = Kind(name, label, load, group, accept, same)
    with _LOCK:
        _KINDS[name] = kind
        _TABLES.setdefault(name, {})
    return kind


def kinds() -> list[Kind]:
    """Every declared kind, in the order they were declared."""
    with _LOCK:
        return list(_KINDS.values())


def _kind(name: str) -> Kind:
    try:
        return _KINDS[name]
    except KeyError:
        raise KeyError(f"no kind of extension {name!r}; kinds: {', '.join(_KINDS)}") from None


_SKIP = (__name__, "_collections_abc", "collections", "contextlib")


def _under(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def _caller(skip: tuple[str, ...]) -> tuple[str, str]:
    """(owner, module) of a registration: an accepted entry point's plugin; else the first calling module outside
    the registry and the kind's own module(s) (a plugin module being imported is named with its entry point)."""
    forced = getattr(_LOCAL, "forced", None)
    if forced:
        return forced
    frame = sys._getframe(2)
    module = ""
    while frame is not None:  # a wrapper's function (register_system) is skipped, its module-level code is not
        module = frame.f_globals.get("__name__", "")
        if not (_under(module, _SKIP) or (_under(module, skip) and frame.f_code.co_name != "<module>")):
            break
        frame = frame.f_back
    plugin = getattr(_LOCAL, "plugin", None)
    if plugin and module.split(".")[0] == plugin[1].split(".")[0]:
        return plugin[0], module
    return module or "?", module


def register(kind: str, key: Hashable, obj: Any, *, owner: str = "", module: str = "",
             skip: tuple[str, ...] = ()) -> Any:
    """Register `obj` under `key` in `kind` and return the registered object. The same object again (or one
    `same` as it) is a no-op returning the first; another under a taken name raises NameTaken naming both
    owners. `owner`/`module` default to the caller: the first module outside this one, skipping functions of the
    modules under `skip` (the kind's wrappers, `register_system`; their module-level code is an owner)."""
    k = _kind(kind)
    if not owner:
        owner, found = _caller(skip)
        module = module or found
    with _LOCK:
        table = _TABLES[kind]
        old = table.get(key)
        if old is not None:
            if old.obj is obj or (k.same is not None and k.same(old.obj, obj)):
                return old.obj
            raise NameTaken(f"{k.label} {key_text(key)!r} is already registered by {old.owner}; {owner} cannot "
                            f"register another under that name (names are unique: unregister the first to "
                            f"replace it, or pick another name)")
        table[key] = Entry(kind, key, obj, owner, module or owner)
    return obj


def unregister(kind: str, key: Hashable) -> Any | None:
    """Remove the entry `key` of `kind`; returns its object (None when there was none)."""
    _kind(kind)
    with _LOCK:
        entry = _TABLES[kind].pop(key, None)
    return None if entry is None else entry.obj


def plugins_enabled() -> bool:
    """Whether installed plugins load and show (environment MEMCORE_PLUGINS, on unless "0"/"false"/"no"/"off")."""
    return os.environ.get(PLUGINS_ENV, "1").strip().lower() not in _OFF


def plugin_packages() -> frozenset[str]:
    """The top-level packages that installed plugins' entry points name, in memcore's groups and every declared
    kind's (read once per process from the installed distributions' metadata; nothing is imported)."""
    global _plugin_packages
    if _plugin_packages is None:
        groups = dict.fromkeys([*GROUPS, *(k.group for k in kinds() if k.group)])
        found = {ep.value.split(":")[0].split(".")[0].strip() for g in groups for ep in entry_points(group=g)}
        _plugin_packages = frozenset(found - {"memcore"})
    return _plugin_packages


def _visible(entry: Entry, enabled: bool | None = None) -> bool:
    """Whether an entry shows: memcore's own always; another package's unless it is an installed plugin's and
    plugins are off (`enabled` None: read the switch only when it matters, reads stay cheap)."""
    if entry.module.startswith("memcore."):
        return True
    enabled = plugins_enabled() if enabled is None else enabled
    return enabled or entry.module.split(".")[0] not in plugin_packages()


def ensure(kind: str, *, plugins: bool = True) -> None:
    """Run the kind's built-in loader once, then (`plugins` and plugins enabled) its entry-point group once."""
    k = _kind(kind)
    if _BUILTINS.get(kind) != "loaded":
        with _LOCK:
            if kind not in _BUILTINS:  # "loading": a nested read during the load gets what is registered so far
                _BUILTINS[kind] = "loading"
                try:
                    if k.load is not None:
                        k.load()
                except BaseException:
                    del _BUILTINS[kind]
                    raise
                _BUILTINS[kind] = "loaded"
    if plugins and k.group and k.accept is not None and _GROUPS_DONE.get(k.group) != "loaded" and plugins_enabled():
        with _LOCK:
            if k.group not in _GROUPS_DONE:
                _GROUPS_DONE[k.group] = "loading"
                try:
                    load_plugins(k.group, k.accept)
                finally:
                    _GROUPS_DONE[k.group] = "loaded"


def entries(kind: str, *, load: bool = True) -> list[Entry]:
    """The entries of `kind` in registration order (after loading it, unless `load` is False); installed
    plugins' entries only when plugins are enabled."""
    if load:
        ensure(kind)
    with _LOCK:
        found = list(_TABLES[kind].values())
    return [e for e in found if _visible(e)]


def get(kind: str, key: Hashable, *, load: bool = True) -> Any | None:
    """The object registered under `key` in `kind`, or None (loads the kind first unless `load` is False)."""
    if load:
        ensure(kind)
    with _LOCK:
        entry = _TABLES[kind].get(key)
    return entry.obj if entry is not None and _visible(entry) else None


def names(kind: str) -> list[Hashable]:
    """The names registered in `kind`, in registration order (after loading it)."""
    return [e.key for e in entries(kind)]


def owner(kind: str, key: Hashable) -> str:
    """Who registered `key` in `kind` ("" when nobody did)."""
    with _LOCK:
        entry = _TABLES[kind].get(key)
    return entry.owner if entry is not None else ""


class Table(MutableMapping):
    """A live mapping view of one kind's visible entries (name -> object), for code that reads a registry as a
    dict (`memcore.systems.SYSTEMS`, `memcore.llm.roles.ROLES`, ...). Reading does not load the kind; setting an
    item registers (a taken name raises NameTaken), deleting one unregisters."""

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def __getitem__(self, key: Hashable) -> Any:
        obj = get(self.kind, key, load=False)
        if obj is None:
            raise KeyError(key)
        return obj

    def __setitem__(self, key: Hashable, value: Any) -> None:
        register(self.kind, key, value)

    def __delitem__(self, key: Hashable) -> None:
        if unregister(self.kind, key) is None:
            raise KeyError(key)

    def __iter__(self) -> Iterator[Hashable]:
        return iter([e.key for e in entries(self.kind, load=False)])

    def __len__(self) -> int:
        return len(entries(self.kind, load=False))

    def __repr__(self) -> str:
        return f"Table({self.kind!r}, {dict(self)!r})"


# ----------------------------------------------------------------------------- entry points (installed plugins)

def _package(ep: EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    return f"{dist.name} {dist.version}" if dist is not None else ""


@contextmanager
def _as(attr: str, value: tuple[str, str]) -> Iterator[None]:
    before = getattr(_LOCAL, attr, None)
    setattr(_LOCAL, attr, value)
    try:
        yield
    finally:
        setattr(_LOCAL, attr, before)


def load_plugins(group: str, accept: Callable[[Any], None]) -> list[str]:
    """Load every entry point of `group` (sorted by name) and pass the loaded object to `accept`, which
    registers it. A plugin whose import or `accept` raises is skipped with a PluginWarning naming it and
    its error (kept in `plugin_errors()`); the others load. Returns the names of the plugins loaded.
    What a plugin registers is owned by "plugin NAME (GROUP = TARGET) from PACKAGE"."""
    loaded = []
    for ep in sorted(entry_points(group=group), key=lambda e: (e.name, e.value)):
        pkg = _package(ep)
        who = (f"plugin {ep.name!r} ({group} = {ep.value})" + (f" from package {pkg!r}" if pkg else ""),
               ep.value.split(":")[0].strip())
        try:
            with _as("plugin", who):
                obj = ep.load()
            with _as("forced", who):
                accept(obj)
        except Exception as e:  # any failure of a third-party plugin must not break memcore
            err = PluginError(group, ep.name, ep.value, pkg, f"{type(e).__name__}: {e}")
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


def reload_plugins(group: str | None = None) -> None:
    """Forget that `group` (every group when None) was loaded, and the installed plugin packages, so that the
    next read loads its entry points again (tests that install a fake entry point; entries stay registered)."""
    global _plugin_packages
    with _LOCK:
        if group is None:
            _GROUPS_DONE.clear()
        else:
            _GROUPS_DONE.pop(group, None)
        _plugin_packages = None
