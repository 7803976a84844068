"""Variants in evaluation (issue 26): `run_eval` and `memcore eval --systems` take variant names; results, rows,
CSV and the ledger are keyed by canonical variant, each with its own mechanism statistics and config; a saved
`@NAME` runs by name; a rerun resumes; rows stored before variants load as their plain system."""

from __future__ import annotations

import csv
import json

import pytest
from typer.testing import CliRunner

from memcore.errors import ConfigError
from memcore.eval.report import row_trace
from memcore.eval.runner import run_eval
from memcore.eval.runs import assemble
from memcore.settings import Settings
from memcore.store import LanceStore
from memcore.store.variants import save_variant
from memcore.systems.variants import register_preset, unregister_preset

NAMES = ["com", "com[max_len=4,beta=0.8]", "com:test-long", "memweaver", "memweaver[review=false]"]
KEYS = ["com", "com[beta=0.8,max_len=4]", "com:test-long", "memweaver", "memweaver[review=false]"]


def settings(tmp, name: str = "store") -> Settings:
    return Settings(store_uri=str(tmp / name), llm_provider="offline", embedder="hashing")


@pytest.fixture(scope="module")
def preset():
    """A test-registered preset (the papers' ablation presets come from the systems' packages)."""
    register_preset("com", "test-long", {"beta": 0.0, "max_len": 12}, source="test (CoM Fig. 3 stand-in)",
                    description="chains grow to 12 nodes")
    yield
    unregister_preset("com", "test-long")


@pytest.fixture(scope="module")
def run(tmp_path_factory, preset):
    tmp = tmp_path_factory.mktemp("variants")
    res = run_eval(settings(tmp), "demo", systems=NAMES, limit=4, out=tmp / "r.json")
    return res, tmp


