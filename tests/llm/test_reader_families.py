"""Reader families are a registry filled from the systems' packages: a system's class names its paper's family
(`reader_family`), the family picks the prompt, and a system from outside memcore brings its own family
without touching memcore/llm."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memcore.embed import HashingEmbedder
from memcore.llm.roles import ROLES, Role, get_role
from memcore.llm.roles.readers import (
    FAMILIES,
    ReaderFamily,
    family_names,
    reader_choices,
    reader_for,
    reader_role,
    register_family,
)
from memcore.settings import Settings
from memcore.systems import SYSTEMS, builtin_systems, get_system, make_config, register_system
from memcore.systems.naive_rag import NaiveRAGSystem
from memcore.workbench import Workbench

NAME, FAMILY = "outside_reader_sys", "outside_family"


def test_each_builtin_system_declares_a_registered_family() -> None:
    declared = {name: get_system(name).reader_family for name in builtin_systems()}
    builtin = {f for f in family_names() if FAMILIES[f].pick.__module__.startswith("memcore.")}
    assert set(declared.values()) == builtin  # every family memcore registers is some system's; none is missing
    assert declared["naive_rag"] == declared["full_context"] == "short"
    for name, family in declared.items():
        assert reader_for(name).family == family and family in reader_choices()
    # a paper's family is registered from its own package, not from memcore.llm
    assert all(FAMILIES[f].pick.__module__ == f"memcore.systems.{f}.reader" for f in set(declared.values()) - {"short"})


@pytest.fixture
def outside() -> Iterator[dict[str, Role]]:
    """A system from outside memcore with its own reader family (two prompts picked by category), removed after."""
    plain = reader_role("answer_outside", "Plain reader.", "{context}\nQ: {question}\nA:", 0.3, "outside, plain")
    dated = reader_role("answer_outside_temporal", "Dated reader.", "{context}\nQ: {question}\nA:", 0.2,
                        "outside, temporal")
    register_family(ReaderFamily(FAMILY, pick=lambda source, cat: dated if cat == 2 else plain, uses_category=True,
                                 temperatures="0.3 (temporal 0.2)", source="a plugin's paper"))

    class OutsideSystem(NaiveRAGSystem):
        name = NAME
        reader_family = FAMILY

    register_system(OutsideSystem)
    yield {"plain": plain, "dated": dated}
    SYSTEMS.pop(NAME, None)
    FAMILIES.pop(FAMILY, None)
    ROLES.pop(plain.name, None)
    ROLES.pop(dated.name, None)


def test_a_system_from_outside_brings_its_reader_family(outside, tmp_path, tiny_conv) -> None:
    assert FAMILY in reader_choices() and make_config("naive_rag", reader=FAMILY).reader == FAMILY
    r = reader_for(NAME, "paper", "locomo", 2, category_source="gold")
    assert (r.family, r.role, r.temperature, r.source) == (FAMILY, "answer_outside_temporal", 0.2, "outside, temporal")
    assert reader_for(NAME, "paper", "locomo", 4).role == "answer_outside"
    assert reader_for(NAME, "paper", "longmemeval", 2).category_source == "none"  # no LoCoMo category there
    assert reader_for("naive_rag", FAMILY, "locomo", 1).role == "answer_outside"  # any system may choose it
    assert reader_for(NAME, "short").role == "answer"
    # answering end to end: the family's prompt is run and named in the trace
    tiny_conv.source = "locomo"
    wb = Workbench(Settings(store_uri=str(tmp_path / "s"), embedder="hashing"), embedder=HashingEmbedder())
    wb.ingest(NAME, tiny_conv)
    ans = wb.system(NAME, tiny_conv).answer(tiny_conv.questions[0])
    assert ans.trace.reader["family"] == FAMILY and ans.trace.reader["role"] == get_role("answer_outside").name
    assert ans.trace.reader["temperature"] == 0.3 and ans.text


def test_family_names_are_unique_and_paper_is_reserved(outside) -> None:
    with pytest.raises(ValueError, match=f"reader family '{FAMILY}' is already registered by tests.llm"):
        register_family(ReaderFamily(FAMILY, pick=lambda source, cat: outside["plain"]))
    with pytest.raises(ValueError, match="reserved"):
        register_family(ReaderFamily("paper", pick=lambda source, cat: outside["plain"]))


def test_an_unknown_reader_is_refused_naming_every_family() -> None:
    with pytest.raises(ValueError, match="reader must be one of paper, short, .*memweaver") as err:
        make_config("naive_rag", reader="nope")
    assert all(f in str(err.value) for f in family_names())
