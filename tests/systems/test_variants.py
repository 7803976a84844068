"""Variant names (memcore.systems.variants): parsing by field type, one-line errors naming the field, its type,
paper default and valid values, canonical names, presets from the registry, and the round trip."""

from __future__ import annotations

import pytest

from memcore.systems import builtin_systems, get_system
from memcore.systems.fields import field_specs
from memcore.systems.variants import (
    Variant,
    canonical,
    get_preset,
    parse_variant,
    presets,
    register_preset,
    split_names,
    unregister_preset,
    variant_config,
    variant_name,
)


@pytest.fixture
def no_apt():
    """A test-defined preset (the real ablation presets need mechanism switches that are not built yet)."""
    register_preset("com", "test-long", {"beta": 0.0, "max_len": 12}, source="test (CoM Fig. 3 stand-in)",
                    description="chains grow to 12 nodes")
    yield
    unregister_preset("com", "test-long")


def test_a_plain_system_name_is_its_paper_config() -> None:
    v = parse_variant("com")
    assert v == Variant("com", {}, "", "com") and v.settings == {}
    assert variant_config("com") == get_system("com").config_class()


def test_overrides_are_parsed_by_the_field_type() -> None:
    v = parse_variant("com[beta=0.8, max_len=4,date_style=day ,retriever=hybrid]")
    assert v.overrides == {"beta": 0.8, "date_style": "day", "max_len": 4, "retriever": "hybrid"}
    assert type(v.overrides["beta"]) is float and type(v.overrides["max_len"]) is int
    cfg = v.config()
    assert (cfg.beta, cfg.max_len, cfg.date_style, cfg.retriever, cfg.K) == (0.8, 4, "day", "hybrid", 20)
    assert parse_variant("memweaver[review=false,triple_selector=0]").config().review is False
    assert parse_variant("recmem[theta_sim=0.6,theta_count=none]").overrides == {"theta_sim": 0.6}
    assert parse_variant("recmem[theta_count=4]").config().thresholds().theta_count == 4
    assert parse_variant("memcot[seed=none]").config().seed is None
    assert parse_variant("xmemory[include_gain=-0.2,sem_eps=1e-4]").overrides == {"include_gain": -0.2,
                                                                                  "sem_eps": 0.0001}
    assert parse_variant("com[speaker_boost=3]").overrides == {"speaker_boost": 3.0}  # an int for a float


@pytest.mark.parametrize(("name", "words"), [
    ("com[beta=high]", "com[beta=high]: beta (float, paper default 0.5) must be a number in [0.0, 1.0], not 'high'"),
    ("com[beta=1.5]", "com[beta=1.5]: beta (float, paper default 0.5) must be in [0.0, 1.0], not '1.5'"),
    ("com[beta=nan]", "beta (float, paper default 0.5) must be a number in [0.0, 1.0], not 'nan'"),
    ("com[max_len=4.5]", "max_len (int, paper default 8) must be a whole number in [1, 1000000], not '4.5'"),
    ("com[max_len=0]", "max_len (int, paper default 8) must be in [1, 1000000], not '0'"),
    ("com[date_style=iso]", "date_style (str, paper default dataset) must be one of dataset, day, not 'iso'"),
    ("com[retriever=telepathy]", "retriever (str, paper default dense) must be one of dense, lexical, hybrid"),
    ("memweaver[review=maybe]", "review (bool, paper default true) must be true or false, not 'maybe'"),
    ("memcot[J=none]", "J (int, paper default 8) must be a whole number in [2, 1000000], not 'none'"),
    ("recmem[theta_count=0]", "theta_count (int | None, paper default none) must be in [1, 1000000] or none, not '0'"),
    ("com[betta=0.8]", "com[betta=0.8]: com has no field 'betta' (did you mean beta?); fields: retriever, reader"),
    ("com[beta=0.8,beta=0.7]", "com[beta=0.8,beta=0.7]: beta is given twice"),
    ("com[beta]", "com[beta]: 'beta' is not field=value"),
    ("com[beta=0.8", "'com[beta=0.8' is not a variant name: write system, system[field=value,...]"),
    ("cmo[beta=0.8]", "cmo[beta=0.8]: unknown memory system 'cmo'; available: full_context, naive_rag"),
    ("com:no-such", "com:no-such: com has no preset 'no-such'; presets:"),
    ("memweaver[eps=0]", "memweaver[eps=0]: MemWeaver eps must be > 0 (a DBSCAN radius), not 0.0"),  # validate()
    ("com[beta=high\n,K=3]", "com[beta=high ,K=3]: beta (float, paper default 0.5) must be a number"),
])
def test_mistakes_fail_in_one_line_naming_field_type_default_and_valid_values(name: str, words: str) -> None:
    with pytest.raises(ValueError) as err:
        parse_variant(name)
    assert words in str(err.value), str(err.value)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(("name", "want"), [
    ("com[beta=0.5]", "com"),
    ("com[beta=0.50,max_len=8,K=20]", "com"),
    ("com[max_len=4,beta=0.8]", "com[beta=0.8,max_len=4]"),
    ("com[beta=.8]", "com[beta=0.8]"),
    ("com[beta=1]", "com[beta=1.0]"),
    ("com[beta=1e-1]", "com[beta=0.1]"),
    (" com [ L = 2 , K = 10 ] ".replace(" [", "["), "com[K=10,L=2]"),
    ("memweaver[review=False,hops=1]", "memweaver[review=false]"),
    ("recmem[theta_sim=None,theta_count=5]", "recmem[theta_count=5]"),
    ("naive_rag_session[session_vector=text]", "naive_rag_session[session_vector=text]"),
    ("com[]", "com"),
])
def test_canonical_names_sort_keys_drop_paper_defaults_and_format_stably(name: str, want: str) -> None:
    assert canonical(name) == want
    assert canonical(want) == want  # idempotent


