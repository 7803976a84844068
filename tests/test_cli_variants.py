"""`memcore variants save/list/delete` and `memcore systems --variants` (issue 26): a saved name kept in the store
for a canonical variant, listed with the presets and their source; bad names exit 2 with one line."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from memcore.cli import app
from memcore.systems.variants import register_preset, unregister_preset
from tests.test_cli import isolated  # noqa: F401 - the same isolated store, embedder and engine (autouse)

runner = CliRunner()


@pytest.fixture(autouse=True)
def test_preset():
    """A test-registered preset (the papers' ablation presets come from the systems' packages)."""
    register_preset("com", "test-long", {"beta": 0.0, "max_len": 12}, source="test (CoM Fig. 3 stand-in)",
                    description="chains grow to 12 nodes")
    yield
    unregister_preset("com", "test-long")


def test_save_list_and_delete_a_variant() -> None:
    saved = runner.invoke(app, ["variants", "save", "fast", "com[max_len=4,beta=0.5]"])
    assert saved.exit_code == 0 and "@fast = com[max_len=4]" in saved.output, saved.output
    again = runner.invoke(app, ["variants", "save", "@slow", "@fast"])  # a saved name resolves to its variant
    assert again.exit_code == 0 and "@slow = com[max_len=4]" in again.output
    listed = runner.invoke(app, ["systems", "--variants"])
    assert listed.exit_code == 0, listed.output
    assert "com:test-long" in listed.output and "[test (CoM Fig. 3 stand-in)]" in listed.output
    assert "@fast" in listed.output and "com[max_len=4]" in listed.output
    assert runner.invoke(app, ["variants", "delete", "@fast"]).exit_code == 0
    assert "@fast" not in runner.invoke(app, ["variants", "list"]).output


@pytest.mark.parametrize(("args", "words"), [
    (["variants", "save", "fast", "com[betta=1]"], "com has no field 'betta' (did you mean beta?)"),
    (["variants", "save", "a b", "com"], "is not a variant name to save"),
    (["variants", "save", "x", "@nope"], "@nope: no saved variant of that name"),
    (["variants", "delete", "nope"], "nope: no saved variant of that name"),
])
def test_bad_names_exit_2_with_one_line(args: list[str], words: str) -> None:
    res = runner.invoke(app, args)
    assert res.exit_code == 2 and words in res.output, res.output
    assert "Traceback" not in res.output


def test_ingest_and_ask_take_variants() -> None:
    res = runner.invoke(app, ["ingest", "demo", "-s", "naive_rag_session,naive_rag_session[session_vector=text,k=3]"])
    assert res.exit_code == 0, res.output
    # a construction field: its own memory, built by this command; the paper default k=3 is dropped from the name
    assert "naive_rag_session on demo" in res.output and "naive_rag_session[session_vector=text] on demo" in res.output
    again = runner.invoke(app, ["ingest", "demo", "-s", "naive_rag_session[session_vector=text,k=5]"])
    assert "already complete" in again.output  # k is query-time: the same memory
    ask = runner.invoke(app, ["ask", "demo:q0", "-s", "naive_rag_session[session_vector=text,k=1]", "-r", "lexical"])
    assert ask.exit_code == 0, ask.output
    assert "[naive_rag_session[k=1,retriever=lexical,session_vector=text] / lexical / offline engine" in ask.output
    bad = runner.invoke(app, ["ingest", "demo", "-s", "naive_rag_session[k=0]"])
    assert bad.exit_code == 2 and "k (int, paper default 3) must be in [1, 1000000], not '0'" in bad.output
