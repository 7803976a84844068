"""The registry of memory systems: name -> class. Each module registers itself.

The built-in systems are the modules and packages of memcore/systems/; systems from outside come
from installed packages through the `memcore.systems` entry-point group (memcore.registry: the one registry,
which loads them once, after the built-ins, and refuses a taken name naming both owners). Lists
are ordered by each class's `rank` (BaseSystem.rank; built-ins 10..80, plugins 1000 unless they
declare one, also when they subclass a built-in: `rank_of`), ties by name.
"""

from __future__ import annotations

import importlib
import pkgutil

from memcore import registry
from memcore.llm.roles import add_loader
from memcore.llm.roles.readers import set_paper_families
from memcore.registry import SYSTEMS_GROUP, is_module
from memcore.systems.base import BaseSystem, MemorySystem, Runtime, SystemConfig

KIND = "system"
_INFRA = {"base", "memory", "fields", "variants", "protocol", "parts"}


def register_system(cls: type[BaseSystem]) -> type[BaseSystem]:
    """Class decorator: add a system to the registry under `cls.name` (another class under a taken name raises
    registry.NameTaken, naming both owners)."""
    return registry.register(KIND, cls.name, cls, skip=(__name__,))


def unregister_system(name: str) -> type[BaseSystem] | None:
    """Remove a system (tests that register one for a while); returns its class."""
    return registry.unregister(KIND, name)


def _accept(obj: object) -> None:
    """Register what a `memcore.systems` entry point names: a BaseSystem subclass, or a module that
    registered its systems when it was imported."""
    if isinstance(obj, type) and issubclass(obj, BaseSystem) and obj.name:
        register_system(obj)
    elif not is_module(obj):
        raise TypeError(f"a memcore.systems entry point must name a BaseSystem subclass with a name, or a "
                        f"module that registers systems; got {obj!r}")


def _import_builtins() -> None:
    for mod in pkgutil.iter_modules(__path__):
        if mod.name not in _INFRA and not mod.name.startswith("_"):
            importlib.import_module(f"{__name__}.{mod.name}")


registry.define(KIND, "memory system", load=_import_builtins, group=SYSTEMS_GROUP, accept=_accept)
SYSTEMS = registry.Table(KIND)  # name -> class (a live view of the registry)


def load_all() -> dict[str, type[BaseSystem]]:
    """Register every built-in system (the modules of memcore/systems/), then the installed plugins'
    (entry points `memcore.systems`; a failing plugin is skipped with a warning); ordered by rank. A plugin
    being imported that asks for the systems gets those registered so far."""
    found = {e.key: e.obj for e in registry.entries(KIND)}
    return dict(sorted(found.items(), key=lambda kv: (rank_of(kv[1]), kv[0])))


add_loader(load_all)  # a role looked up by name is found in whichever system package registers it


def paper_reader(name: str) -> str:
    """The reader family system `name`'s class declares as its paper's (`reader_family`; "short" for a name
    that is not a registered system)."""
    cls = load_all().get(name)
    return cls.reader_family if cls is not None else "short"


set_paper_families(paper_reader)  # config reader = "paper" finds a system's family through its class


def _builtin(cls: type) -> bool:
    return cls.__module__.startswith(f"{__name__}.")


def rank_of(cls: type[BaseSystem]) -> int:
    """A system's place in lists: its class's `rank`, except that a system from outside memcore that
    only inherits a built-in's rank (a plugin subclassing naive_rag) comes after the built-ins."""
    declared_by = next(k for k in cls.__mro__ if "rank" in vars(k))
    return BaseSystem.rank if _builtin(declared_by) and not _builtin(cls) else cls.rank


def builtin_systems() -> list[str]:
    """The names of memcore's own systems (those defined under memcore.systems), in rank order."""
    return [n for n, cls in load_all().items() if _builtin(cls)]


def get_system(name: str) -> type[BaseSystem]:
    """The system class registered under `name`."""
    systems = load_all()
    if name not in systems:
        raise KeyError(f"unknown memory system {name!r}; available: {', '.join(systems)}")
    return systems[name]


def make_config(name: str, **overrides: object) -> SystemConfig:
    """A system's config at the papers' defaults, with overrides (unknown keys rejected)."""
    cls = get_system(name).config_class
    known = {f for f in cls.__dataclass_fields__}
    bad = set(overrides) - known
    if bad:
        raise ValueError(f"{name} has no setting(s) {sorted(bad)}; settings: {sorted(known)}")
    cfg = cls(**overrides)
    cfg.validate()
    return cfg


__all__ = ["SYSTEMS", "BaseSystem", "MemorySystem", "Runtime", "SystemConfig", "builtin_systems", "get_system",
           "load_all", "make_config", "rank_of", "register_system", "unregister_system"]
