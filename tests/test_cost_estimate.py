"""Cost preview (memcore.eval.estimate): the estimate is the offline ledger's counts, --dry-run calls no provider,
a real eval records the estimate beside the actual."""

from __future__ import annotations

import json
from collections import defaultdict

import pytest
from typer.testing import CliRunner

from memcore.cli import app
from memcore.datasets.demo import load_demo
from memcore.eval.estimate import estimate_ingest, format_estimate
from memcore.llm.mock_server import MockOpenAIServer
from memcore.settings import Settings
from memcore.workbench import Workbench

runner = CliRunner()
PRICES = {"gpt-4o-mini": {"prompt_per_1m": 0.15, "completion_per_1m": 0.60}}


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMCORE_STORE", str(tmp_path / "store"))
    monkeypatch.setenv("MEMCORE_EMBEDDER", "hashing")
    monkeypatch.setenv("MEMCORE_SIM_DELAY_MS", "0")
    monkeypatch.setenv("MEMCORE_SIM_JITTER_MS", "0")
    monkeypatch.delenv("MEMCORE_LLM_PROVIDER", raising=False)


def test_estimate_equals_the_offline_ledger_of_the_demo_ingest(tmp_path):
    demo = load_demo()
    # independently: ingest with the offline engine and count the ledger per stage
    wb = Workbench(Settings().with_(store_uri=str(tmp_path / "offline"), llm_provider="offline"))
    wb.ingest("xmemory", demo)
    want: dict = defaultdict(lambda: [0, 0, 0])
    for r in wb.ledger.records:
        if r.stage != "probe":
            want[(r.stage, r.system)][0] += 1
            want[(r.stage, r.system)][1] += r.prompt_tokens
            want[(r.stage, r.system)][2] += r.completion_tokens
    assert want[("construction", "xmemory")][0] > 0

    est = estimate_ingest(Settings().with_(llm_provider="openai", llm_model="gpt-4o-mini"), [demo],
                          ["xmemory", "naive_rag"], prices=PRICES)
    got = {(r.stage, r.system): [r.calls, r.prompt_tokens, r.completion_tokens] for r in est.rows}
    assert got == {**want, ("construction", "naive_rag"): [0, 0, 0]}  # naive_rag builds without the LLM
    calls, p, c = want[("construction", "xmemory")]
    row = next(r for r in est.rows if r.system == "xmemory")
    assert row.cost_usd == pytest.approx((p * 0.15 + c * 0.60) / 1e6, abs=1e-6)
    assert est.total().calls == calls and est.priced


def test_unknown_price_gives_tokens_only_said_plainly():
    est = estimate_ingest(Settings().with_(llm_provider="openai", llm_model="mystery-model"), [load_demo()],
                          ["xmemory"], prices=PRICES)
    assert not est.priced and est.total().cost_usd is None and est.total().calls > 0
    text = format_estimate(est)
    assert "no price for model 'mystery-model'" in text and "$" not in text


@pytest.mark.parametrize("argv", [["ingest", "demo", "-s", "xmemory"],
                                  ["eval", "-d", "demo", "-s", "xmemory", "--limit", "2", "-o", "{out}"]])
def test_dry_run_calls_no_provider_and_exits_0(argv, tmp_path, monkeypatch):
    out = tmp_path / "res.json"
    with MockOpenAIServer(model="gpt-4o-mini") as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        args = [a.replace("{out}", str(out)) for a in argv]
        res = runner.invoke(app, [*args, "--provider", "openai", "--dry-run"])
        assert res.exit_code == 0, res.output
        assert srv.received == 0 and srv.probes == []
    assert "cost estimate for openai / gpt-4o-mini" in res.output
    assert "xmemory" in res.output and "construction" in res.output
    assert not out.exists()  # nothing evaluated, nothing written


