"""Cost preview from an earlier real run (memcore.eval.estimate_prior): with a real run of the same configuration
in the store, the estimate is that run's ledger (calls and the real model's token counts per stage and system)
and names the run; any other model, setting or question falls back to the offline engine's ledger, saying so.

The "real" run is the openai provider against the mock server answering with the offline engine's outputs: the
same calls as the offline engine, but the server counts tokens as words, so the two sources' token counts
differ and a test can tell which one an estimate used.
"""

from __future__ import annotations

from collections import defaultdict

import pytest
from typer.testing import CliRunner

from memcore.cli import app
from memcore.datasets.demo import load_demo
from memcore.embed import HashingEmbedder
from memcore.eval.estimate import NO_PRIOR, OFFLINE_SOURCE, estimate_eval, estimate_ingest, format_estimate
from memcore.eval.runner import run_eval
from memcore.llm import make_provider
from memcore.llm.mock_server import MockOpenAIServer, OfflineResponder, observe
from memcore.settings import Settings
from memcore.workbench import Workbench

MODEL = "gpt-4o-mini"
EVAL = {"dataset": "demo", "systems": ["xmemory"], "limit": 2}


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    """A store holding one real eval run (xmemory, 2 demo questions, judged) and its memory; the server stays up."""
    path = tmp_path_factory.mktemp("prior") / "store"
    with MockOpenAIServer(model=MODEL, responder=OfflineResponder(HashingEmbedder())) as srv:
        s = Settings(store_uri=str(path), embedder="hashing", llm_provider="openai", llm_model=MODEL,
                     openai_base_url=srv.base_url, openai_api_key="sk-test")
        wb = Workbench(s, provider=observe(make_provider(s), srv.responder), embedder=HashingEmbedder())
        res = run_eval(s, workbench=wb, **EVAL)
        assert res["complete"] and srv.received > 0
        yield {"settings": s, "res": res, "srv": srv, "store": wb.store}


def ledger(store, stage: str | None = None) -> dict:
    """The store's openai calls per (stage, system) outside the probe: [calls, prompt tokens, completion tokens]."""
    df = store.llm_calls(provider="openai", stage=stage)
    out: dict = defaultdict(lambda: [0, 0, 0])
    for r in df[df["stage"] != "probe"].to_dict("records"):
        c = out[(r["stage"], r["system"])]
        c[0], c[1], c[2] = c[0] + 1, c[1] + int(r["prompt_tokens"]), c[2] + int(r["completion_tokens"])
    return dict(out)


def counts(est) -> dict:
    return {(r.stage, r.system): [r.calls, r.prompt_tokens, r.completion_tokens] for r in est.rows}


def test_eval_estimate_is_the_earlier_real_runs_ledger_and_names_it(real):
    before = real["srv"].received
    est = estimate_eval(real["settings"], **EVAL)
    assert real["srv"].received == before  # the estimate asks no model
    assert est.source.startswith(f"earlier real run {real['res']['run_id']} (openai / {MODEL}) on 20")
    want = ledger(real["store"])
    assert {k[0] for k in want} >= {"construction", "answer", "judge"}
    assert counts(est) == want  # construction from the ledger, answering from the run's rows: the ledger's counts
    assert all(r.source == est.source for r in est.rows)
    assert any("earlier real run of the same configuration" in n for n in est.notes)
    # the offline engine's ledger of the same work makes the same calls with other token counts
    off = estimate_eval(real["settings"].with_(llm_model="gpt-4o"), **EVAL)
    assert off.total().calls == est.total().calls and counts(off) != counts(est)


@pytest.mark.parametrize("change", [{"llm_model": "gpt-4o"}, {"retriever": "lexical"}, {"limit": 3},
                                    {"judge": False}, {"systems": ["xmemory[theme_budget=3]"]}])
def test_another_model_setting_or_question_falls_back_to_offline_said_so(real, change):
    settings = real["settings"].with_(**{k: v for k, v in change.items() if k == "llm_model"})
    est = estimate_eval(settings, **{**EVAL, **{k: v for k, v in change.items() if k != "llm_model"}})
    assert est.source == f"{OFFLINE_SOURCE}; {NO_PRIOR}"
    assert all(r.source == est.source for r in est.rows)
    assert real["res"]["run_id"] not in format_estimate(est)


