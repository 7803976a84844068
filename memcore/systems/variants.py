"""Variant names: a registered system with config overrides, `com[beta=0.8,max_len=4]`, or a named preset,
`com:no-apt` (a preset may take overrides too: `com:no-apt[K=10]`).

Values are parsed by the field's type (int, float, bool: true/false, str, none for an optional field) and
checked against its spec (memcore.systems.fields); any mistake is a ValueError of one line naming the field,
its type, its paper default and the valid values. Names are canonical: keys sorted, values equal to the
starting point (the preset's value, else the paper default) dropped, floats written by repr
(`com[beta=0.50]` -> `com`). Presets (`register_preset`) are filled by the systems' packages; a paper's
reported sweep is a named grid of field values (`register_sweep`), also filled by the packages; both are kept
by the one registry (memcore.registry, kinds "preset" and "sweep", keyed by (system, name)). This module is pure: it builds names and configs, and runs nothing.
"""

from __future__ import annotations

import difflib
import itertools
import math
import operator
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from memcore import registry
from memcore.systems import get_system, load_all
from memcore.systems.fields import INT_BOUND, FieldSpec, field_specs, format_value
from memcore.systems.protocol import SystemConfig
from memcore.types import system_of as system_of  # the name part of the grammar, public here too

_NAME = re.compile(r"(?P<system>[^\s:\[\],=]+)(?::(?P<preset>[^\s:\[\],=]+))?(?:\[(?P<body>[^\[\]]*)\])?")
_PRESET = re.compile(r"[A-Za-z0-9+][A-Za-z0-9_.+-]*")
_BOOLS = {"true": True, "false": False, "1": True, "0": False, "yes": True, "no": False, "on": True, "off": False}
SYNTAX = "write system, system[field=value,...], system:preset or system:preset[field=value,...]"


@dataclass(frozen=True)
class Preset:
    """A named set of overrides of one system (an ablation), with where it comes from."""

    system: str
    name: str
    overrides: Mapping[str, Any]
    source: str  # the paper's figure or table ("CoM Fig. 3")
    description: str


PRESET, SWEEP = "preset", "sweep"
registry.define(PRESET, "preset", same=operator.eq)  # the same preset again is a no-op
registry.define(SWEEP, "sweep", same=operator.eq)


def _add(kind: str, entry: Preset | Sweep) -> Any:
    """Register a preset or sweep: its name and source checked; the same entry again is a no-op, a
    different one under a taken name a registry.NameTaken (a ValueError) naming both owners."""
    label = f"{kind} {entry.system}:{entry.name}"
    if not _PRESET.fullmatch(entry.name):
        raise ValueError(f"{kind} name {entry.name!r} must match {_PRESET.pattern}")
    if not entry.source.strip():
        raise ValueError(f"{label} needs a source (the paper's figure or table)")
    return registry.register(kind, (entry.system, entry.name), entry, skip=(__name__,))


def _listed(kind: str, system: str | None) -> list[Any]:
    load_all()  # the systems' packages register theirs
    found = (e.obj for e in registry.entries(kind))
    return sorted((e for e in found if system is None or e.system == system), key=lambda e: (e.system, e.name))


def _find(kind: str, system: str, name: str) -> Any:
    have = _listed(kind, system)
    for e in have:
        if e.name == name:
            return e
    raise ValueError(f"{system} has no {kind} {name!r}; {kind}s: {', '.join(e.name for e in have) or '(none)'}")


def register_preset(system: str, name: str, overrides: Mapping[str, Any], source: str, description: str) -> Preset:
    """Add a preset `system:name` (its overrides are checked against the config when a name uses it).
    Registering the same preset again is a no-op; a different one under a taken name is a ValueError."""
    return _add(PRESET, Preset(system, name, MappingProxyType(dict(overrides)), source, description))


def unregister_preset(system: str, name: str) -> None:
    """Remove a preset (tests and plugins that replace one)."""
    registry.unregister(PRESET, (system, name))


def presets(system: str | None = None) -> list[Preset]:
    """The registered presets (of one system), by system then name."""
    return _listed(PRESET, system)


def get_preset(system: str, name: str) -> Preset:
    """The preset `system:name`, or ValueError naming that system's presets."""
    return _find(PRESET, system, name)


@dataclass(frozen=True)
class Sweep:
    """A named grid of one system's field values (a paper's hyperparameter analysis), with its source.
    The points are the product of the grid's lists, in the grid's key order; `paired`: the lists side by side
    instead (one point per position: parameters the paper ties, RecMem's k_sem = 2 k_epi)."""

    system: str
    name: str
    grid: Mapping[str, tuple[Any, ...]]
    source: str  # the paper's figure or table ("CoM Sec. 4.4, Fig. 4")
    description: str
    paired: bool = False

    def points(self) -> list[dict[str, Any]]:
        """Every point of the grid as overrides, the last key varying fastest (paired: position by position)."""
        keys = list(self.grid)
        rows = zip(*self.grid.values(), strict=True) if self.paired else itertools.product(*self.grid.values())
        return [dict(zip(keys, values, strict=True)) for values in rows]

    def variants(self) -> list[str]:
        """The canonical variant name of every point (a value at the paper default is dropped)."""
        return [variant_name(self.system, p) for p in self.points()]


