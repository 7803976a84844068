"""Field specs of system configs: per field its paper source, valid range or values, one-line help and whether
it is a construction field (it keys the memory space) or a query-time one (retrieval and answering only).

A config declares them in the dataclass field's metadata, through `param` (construction) or
`query_field` (memcore.systems.protocol; query-time), both taking the keywords of `param`:
`source` (where the value comes from: "CoM Sec. 4.1", "papers/README.md (authors' code)", "memcore extension"),
`range=(lo, hi)` (inclusive; None = open, except for whole numbers: INT_BOUND) or `choices` (a tuple, or a function returning one for values that
come from a registry), and `help`. `field_specs(config_class)` reads them back; `check_fields(config)` checks the
ranges and choices of every field (SystemConfig.validate calls it; cross-field rules stay in each validate()).
"""

from __future__ import annotations

import functools
import math
import typing
from collections.abc import Callable
from dataclasses import MISSING, dataclass, field, fields
from typing import Any

Choices = tuple[Any, ...] | Callable[[], tuple[Any, ...]]
# every whole-number field is bounded: a bound its spec leaves open is this one (-INT_BOUND for the lower), so a
# value such as K=99999999999999999999 is refused by name when parsed, never reaching a store or numpy as is
INT_BOUND = 1_000_000


def param(default: Any, *, source: str = "", range: tuple[float | None, float | None] | None = None,
          choices: Choices | None = None, help: str = "", query: bool = False,
          omit_default: bool = False) -> Any:
    """A config field with its spec: a construction field unless `query` (then prefer `query_field`).
    `omit_default`: a construction field added after memories were stored keys the memory space only when
    set away from its default, so a memory built before the field existed keeps its space."""
    meta: dict[str, Any] = {"source": source, "help": help}
    if query:
        meta["query"] = True
    if omit_default:
        meta["omit_default"] = True
    if range is not None:
        meta["range"] = range
    if choices is not None:
        meta["choices"] = choices
    return field(default=default, metadata=meta)


@dataclass(frozen=True)
class FieldSpec:
    """What a config field is: its name, type, paper default, source, valid range or values, and when it acts."""

    name: str
    type: Any  # the annotation resolved: int, float, bool, str, int | None, ...
    default: Any
    source: str
    range: tuple[float | None, float | None] | None
    choices: tuple[Any, ...] | None
    query_time: bool
    help: str

    @property
    def base_type(self) -> type:
        """The value type without None (int for `int | None`)."""
        args = [a for a in typing.get_args(self.type) if a is not type(None)]
        return args[0] if args else self.type

    @property
    def optional(self) -> bool:
        """Whether None is a valid value."""
        return type(None) in typing.get_args(self.type)

    @property
    def type_name(self) -> str:
        """The type as written: "int", "float | None"."""
        return self.base_type.__name__ + (" | None" if self.optional else "")

    @property
    def when(self) -> str:
        """"query" (retrieval and answering only) or "construction" (keys the memory space)."""
        return "query" if self.query_time else "construction"

    def valid(self) -> str:
        """The valid values in words: "one of dense, lexical, hybrid" or "in [0, 1]" ("or none" when optional)."""
        if self.choices is not None:
            text = "one of " + ", ".join(format_value(c) for c in self.choices)
        elif self.range is not None:
            lo, hi = self.range
            text = (f"in [{format_value(lo)}, {format_value(hi)}]" if lo is not None and hi is not None
                    else f">= {format_value(lo)}" if lo is not None else f"<= {format_value(hi)}" if hi is not None
                    else "any number")
        else:
            text = f"any {self.base_type.__name__}"
        return text + (" or none" if self.optional else "")

    def valid_short(self) -> str:
        """The valid values in a table cell: "dense|lexical|hybrid", "[0.0, 1.0]", ">= 1" ("|none" when optional)."""
        if self.choices is not None:
            text = "|".join(format_value(c) for c in self.choices)
        elif self.range is not None:
            text = self.valid().removeprefix("in ").removesuffix(" or none")
        else:
            text = f"any {self.base_type.__name__}"
        return text + ("|none" if self.optional else "")

    def problem(self, value: Any) -> str:
        """Why `value` is not valid for this field ("" when it is)."""
        if value is None:
            return "" if self.optional else "must not be none"
        if self.choices is not None:
            return "" if value in self.choices else f"must be one of {', '.join(map(format_value, self.choices))}"
        if self.range is not None:
            if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
                return f"must be a number {self.valid()}"
            lo, hi = self.range
            if (lo is not None and value < lo) or (hi is not None and value > hi):
                return f"must be {self.valid()}"
        return ""

    def describe(self) -> str:
        """One line: "beta (float, paper default 0.5): one of ... / in [0, 1]"."""
        return f"{self.name} ({self.type_name}, paper default {format_value(self.default)}; {self.valid()})"