def test_result_sets_are_keyed_by_canonical_variant_with_their_own_mechanism_and_config(run) -> None:
    res, tmp = run
    assert res["complete"] and list(res["systems"]) == KEYS
    assert {k: (b["system"], b["variant"]) for k, b in res["systems"].items()} == {k: (k.split(":")[0].split("[")[0], k)
                                                                                   for k in KEYS}
    mech = {k: res["systems"][k]["mechanism"] for k in KEYS[:3]}
    assert mech["com"]["chain_length_hist"] != mech["com[beta=0.8,max_len=4]"]["chain_length_hist"]
    assert max(int(n) for n in mech["com[beta=0.8,max_len=4]"]["chain_length_hist"]) <= 4
    assert max(int(n) for n in mech["com:test-long"]["chain_length_hist"]) > 8  # beta 0: chains run past 8
    assert (res["configs"]["com:test-long"]["max_len"], res["configs"]["com[beta=0.8,max_len=4]"]["beta"],
            res["configs"]["com"]["beta"], res["configs"]["memweaver[review=false]"]["review"]) == (12, 0.8, 0.5, False)
    assert res["missing_by_system"] == dict.fromkeys(KEYS, 0)
    assert {r["system"] for r in res["ranking"]} == set(KEYS)
    on_disk = json.loads((tmp / "r.json").read_text())
    assert list(on_disk["systems"]) == KEYS
    with (tmp / "r.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert {(r["system"], r["variant"]) for r in rows if r["category"] == "overall"} == \
        {(k.split(":")[0].split("[")[0], k) for k in KEYS}


def test_rows_traces_and_ledger_carry_the_variant(run) -> None:
    res, tmp = run
    store = LanceStore(str(tmp / "store"), dim=256)
    rows = store.results(res["run_id"])
    assert sorted({(r["system"], r["variant"]) for r in rows}) == sorted((k.split(":")[0].split("[")[0], k)
                                                                        for k in KEYS)
    assert all(row_trace(r).get("variant", r["system"]) == r["variant"] for r in rows)
    assert len(store.results(res["run_id"], ["com:test-long"])) == 4
    calls = store.llm_calls()
    answers = calls[calls["stage"] == "answer"]
    assert answers.groupby("variant").size().to_dict() == dict.fromkeys(KEYS, 4)
    built = calls[calls["stage"] == "construction"].groupby("variant").size().to_dict()
    # review is a construction field: its own memory, built with fewer calls (no session review)
    assert set(built) == {"memweaver", "memweaver[review=false]"}
    assert built["memweaver[review=false]"] < built["memweaver"]
    tokens = {k: res["systems"][k]["construction_tokens"] for k in ("memweaver", "memweaver[review=false]")}
    assert 0 < tokens["memweaver[review=false]"] < tokens["memweaver"]
    assert res["systems"]["com:test-long"]["construction_tokens"] == res["systems"]["com"]["construction_tokens"]


def test_a_rerun_resumes_and_redoes_nothing(run) -> None:
    res, tmp = run
    seen: list = []
    again = run_eval(settings(tmp), "demo", systems=NAMES, limit=4, progress=lambda d, t, i: seen.append(i))
    assert again["run_id"] == res["run_id"] and not [i for i in seen if i.get("phase") == "answer"]
    assert again["systems"]["com:test-long"]["overall"] == res["systems"]["com:test-long"]["overall"]


def test_a_saved_variant_runs_by_name_and_is_recorded_canonically(tmp_path) -> None:
    s = settings(tmp_path)
    save_variant(LanceStore(s.store_uri, dim=256), "short", "com[max_len=2]", "com")
    res = run_eval(s, "demo", systems=["@short"], limit=2, judge=False)
    assert list(res["systems"]) == ["com[max_len=2]"] and res["configs"]["com[max_len=2]"]["max_len"] == 2
    with pytest.raises(ConfigError, match="@nope: no saved variant of that name; saved: @short"):
        run_eval(s, "demo", systems=["@nope"], limit=1)
    with pytest.raises(ConfigError, match=r"com\[beta=0.5\]: the same variant as another name of the run \(com\)"):
        run_eval(s, "demo", systems=["com", "com[beta=0.5]"], limit=1)


def test_rows_stored_before_variants_load_as_their_system(tmp_path) -> None:
    from memcore.types import Question

    store = LanceStore(str(tmp_path / "db"), dim=8)
    old = {"system": "naive_rag", "conv_id": "c", "question_id": "q1", "category": 1, "f1": 1.0, "correct": True,
           "usage": {}, "latency_ms": 1.0}
    store.save_results("r", [old])
    meta = {"provider_name": "offline", "model": "m", "provider": "offline", "memcore_version": "x", "engine": "e",
            "embedder": "h", "store": "s"}
    res = assemble(store, "r", [], {"c": [Question(id="q1", conv_id="c", text="", answer="", category=1)]},
                   ["naive_rag"], meta, {"enabled": False}, {"retriever": "dense", "format": "demo",
                                                             "dataset_sha256": ""}, "p", "demo")
    assert res["complete"] and res["systems"]["naive_rag"]["variant"] == "naive_rag"
    assert res["systems"]["naive_rag"]["overall"]["n"] == 1


def test_the_cli_splits_variant_lists_and_fails_bad_names_with_exit_2(tmp_path, preset) -> None:
    from memcore.cli import app

    runner = CliRunner()
    out = tmp_path / "r.json"
    ok = runner.invoke(app, ["eval", "--dataset", "demo", "--systems", "com,com[beta=0.8,max_len=4]", "--limit", "1",
                             "--no-judge", "--store", str(tmp_path / "st"), "--embedder", "hashing", "--provider",
                             "offline", "--out", str(out)])
    assert ok.exit_code == 0, ok.output
    assert list(json.loads(out.read_text())["systems"]) == ["com", "com[beta=0.8,max_len=4]"]
    for bad, words in [("com[betta=0.8]", "com has no field 'betta' (did you mean beta?)"),
                       ("com[beta=0.8", "a '[' without its ']'")]:
        r = runner.invoke(app, ["eval", "--dataset", "demo", "--systems", bad, "--store", str(tmp_path / "st"),
                                "--embedder", "hashing", "--provider", "offline", "--out", str(out)])
        assert r.exit_code == 2 and words in r.output and "Traceback" not in r.output, r.output


def test_compare_pairs_rows_by_variant(run) -> None:
    from memcore.eval.compare import build_comparison

    res, tmp = run
    store = LanceStore(str(tmp / "store"), dim=256)
    report = build_comparison(res["run_id"], res["run_id"], store, ["com[beta=0.8,max_len=4]"])
    block = report["systems"]["com[beta=0.8,max_len=4]"]
    assert block["overall"]["f1"]["n"] == 4 and block["only_a"] == block["only_b"] == 0
    assert set(build_comparison(res["run_id"], res["run_id"], store)["systems"]) == set(KEYS)


def test_the_run_retriever_applies_beneath_the_names_given(tmp_path) -> None:
    res = run_eval(settings(tmp_path), "demo", systems=["naive_rag", "com[K=10,retriever=dense]"], limit=1,
                   judge=False, retriever="lexical")
    assert list(res["systems"]) == ["naive_rag", "com[K=10]"]  # names as given (canonical)
    assert res["configs"]["naive_rag"]["retriever"] == "lexical"  # the run's retriever: the variant set none
    assert res["configs"]["com[K=10]"]["retriever"] == "dense"  # set in the name (to the default): kept


def test_results_written_before_variants_give_their_system_as_variant(run) -> None:
    from memcore.eval.report import csv_rows, format_table, variant_of

    res, _ = run
    old = json.loads(json.dumps(res))
    for block in old["systems"].values():  # a results file from before variants: no system/variant in the blocks
        del block["system"], block["variant"]
    rows = csv_rows(old)
    assert {(r["system"], r["variant"]) for r in rows} == {(k.split(":")[0].split("[")[0], k) for k in KEYS}
    assert "com:test-long" in format_table(old)
    assert variant_of({"system": "com"}) == "com" and variant_of({"system": "com", "variant": "com[K=3]"}) == "com[K=3]"


def test_the_papers_presets_run_as_result_sets_with_their_own_mechanism(tmp_path) -> None:
    """The issue's done-when run: com, com[beta=0.8], com:no-apt, com:no-dmce (CoM Fig. 3 presets)."""
    names = ["com", "com[beta=0.8]", "com:no-apt", "com:no-dmce"]
    res = run_eval(settings(tmp_path), "demo", systems=names, limit=4, judge=False)
    assert list(res["systems"]) == names and res["complete"]
    hist = {n: res["systems"][n]["mechanism"]["chain_length_hist"] for n in names}
    assert set(hist["com:no-apt"]) == {str(res["configs"]["com:no-apt"]["max_len"])}  # every chain to its cap
    assert set(hist["com:no-dmce"]) == {"1"}  # anchors alone
    store = LanceStore(settings(tmp_path).store_uri, dim=256)
    calls = store.llm_calls(stage="answer")
    assert calls.groupby("variant").size().to_dict() == dict.fromkeys(names, 4)


def test_the_drill_down_rows_of_a_result_set_are_its_variants(run) -> None:
    from memcore.eval.bench_data import rows_frame

    res, tmp = run
    rows = LanceStore(str(tmp / "store"), dim=256).results(res["run_id"], traces=False)
    frame = rows_frame(rows, "com[beta=0.8,max_len=4]")
    assert len(frame) == 4 and set(frame["system"]) == {"com[beta=0.8,max_len=4]"}
    assert len(rows_frame(rows, "com")) == 4  # the plain system's own rows only