def test_a_real_eval_records_the_estimate_beside_the_actual(tmp_path):
    out = tmp_path / "res.json"
    res = runner.invoke(app, ["eval", "-d", "demo", "-s", "xmemory", "--limit", "2", "--provider", "simulated",
                              "-o", str(out)])
    assert res.exit_code == 0, res.output
    ce = json.loads(out.read_text())["cost_estimate"]
    est, act = ce["estimate"], ce["actual"]
    assert est["source"].startswith("offline engine ledger") and act["source"] == "the run's own ledger"
    # the simulated model answers with the offline engine: the actual equals the estimate, call for call
    assert act["total"]["calls"] == est["total"]["calls"] > 0
    assert {(r["stage"], r["calls"]) for r in act["rows"]} == {(r["stage"], r["calls"]) for r in est["rows"]}
    # the actual is the run's own ledger: every stored call of the run, outside the probe
    wb = Workbench(Settings().with_(llm_provider="offline"))
    calls = wb.store.llm_calls(provider="simulated")
    assert act["total"]["calls"] == int((calls["stage"] != "probe").sum())
    assert "actual calls" in res.output


def test_build_card_shows_the_estimate_on_a_click_and_none_for_the_offline_engine(tmp_path, monkeypatch):
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    page = str(Path(__file__).resolve().parents[1] / "pages" / "ask.py")
    Workbench(Settings().with_(llm_provider="offline")).load_demo()  # a stored conversation, no memory
    monkeypatch.setenv("MEMCORE_LLM_PROVIDER", "offline")
    at = AppTest.from_file(page, default_timeout=60).run()
    assert not [b for b in at.button if b.label == "Estimate cost"]  # the offline engine costs nothing

    monkeypatch.setenv("MEMCORE_LLM_PROVIDER", "simulated")
    at = AppTest.from_file(page, default_timeout=60).run()
    at.multiselect(key="ask_systems").set_value(["xmemory"]).run()
    buttons = [b for b in at.button if b.label == "Estimate cost"]
    assert buttons, [b.label for b in at.button]
    buttons[0].click().run()
    want = estimate_ingest(Settings().with_(llm_provider="simulated"), [load_demo()], ["xmemory"]).total()
    captions = " ".join(c.value for c in at.caption)
    assert f"{want.calls} calls" in captions and "offline engine ledger" in captions, captions
    assert Workbench(Settings().with_(llm_provider="offline")).store.llm_calls().empty  # nothing built or called


def test_benchmark_shows_the_run_estimate_before_start(monkeypatch):
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    from memcore.eval.estimate import estimate_eval

    Workbench(Settings().with_(llm_provider="offline")).load_demo()
    monkeypatch.setenv("MEMCORE_LLM_PROVIDER", "simulated")
    at = AppTest.from_file(str(Path(__file__).resolve().parents[1] / "pages" / "benchmark.py"),
                           default_timeout=90).run()
    at.multiselect(key="bm_run_systems").set_value(["naive_rag"]).run()
    at.number_input(key="bm_limit").set_value(2).run()
    next(b for b in at.button if b.label == "Estimate cost of this run").click().run()
    want = estimate_eval(Settings().with_(llm_provider="simulated"), dataset="demo", systems=["naive_rag"],
                         limit=2).total()
    captions = " ".join(c.value for c in at.caption)
    assert f"{want.calls} calls" in captions and want.calls == 4, captions  # 2 answers + 2 judge calls


def test_a_failed_estimate_does_not_block_the_real_run(tmp_path, monkeypatch):
    import memcore.cli.eval as eval_cli

    def broken(*_a, **_k):
        raise RuntimeError("offline estimate broke")

    monkeypatch.setattr(eval_cli, "estimate_eval", broken)
    out = tmp_path / "res.json"
    res = runner.invoke(app, ["eval", "-d", "demo", "-s", "naive_rag", "--limit", "1", "--provider", "simulated",
                              "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert "warning: no cost estimate (RuntimeError: offline estimate broke)" in res.output
    assert "cost_estimate" not in json.loads(out.read_text())  # nothing stands in for the missing estimate
    dry = runner.invoke(app, ["eval", "-d", "demo", "-s", "naive_rag", "--provider", "simulated", "--dry-run"])
    assert dry.exit_code != 0  # a dry run without an estimate fails