def register_sweep(system: str, name: str, grid: Mapping[str, list[Any]], source: str, description: str,
                   paired: bool = False) -> Sweep:
    """Add a sweep `name` of `system` (its values are checked against the config when its points are parsed;
    `paired`: see Sweep). Registering the same sweep again is a no-op; a different one under a taken name is a
    ValueError."""
    if not grid or any(not list(v) for v in grid.values()):
        raise ValueError(f"sweep {system}:{name} needs at least one field, each with at least one value")
    if paired and len({len(list(v)) for v in grid.values()}) > 1:
        raise ValueError(f"sweep {system}:{name} is paired: every field needs as many values")
    frozen = MappingProxyType({k: tuple(v) for k, v in grid.items()})
    return _add(SWEEP, Sweep(system, name, frozen, source, description, paired))


def unregister_sweep(system: str, name: str) -> None:
    """Remove a sweep (tests and plugins that replace one)."""
    registry.unregister(SWEEP, (system, name))


def sweeps(system: str | None = None) -> list[Sweep]:
    """The registered sweeps (of one system), by system then name."""
    return _listed(SWEEP, system)


def get_sweep(system: str, name: str) -> Sweep:
    """The sweep `name` of `system`, or ValueError naming that system's sweeps."""
    return _find(SWEEP, system, name)


@dataclass(frozen=True)
class Variant:
    """A parsed variant name: the system, its preset ("" for none), the overrides beyond the preset (those
    that differ from where they start), and the canonical name."""

    system: str
    overrides: dict[str, Any] = field(default_factory=dict)
    preset: str = ""
    name: str = ""  # canonical

    @property
    def settings(self) -> dict[str, Any]:
        """Every override in force: the preset's, then the explicit ones."""
        base = dict(get_preset(self.system, self.preset).overrides) if self.preset else {}
        return {**base, **self.overrides}

    def config(self) -> SystemConfig:
        """The system's config with this variant's settings (validated)."""
        return _config(self.system, self.settings, self.name)

    def construction(self) -> dict[str, Any]:
        """The settings that change what ingest builds (a new memory space); the others are query-time."""
        query = {s.name for s in field_specs(get_system(self.system).config_class) if s.query_time}
        return {k: v for k, v in self.settings.items() if k not in query}

    @property
    def memory_name(self) -> str:
        """The canonical name of the memory this variant answers from: the system with its construction
        settings only (`com[beta=0.8]` and `com:no-apt` answer from `com`'s memory); its ingest calls carry it."""
        return variant_name(self.system, self.construction())

    def combined(self, config: Mapping[str, Any] | None = None) -> Variant:
        """This variant with typed `config` values on top (a caller's keyword settings: `wb.ask("com[beta=0.8]",
        conv, q, retriever="hybrid")`), validated, renamed canonically (`com[beta=0.8,retriever=hybrid]`)."""
        if not config:
            return self
        specs = _specs(self.system)
        for key in config:
            if key not in specs:
                raise _unknown(self.name, self.system, key, specs)
        start = dict(get_preset(self.system, self.preset).overrides) if self.preset else {}
        merged = {**self.overrides, **config}
        kept = {k: v for k, v in merged.items() if v != start.get(k, specs[k].default)}
        out = Variant(self.system, dict(sorted(kept.items())), self.preset,
                      variant_name(self.system, merged, self.preset))
        _config(self.system, out.settings, out.name)
        return out


def _config(system: str, settings: Mapping[str, Any], label: str) -> SystemConfig:
    try:
        cfg = get_system(system).config_class(**settings)
        cfg.validate()
    except (TypeError, ValueError) as err:
        raise ValueError(f"{label}: {_one_line(str(err))}") from None
    return cfg


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _bad(label: str, spec: FieldSpec, why: str, raw: object) -> ValueError:
    return ValueError(f"{label}: {spec.name} ({spec.type_name}, paper default {format_value(spec.default)}) "
                      f"{why}, not {raw!r}")


def parse_value(spec: FieldSpec, text: str, label: str = "") -> Any:
    """A field's value from its text in a variant name, by the field's type, checked against its spec."""
    label = label or spec.name
    raw = text.strip()
    if spec.optional and raw.lower() in ("none", "null"):
        value: Any = None
    elif spec.base_type is bool:
        if raw.lower() not in _BOOLS:
            raise _bad(label, spec, "must be true or false", raw)
        value = _BOOLS[raw.lower()]
    elif spec.base_type is int:
        if not re.fullmatch(r"[+-]?\d+", raw) or len(raw.lstrip("+-").lstrip("0")) > len(str(INT_BOUND)) + 1:
            shown = raw if len(raw) <= 40 else f"{raw[:20]}...({len(raw)} characters)"
            raise _bad(label, spec, f"must be a whole number {spec.valid()}", shown)
        value = int(raw)
    elif spec.base_type is float:
        try:
            value = float(raw)
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            raise _bad(label, spec, f"must be a number {spec.valid()}", raw)
    elif spec.base_type is str:
        value = raw
    else:
        raise _bad(label, spec, "cannot be set in a variant name (unsupported type)", raw)
    why = spec.problem(value)
    if why:
        raise _bad(label, spec, why, raw)
    return value


