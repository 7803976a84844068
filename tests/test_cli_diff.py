"""`memcore diff`: one memory between two steps, two variants' memories at one step, JSON, plain refusals."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from memcore.cli import app
from memcore.errors import MemcoreError

runner = CliRunner()


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("MEMCORE_STORE", str(tmp_path_factory.mktemp("diff") / "store"))
    mp.setenv("MEMCORE_EMBEDDER", "hashing")
    mp.setenv("MEMCORE_LLM_PROVIDER", "offline")
    from memcore.settings import Settings
    from memcore.workbench import Workbench

    wb = Workbench(Settings())
    conv = wb.load_demo()
    for name, cfg in (("xmemory", {}), ("xmemory", {"max_theme": 4}), ("com", {})):
        assert not wb.ingest(name, conv, **cfg).error
    yield wb, conv
    mp.undo()


def test_steps_summary_names_counts_items_turns_and_events(built):
    res = runner.invoke(app, ["diff", "xmemory", "demo", "--from", "10", "--to", "20", "--limit", "0"])
    assert res.exit_code == 0, res.output
    assert res.output.startswith("xmemory on demo from step 10 to step 20: 10 added, 2 changed, 0 removed.")
    assert "episode           2        0        0          2" in res.output
    assert "  + episode-3: On 8 May 2023, Maya said next up is the big one" in res.output
    assert "      step 13 · turn 13 (D1:13) · created: episode closed (topic change" in res.output
    assert "  ~ theme-" in res.output and "      before: " in res.output and "      after:  " in res.output


def test_json_is_the_library_diff(built):
    from memcore.memory_diff import diff_steps

    wb, conv = built
    res = runner.invoke(app, ["diff", "xmemory", "demo", "--from", "10", "--to", "20", "--json"])
    assert res.exit_code == 0, res.output
    got = json.loads(res.output)
    want = diff_steps(wb.memory("xmemory", conv), conv, 10, 20)
    assert got["counts"] == want.counts() and len(got["changes"]["semantic"]) == 5
    assert got["changes"]["episode"][0]["causes"][0]["turn_id"] == "D1:13"


def test_two_variants_at_one_step(built):
    res = runner.invoke(app, ["diff", "xmemory", "xmemory[max_theme=4]", "demo", "--at", "40"])
    assert res.exit_code == 0, res.output
    assert res.output.startswith("xmemory[max_theme=4] against xmemory on demo at step 40: 4 added, 1 changed, "
                                 "0 removed.")
    assert "      B step 33 · turn 33 (D2:9) · split: theme-1 split" in res.output


def test_empty_raw_turns_and_refusals_are_plain(built):
    res = runner.invoke(app, ["diff", "xmemory", "demo", "--from", "10", "--to", "12"])
    assert res.exit_code == 0 and "from step 10 to step 12: nothing changed." in res.output
    res = runner.invoke(app, ["diff", "com", "demo", "--from", "3", "--to", "9"])
    assert "com holds no memory items of its own: it indexes the raw turns (6 turn(s)" in res.output
    res = runner.invoke(app, ["diff", "xmemory", "com", "demo", "--at", "5"])
    assert res.exit_code == 2 and "different systems" in res.output
    res = runner.invoke(app, ["diff", "xmemory", "demo", "--at", "5"])
    assert res.exit_code == 2 and "--from and --to" in res.output
    res = runner.invoke(app, ["diff", "xmemory[nope=1]", "demo"])
    assert res.exit_code == 2 and "nope" in res.output
    res = runner.invoke(app, ["diff", "memcot", "demo", "--from", "1", "--to", "2"])
    assert isinstance(res.exception, MemcoreError) and "no stored memory of memcot on demo" in str(res.exception)
    res = runner.invoke(app, ["diff", "xmemory", "demo", "--from", "1", "--to", "95"])
    assert isinstance(res.exception, MemcoreError) and "outside 0..91" in str(res.exception)
