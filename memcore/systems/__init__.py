"""The registry of memory systems: name -> class. Each module registers itself."""

from __future__ import annotations

import importlib
import pkgutil

from memcore.systems.base import BaseSystem, MemorySystem, Runtime, SystemConfig

SYSTEMS: dict[str, type[BaseSystem]] = {}
ORDER = ("full_context", "naive_rag", "naive_rag_session", "com", "recmem", "memcot", "xmemory", "memweaver")
_INFRA = {"base", "memory"}
_loaded = False


def register_system(cls: type[BaseSystem]) -> type[BaseSystem]:
    """Class decorator: add a system to the registry under `cls.name`."""
    if cls.name in SYSTEMS and SYSTEMS[cls.name] is not cls:
        raise ValueError(f"memory system {cls.name!r} registered twice")
    SYSTEMS[cls.name] = cls
    return cls


def load_all() -> dict[str, type[BaseSystem]]:
    """Import every system module so that all systems are registered; ordered for display."""
    global _loaded
    if not _loaded:
        for mod in pkgutil.iter_modules(__path__):
            if mod.name not in _INFRA and not mod.name.startswith("_"):
                importlib.import_module(f"{__name__}.{mod.name}")
        _loaded = True
    rank = {n: i for i, n in enumerate(ORDER)}
    return dict(sorted(SYSTEMS.items(), key=lambda kv: (rank.get(kv[0], 99), kv[0])))


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


__all__ = ["SYSTEMS", "BaseSystem", "MemorySystem", "Runtime", "SystemConfig", "get_system", "load_all",
           "make_config", "register_system"]