def _specs(system: str) -> dict[str, FieldSpec]:
    return {s.name: s for s in field_specs(get_system(system).config_class)}


def _unknown(label: str, system: str, key: str, specs: Mapping[str, FieldSpec]) -> ValueError:
    near = difflib.get_close_matches(key, list(specs), n=1)
    hint = f" (did you mean {near[0]}?)" if near else ""
    return ValueError(f"{label}: {system} has no field {key!r}{hint}; fields: {', '.join(specs)}")


def variant_name(system: str, overrides: Mapping[str, Any] | None = None, preset: str = "") -> str:
    """The canonical name of `system` (with `preset`) and typed `overrides`: keys sorted, values equal to
    where they start (the preset's value, else the paper default) dropped, values formatted stably."""
    specs = _specs(system)
    start = {n: s.default for n, s in specs.items()}
    if preset:
        start.update(get_preset(system, preset).overrides)
    kept = {k: v for k, v in (overrides or {}).items() if k not in start or v != start[k]}
    head = f"{system}:{preset}" if preset else system
    body = ",".join(f"{k}={format_value(kept[k])}" for k in sorted(kept))
    return f"{head}[{body}]" if body else head


def parse_variant(name: str) -> Variant:
    """A variant name parsed, its values typed and checked, its settings validated as a config; ValueError
    (one line) on any mistake."""
    label = _one_line(name) if isinstance(name, str) else repr(name)
    if len(label) > 80:  # a name with a huge value is named by its start and length, not echoed whole
        label = f"{label[:60]}... ({len(label)} characters)"
    m = _NAME.fullmatch(name.strip()) if isinstance(name, str) else None
    if m is None:
        raise ValueError(f"{label!r} is not a variant name: {SYNTAX}")
    system, preset, body = m["system"], m["preset"] or "", m["body"]
    systems = load_all()
    if system not in systems:
        raise ValueError(f"{label}: unknown memory system {system!r}; available: {', '.join(systems)}")
    specs = _specs(system)
    if preset:
        try:
            p = get_preset(system, preset)
        except ValueError as err:
            raise ValueError(f"{label}: {err}") from None
        for key in p.overrides:
            if key not in specs:
                raise _unknown(f"{label} (preset {system}:{preset})", system, key, specs)
    overrides: dict[str, Any] = {}
    for item in (body.split(",") if body and body.strip() else []):
        key, eq, text = item.partition("=")
        key = key.strip()
        if not eq or not key:
            raise ValueError(f"{label}: {item.strip()!r} is not field=value; {SYNTAX}")
        if key not in specs:
            raise _unknown(label, system, key, specs)
        if key in overrides:
            raise ValueError(f"{label}: {key} is given twice")
        overrides[key] = parse_value(specs[key], text, label)
    canonical_name = variant_name(system, overrides, preset)
    start = dict(get_preset(system, preset).overrides) if preset else {}
    kept = {k: v for k, v in overrides.items() if v != start.get(k, specs[k].default)}
    variant = Variant(system, dict(sorted(kept.items())), preset, canonical_name)
    _config(system, variant.settings, label)  # cross-field rules (each config's validate)
    return variant


def split_names(text: str) -> list[str]:
    """Variant names from a comma-separated list; a comma inside brackets belongs to its name
    (`com,com[beta=0.8,max_len=4],com:no-apt` -> three names). Unbalanced brackets, or no name at all ('', ','):
    ValueError (one line)."""
    names, depth, cur = [], 0, []
    for ch in text:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth < 0:
                raise ValueError(f"{_one_line(text)!r}: a ']' without its '['; {SYNTAX}")
        if ch == "," and depth == 0:
            names.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if depth:
        raise ValueError(f"{_one_line(text)!r}: a '[' without its ']'; {SYNTAX}")
    names.append("".join(cur).strip())
    out = [n for n in names if n]
    if not out:  # '' or ',,' names nothing: an error, never a run or build of nothing
        raise ValueError(f"{_one_line(text)!r} names no system or variant; give at least one, e.g. com or "
                         "com,com[beta=0.8] (`memcore systems` lists them)")
    return out


def variant_config(name: str) -> SystemConfig:
    """The config a variant name stands for (validated)."""
    return parse_variant(name).config()


def canonical(name: str) -> str:
    """The canonical form of a variant name (`com[beta=0.5]` -> `com`)."""
    return parse_variant(name).name