def format_value(value: Any) -> str:
    """A value as variant names and listings write it: true/false, none, repr of floats (stable, exact)."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def field_specs(config_class: type) -> list[FieldSpec]:
    """The spec of every field of a config dataclass, in declaration order (bool fields: choices false, true;
    a field declared without a spec gets an empty source and no range: tests/systems/test_field_specs.py
    requires them for every built-in system)."""
    hints = _hints(config_class)
    out = []
    for f in fields(config_class):
        meta = f.metadata
        default = f.default if f.default is not MISSING else (
            f.default_factory() if f.default_factory is not MISSING else None)
        choices = meta.get("choices")
        if callable(choices):
            choices = tuple(choices())
        tp = hints.get(f.name, type(default))
        base = [a for a in typing.get_args(tp) if a is not type(None)] or [tp]
        if choices is None and base[0] is bool:
            choices = (False, True)
        rng = meta.get("range")
        if choices is None and base[0] is int:  # one bound per whole-number field (INT_BOUND where left open)
            lo, hi = rng if rng is not None else (None, None)
            rng = (-INT_BOUND if lo is None else lo, INT_BOUND if hi is None else hi)
        out.append(FieldSpec(name=f.name, type=tp, default=default, source=meta.get("source", ""),
                             range=rng, choices=tuple(choices) if choices is not None else None,
                             query_time=bool(meta.get("query")), help=meta.get("help", "")))
    return out


def field_spec(config_class: type, name: str) -> FieldSpec:
    """The spec of one field, or ValueError naming the fields."""
    specs = {s.name: s for s in field_specs(config_class)}
    if name not in specs:
        raise ValueError(f"no field {name!r}; fields: {', '.join(specs)}")
    return specs[name]


def check_fields(config: Any, label: str = "") -> None:
    """ValueError (one line naming the field, its type, paper default and valid values) for the first field
    of `config` outside its range or choices."""
    for spec in field_specs(type(config)):
        value = getattr(config, spec.name)
        why = spec.problem(value)
        if why:
            who = f"{label}: " if label else ""
            raise ValueError(f"{who}{spec.name} {why}, not {value!r} "
                             f"({spec.type_name}, paper default {format_value(spec.default)})")


def spec_table(config_class: type, indent: str = "  ", with_help: bool = False) -> list[str]:
    """The fields of a config as aligned text lines (the `memcore systems` listing): name, paper default,
    valid range or values, construction | query, source; `with_help` adds each field's help under it."""
    specs = field_specs(config_class)
    rows = [("field", "default", "valid", "when", "source")]
    rows += [(s.name, format_value(s.default), s.valid_short(), s.when, s.source or "(not declared)") for s in specs]
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = []
    for n, row in enumerate(rows):
        lines.append(indent + "  ".join(c.ljust(w) for c, w in zip(row[:4], widths, strict=True)) + "  " + row[4])
        if with_help and n and specs[n - 1].help:
            lines.append(indent + "  " + specs[n - 1].help)
    return lines
