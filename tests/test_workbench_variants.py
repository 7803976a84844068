"""Variant names in the Python API (issue 26): `wb.ask("com[beta=0.8]", conv, q)` and every method taking a system
name parse the name once (system + overrides, keyword settings on top), answer from the memory its construction
settings name (a query-time change never builds another), and name the canonical variant on the trace and in the
ledger; saved `@NAME` variants resolve from the store; bad names fail in one line."""

from __future__ import annotations

import pytest

from memcore.eval.mechanism import question_stats
from memcore.settings import Settings
from memcore.workbench import Workbench


@pytest.fixture(scope="module")
def wb(tmp_path_factory) -> Workbench:
    return Workbench(Settings(store_uri=str(tmp_path_factory.mktemp("wbv") / "store"), llm_provider="offline",
                              embedder="hashing"))


@pytest.fixture(scope="module")
def conv(wb):
    return wb.load_demo()


def test_a_query_time_variant_answers_from_the_same_memory_and_is_named(wb, conv) -> None:
    q = conv.questions[0]
    plain = wb.ask("com", conv, q)
    assert plain.trace.variant == "com" and "variant" not in plain.trace.to_dict()  # default output unchanged
    assert wb.space("com[beta=0.8,max_len=4]", conv) == wb.space("com", conv)
    spaces = set(wb.store.rows("checkpoints")["space"])
    ans = wb.ask("com[max_len=4,beta=0.8]", conv, q)
    assert set(wb.store.rows("checkpoints")["space"]) == spaces  # no other memory built
    assert ans.trace.variant == "com[beta=0.8,max_len=4]" and ans.trace.to_dict()["variant"] == ans.trace.variant
    lengths = {v: question_stats("com", a.trace.structure)["chain_lengths"] for v, a in (("com", plain),
                                                                                           ("short", ans))}
    assert max(lengths["short"]) <= 4 < max(lengths["com"])  # the variant's settings acted
    both = wb.ask("com[beta=0.8]", conv, q, retriever="lexical")  # keyword settings combine into the name
    assert (both.trace.variant, both.trace.retriever) == ("com[beta=0.8,retriever=lexical]", "lexical")
    wb.ledger.flush()
    calls = wb.llm_calls(stage="answer", system="com")
    assert set(calls["variant"]) == {"com", "com[beta=0.8,max_len=4]", "com[beta=0.8,retriever=lexical]"}


def test_a_construction_variant_is_its_own_memory_built_by_ingest(wb, conv) -> None:
    assert wb.space("memweaver[review=false]", conv) != wb.space("memweaver", conv)
    rep = wb.ingest("memweaver[review=false]", conv)
    assert rep.complete and wb.is_ingested("memweaver[review=false]", conv)
    assert not wb.is_ingested("memweaver", conv)
    assert wb.memory("memweaver[review=false,retriever=hybrid]", conv).status() == \
        wb.memory("memweaver[review=false]", conv).status()  # a query-time field: the same memory
    wb.ledger.flush()
    built = wb.llm_calls(stage="construction", system="memweaver")
    assert len(built) and set(built["variant"]) == {"memweaver[review=false]"}
    ans = wb.ask("memweaver[review=false,retriever=hybrid]", conv, conv.questions[1])
    assert ans.trace.variant == "memweaver[retriever=hybrid,review=false]"


def test_saved_variants_resolve_by_name_and_appear_in_the_pickers(wb, conv) -> None:
    assert wb.save_variant("short", "com[max_len=2,beta=0.5]") == "com[max_len=2]"
    assert wb.saved_variants() == {"short": "com[max_len=2]"}
    assert wb.variant("@short").name == "com[max_len=2]"
    names = wb.variant_names()
    assert names[: len(wb.systems())] == wb.systems() and "@short" in names
    assert wb.ask("@short", conv, conv.questions[0]).trace.variant == "com[max_len=2]"


@pytest.mark.parametrize(("name", "config", "words"), [
    ("com[betta=0.8]", {}, "com[betta=0.8]: com has no field 'betta' (did you mean beta?)"),
    ("com", {"beta": 2.0}, "com[beta=2.0]: CoMConfig: beta must be in [0.0, 1.0], not 2.0 (float, paper default 0.5)"),
    ("cmo", {}, "cmo: unknown memory system 'cmo'; available:"),
    ("@nope", {}, "@nope: no saved variant of that name"),
])
def test_bad_names_fail_in_one_line(wb, conv, name: str, config: dict, words: str) -> None:
    for call in (lambda: wb.ask(name, conv, "q?", **config), lambda: wb.ingest(name, conv, **config),
                 lambda: wb.memory(name, conv, **config)):
        with pytest.raises(ValueError) as err:
            call()
        assert words in str(err.value) and "\n" not in str(err.value)


def test_an_answer_export_names_its_variant(wb, conv) -> None:
    from memcore.eval.answer_rows import export_row

    q = conv.questions[0]
    row = export_row("com", wb.ask("com[K=10]", conv, q), q.evidence)
    assert list(row)[:3] == ["system", "variant", "retriever"] and row["variant"] == "com[K=10]"
    assert export_row("com", wb.ask("com", conv, q), q.evidence)["variant"] == "com"
