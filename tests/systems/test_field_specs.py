"""Every field of every built-in system's config knows its source, its valid range or values and when it acts
(memcore.systems.fields); the paper defaults lie inside; validation checks ranges and choices generically."""

from __future__ import annotations

from dataclasses import dataclass, fields

import pytest

from memcore.retrievers import retriever_names
from memcore.systems import builtin_systems, get_system, make_config
from memcore.systems.fields import INT_BOUND, check_fields, field_spec, field_specs, format_value, param
from memcore.systems.protocol import SystemConfig, query_field

BUILTIN = builtin_systems()


@pytest.mark.parametrize("name", BUILTIN)
def test_every_field_has_a_source_a_range_or_choices_and_help(name: str) -> None:
    cls = get_system(name).config_class
    specs = field_specs(cls)
    assert [s.name for s in specs] == [f.name for f in fields(cls)]
    for s in specs:
        assert s.source.strip(), f"{name}.{s.name} has no source"
        assert s.range is not None or s.choices is not None, f"{name}.{s.name} has no range or choices"
        assert s.help.strip(), f"{name}.{s.name} has no help"
        assert s.problem(s.default) == "", f"{name}.{s.name}: paper default {s.default!r} {s.problem(s.default)}"


@pytest.mark.parametrize("name", BUILTIN)
def test_query_time_flag_is_the_one_that_keys_the_memory_space(name: str) -> None:
    cfg = get_system(name).config_class()
    construction = {s.name for s in field_specs(type(cfg)) if not s.query_time}
    # an `omit_default` field (added after memories were stored) keys the space only when set away from its default
    omitted = {f.name for f in fields(cfg) if f.metadata.get("omit_default")}
    assert omitted <= construction and construction - omitted == set(cfg.construction_dict())
    for spec in (s for s in field_specs(type(cfg)) if s.name in omitted):
        other = spec.choices[-1] if spec.choices[-1] != spec.default else spec.choices[0]
        assert spec.name in get_system(name).config_class(**{spec.name: other}).construction_dict()


def test_shared_fields_take_their_choices_from_the_registries() -> None:
    spec = field_spec(SystemConfig, "retriever")
    assert spec.choices == retriever_names() and spec.query_time and spec.default == "dense"
    assert "paper" in field_spec(SystemConfig, "reader").choices
    assert field_spec(SystemConfig, "category_source").choices == ("gold", "predicted")


def test_specs_read_types_optionals_and_bools() -> None:
    beta = field_spec(get_system("com").config_class, "beta")
    assert beta.base_type is float and not beta.optional and beta.range == (0.0, 1.0) and beta.when == "query"
    theta = field_spec(get_system("recmem").config_class, "theta_sim")
    assert theta.optional and theta.base_type is float and theta.type_name == "float | None"
    assert theta.problem(None) == "" and theta.when == "construction"
    review = field_spec(get_system("memweaver").config_class, "review")
    assert review.choices == (False, True) and review.base_type is bool


@pytest.mark.parametrize(("name", "field", "value", "words"), [
    ("com", "beta", 1.5, "beta must be in [0.0, 1.0], not 1.5 (float, paper default 0.5)"),
    ("com", "max_len", 0, "max_len must be in [1, 1000000], not 0 (int, paper default 8)"),
    ("memweaver", "entity_sim", "high", "entity_sim must be a number in [0.0, 1.0], not 'high'"),
    ("xmemory", "knn_scope", "global", "knn_scope must be one of level, joint, not 'global'"),
    ("recmem", "theta_count", 0, "theta_count must be in [1, 1000000] or none, not 0 (int | None, paper default none)"),
    ("naive_rag", "k", 0, "k must be in [1, 1000000], not 0"),
    ("memcot", "temperature_judge", -0.1, "temperature_judge must be in [0.0, 2.0]"),
    ("memcot", "J", 1, "J must be in [2, 1000000], not 1 (int, paper default 8)"),
    ("memcot", "fallback", "always", "fallback must be one of abstain, empty, never, not 'always'"),
    ("recmem", "theta_merge", 1.2, "theta_merge must be in [-1.0, 1.0] or none, not 1.2"),
    ("memweaver", "eps", 0.0, "eps must be > 0 (a DBSCAN radius)"),  # the config's own rule on top
])
def test_values_outside_the_spec_fail_in_one_line(name: str, field: str, value: object, words: str) -> None:
    with pytest.raises(ValueError) as err:
        make_config(name, **{field: value})
    assert words in str(err.value) and "\n" not in str(err.value)


def test_fields_without_a_spec_are_checked_by_nothing_but_their_own_validate() -> None:
    @dataclass
    class Plain(SystemConfig):
        k: int = 6
        mode: str = param("a", choices=("a", "b"), source="test", help="a mode")
        w: float = query_field(0.5, range=(0.0, 1.0), source="test", help="a weight")

    spec = field_spec(Plain, "k")
    assert spec.source == "" and spec.choices is None and spec.problem(-3) == ""
    assert spec.range == (-INT_BOUND, INT_BOUND)  # a whole number is bounded even when nothing is declared
    check_fields(Plain(k=-3))  # nothing declared, nothing checked but the bound
    with pytest.raises(ValueError, match="k must be in"):
        check_fields(Plain(k=INT_BOUND + 1))
    with pytest.raises(ValueError, match="Plain: mode must be one of a, b, not 'c'"):
        Plain(mode="c").validate()
    with pytest.raises(ValueError, match="no field 'x'; fields: retriever, reader, category_source, k, mode, w"):
        field_spec(Plain, "x")
    assert Plain().construction_dict() == {"k": 6, "mode": "a"}


def test_format_value_is_stable() -> None:
    assert [format_value(v) for v in (0.5, 1.0, 1e-3, 0.1 + 0.2, True, None, 3, "day")] == [
        "0.5", "1.0", "0.001", "0.30000000000000004", "true", "none", "3", "day"]


def test_memcore_systems_lists_each_field_with_default_range_when_and_source() -> None:
    from typer.testing import CliRunner

    from memcore.cli import app

    out = CliRunner().invoke(app, ["systems"]).output
    com = out[out.index("\ncom ") + 1:].split("\n")
    beta = next(line for line in com if line.split()[:1] == ["beta"])
    assert beta.split()[:4] == ["beta", "0.5", "[0.0,", "1.0]"] and " query " in beta and "CoM Sec. 3.2" in beta
    entity = next(line for line in out.split("\n") if line.split()[:1] == ["entity_sim"])
    assert " construction " in entity and "papers/README.md" in entity
    fields_of_com = com[1:com.index(next(line for line in com[1:] if line and not line.startswith(" ")))]
    assert len(fields_of_com) == 1 + len(field_specs(get_system("com").config_class))  # header + one per field
    with_help = CliRunner().invoke(app, ["systems", "--field-help"]).output
    assert "    relative-drop truncation: stop when best gate < beta x last" in with_help