def test_systems_without_a_real_run_are_estimated_offline_and_each_row_says_which(real):
    est = estimate_eval(real["settings"], **{**EVAL, "systems": ["xmemory", "memcot"]})
    src = {r.system: r.source for r in est.rows}
    assert src["xmemory"].startswith(f"earlier real run {real['res']['run_id']}")
    assert src["memcot"] == OFFLINE_SOURCE
    assert {k: v for k, v in counts(est).items() if k[1] == "xmemory"} == ledger(real["store"])
    text = format_estimate(est)
    assert "(source: per system, below)" in text and f"source of memcot: {OFFLINE_SOURCE}" in text
    assert f"source of xmemory: earlier real run {real['res']['run_id']}" in text


def test_ingest_estimate_is_the_earlier_real_builds_ledger(real):
    est = estimate_ingest(real["settings"], [load_demo()], ["xmemory"])
    space = Workbench(real["settings"]).space("xmemory", load_demo())
    assert est.source.startswith(f"earlier real run: memory {space} of demo built with openai / {MODEL} on 20")
    assert counts(est) == ledger(real["store"], "construction")
    assert any("skipped by `memcore ingest`" in n for n in est.notes)
    other = estimate_ingest(real["settings"].with_(llm_model="gpt-4o"), [load_demo()], ["xmemory"])
    assert other.source == f"{OFFLINE_SOURCE}; {NO_PRIOR}"
    assert other.total().calls == est.total().calls and counts(other) != counts(est)
    built = estimate_ingest(real["settings"], [load_demo()], ["xmemory[theme_budget=3]"])  # query-time: same memory
    assert built.source == est.source
    unbuilt = estimate_ingest(real["settings"], [load_demo()], ["xmemory[max_theme=10]"])  # construction: not built
    assert unbuilt.source.startswith(OFFLINE_SOURCE)


@pytest.mark.parametrize("argv", [["eval", "-d", "demo", "-s", "xmemory", "--limit", "2"],
                                  ["ingest", "demo", "-s", "xmemory"]])
def test_dry_run_prints_the_earlier_runs_source(real, argv, monkeypatch):
    s = real["settings"]
    for k, v in {"OPENAI_BASE_URL": s.openai_base_url, "OPENAI_API_KEY": "sk-test", "MEMCORE_LLM_MODEL": MODEL,
                 "MEMCORE_EMBEDDER": "hashing", "MEMCORE_STORE": s.store_uri}.items():
        monkeypatch.setenv(k, v)
    before = real["srv"].received
    res = CliRunner().invoke(app, [*argv, "--provider", "openai", "--dry-run"])
    assert res.exit_code == 0, res.output
    assert real["srv"].received == before
    first = res.output.splitlines()[0]
    assert first.startswith(f"cost estimate for openai / {MODEL} (source: earlier real run"), first
    if argv[0] == "eval":
        assert real["res"]["run_id"] in first


def test_benchmark_page_names_each_systems_source(real, monkeypatch):
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    s = real["settings"]
    for k, v in {"MEMCORE_LLM_PROVIDER": "openai", "OPENAI_BASE_URL": s.openai_base_url, "OPENAI_API_KEY": "sk-test",
                 "MEMCORE_LLM_MODEL": MODEL, "MEMCORE_EMBEDDER": "hashing", "MEMCORE_STORE": s.store_uri}.items():
        monkeypatch.setenv(k, v)
    before = real["srv"].received
    at = AppTest.from_file(str(Path(__file__).resolve().parents[1] / "pages" / "benchmark.py"),
                           default_timeout=120).run()
    at.multiselect(key="bm_run_systems").set_value(["xmemory", "memcot"]).run()
    at.number_input(key="bm_limit").set_value(2).run()
    next(b for b in at.button if b.label == "Estimate cost of this run").click().run()
    captions = " ".join(c.value for c in at.caption).replace("\\", "")  # Markdown-escaped text
    assert f"Sources: memcot: {OFFLINE_SOURCE}; xmemory: earlier real run {real['res']['run_id']} (openai / {MODEL}) " \
           "on 20" in captions, captions
    assert real["srv"].received == before  # estimating asks no model


def test_a_conversation_not_in_the_file_fails_as_the_run_would(real):
    from memcore.errors import ConfigError

    with pytest.raises(ConfigError, match="no conversation"):  # not an estimate of nothing from the earlier run
        estimate_eval(real["settings"], **EVAL, conversations=["nope"])