@pytest.mark.parametrize("system", builtin_systems())
def test_round_trip_over_every_field_of_every_system(system: str) -> None:
    """Each field set to a valid non-default value: the canonical name parses back to the same config."""
    for spec in field_specs(get_system(system).config_class):
        if spec.choices is not None:
            value = next(c for c in spec.choices if c != spec.default)
        elif spec.base_type is int:
            value = (spec.default or 0) + 1 if spec.default is not None else (spec.range[0] or 0) + 1
        else:  # float: a value inside the range, different from the default
            lo, hi = spec.range
            value = (lo + hi) / 3 if lo is not None and hi is not None else (spec.default or 0.25) + 0.125
            if value == spec.default:
                value = (lo + 2 * (hi - lo) / 3) if hi is not None else value + 1
        overrides = {spec.name: value}
        cfg = get_system(system).config_class(**overrides)
        cfg.validate()
        name = variant_name(system, overrides)
        assert name != system, (system, spec.name, value)
        back = parse_variant(name)
        assert back.name == name and back.config() == cfg, (system, spec.name, name)


def test_presets_come_from_the_registry(no_apt) -> None:
    preset = get_preset("com", "test-long")
    assert preset.source == "test (CoM Fig. 3 stand-in)" and preset in presets("com") and preset in presets()
    v = parse_variant("com:test-long")
    assert (v.system, v.preset, v.overrides, v.name) == ("com", "test-long", {}, "com:test-long")
    assert v.settings == {"beta": 0.0, "max_len": 12} and variant_config("com:test-long").max_len == 12
    assert v.construction() == {}  # CoM's fields are all query-time: no new memory
    # overrides on top of a preset start from the preset's values, not the paper's
    assert canonical("com:test-long[max_len=12,beta=0.5]") == "com:test-long[beta=0.5]"
    assert canonical("com:test-long[max_len=8]") == "com:test-long[max_len=8]"
    assert parse_variant("com:test-long[K=10]").config().K == 10


def test_preset_registration_rules(no_apt) -> None:
    again = register_preset("com", "test-long", {"beta": 0.0, "max_len": 12}, source="test (CoM Fig. 3 stand-in)",
                            description="chains grow to 12 nodes")
    assert again is get_preset("com", "test-long")  # the same preset again: a no-op
    with pytest.raises(ValueError, match="preset 'com:test-long' is already registered by tests.systems"):
        register_preset("com", "test-long", {"beta": 0.1}, source="x", description="y")
    with pytest.raises(ValueError, match="needs a source"):
        register_preset("com", "test-nosource", {}, source=" ", description="y")
    with pytest.raises(ValueError, match="preset name"):
        register_preset("com", "bad name", {}, source="x", description="y")
    register_preset("com", "test-typo", {"betta": 0.1}, source="x", description="a preset with a typo")
    try:
        with pytest.raises(ValueError, match=r"com:test-typo \(preset com:test-typo\): com has no field 'betta'"):
            parse_variant("com:test-typo")
    finally:
        unregister_preset("com", "test-typo")


def test_construction_settings_are_told_apart_from_query_time_ones() -> None:
    v = parse_variant("xmemory[alpha=0.5,max_theme=14]")
    assert v.construction() == {"max_theme": 14}
    assert v.config().construction_dict() != get_system("xmemory").config_class().construction_dict()
    assert parse_variant("xmemory[alpha=0.5]").construction() == {}


@pytest.mark.parametrize(("text", "want"), [
    ("com,com[beta=0.8,max_len=4],com:no-apt", ["com", "com[beta=0.8,max_len=4]", "com:no-apt"]),
    (" com , ,xmemory[alpha=0.3] ", ["com", "xmemory[alpha=0.3]"]),
    ("com:test-long[K=10,L=2],@fast", ["com:test-long[K=10,L=2]", "@fast"]),
])
def test_a_comma_inside_brackets_is_not_a_separator(text: str, want: list[str]) -> None:
    assert split_names(text) == want


@pytest.mark.parametrize("text", ["com[beta=0.8,com", "com],x", "com[[a]"])
def test_unbalanced_brackets_fail_in_one_line(text: str) -> None:
    with pytest.raises(ValueError, match="without its"):
        split_names(text)


def test_keyword_settings_combine_into_the_canonical_name(no_apt) -> None:
    v = parse_variant("com[beta=0.8]").combined({"retriever": "hybrid", "max_len": 8})
    assert v.name == "com[beta=0.8,retriever=hybrid]" and v.config().retriever == "hybrid"
    assert parse_variant("com:test-long").combined({"max_len": 12, "K": 10}).name == "com:test-long[K=10]"
    assert parse_variant("com").combined({"retriever": "dense"}).name == "com"
    with pytest.raises(ValueError, match="com has no field 'betta'"):
        parse_variant("com").combined({"betta": 1})
    with pytest.raises(ValueError, match=r"com\[beta=2.0\]: .*beta"):
        parse_variant("com").combined({"beta": 2.0})


def test_the_memory_name_keeps_the_construction_settings_only() -> None:
    assert parse_variant("com[beta=0.8,max_len=4]").memory_name == "com"  # CoM's fields are all query-time
    v = parse_variant("memweaver[review=false,entity_sim=0.9]")
    assert v.construction() == {"entity_sim": 0.9, "review": False}
    assert v.memory_name == "memweaver[entity_sim=0.9,review=false]"
    assert parse_variant("memweaver[review=false,retriever=hybrid]").memory_name == "memweaver[review=false]"
