"""Every part a system package can have, provided by the example plugin from its own package and found by
memcore through its registries and the system class: field specs (`memcore systems`), an LLM role with its
own offline rule, a reader prompt family, a typed trace structure, mechanism statistics (eval results),
fidelity rows, ablation presets (variant names) and its view. Its fidelity rows are
checked with memcore's own check (tests/systems/test_fidelity.py; memcore's suite runs with installed plugins off)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.metadata import entry_points

import pytest
from memcore_example.offline import offline_focus
from memcore_example.structure import RecentKStructure

from memcore.embed import HashingEmbedder
from memcore.errors import LLMCallFailed
from memcore.eval.mechanism import labels, question_stats, summarize
from memcore.eval.report import row_trace
from memcore.llm.fake import FakeLLM
from memcore.llm.roles import get_role
from memcore.llm.roles.readers import family_names, reader_choices, reader_for
from memcore.settings import Settings
from memcore.store import LanceStore
from memcore.systems import get_system, make_config
from memcore.systems.fields import field_spec
from memcore.systems.variants import get_sweep, parse_variant, presets
from memcore.testing import contract_case, tiny_conversation
from memcore.viz.bundles import structure_sections
from memcore.workbench import Workbench

NAME = "recent_k"
SOURCE = "example plugin (memcore-example-plugin)"
if NAME not in {ep.name for ep in entry_points(group="memcore.systems")}:  # installed (loads in tests: conftest)
    pytest.fail("the example plugin is not installed: pip install --no-deps -e examples/memcore-example-plugin",
                pytrace=False)
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "MEMCORE_PLUGINS": "1"}  # plugins on


def cli(*args: str) -> subprocess.CompletedProcess:
    """`memcore ...` in a fresh process (the registries filled from the installed entry points there)."""
    return subprocess.run([sys.executable, "-m", "memcore.cli", *args], capture_output=True, text=True, env=ENV,
                          timeout=600)


def test_its_config_fields_have_specs_listed_by_memcore_systems() -> None:
    cls = get_system(NAME).config_class
    k, focus = field_spec(cls, "k"), field_spec(cls, "focus")
    assert (k.source, k.range, k.when, k.default) == (SOURCE, (1, 1_000_000), "construction", 6)  # an open bound gets memcore's integer cap
    assert (focus.source, focus.choices, focus.when, focus.default) == (SOURCE, (False, True), "query", True)
    with pytest.raises(ValueError, match=r"k must be in \[1, 1000000\], not 0 \(int, paper default 6\)"):
        make_config(NAME, k=0)
    out = cli("systems", "--field-help")
    assert out.returncode == 0, out.stderr
    block = out.stdout[out.stdout.index(f"{NAME} "):].splitlines()
    rows = {line.split()[0]: line for line in block[1:] if line.startswith("  ") and not line.startswith("    ")}
    assert rows["k"].split()[1:4] == ["6", "[1,", "1000000]"] and rows["k"].rstrip().endswith(f"construction  {SOURCE}")
    assert rows["focus"].split()[1:4] == ["true", "false|true", "query"] and rows["focus"].rstrip().endswith(SOURCE)
    assert "    how many of the latest turns the memory keeps" in block  # --field-help: the help under the field


def test_its_role_is_registered_and_its_offline_rule_runs_through_the_engine(tmp_path) -> None:
    role = get_role("recent_k_focus")
    assert role.offline_note and "recent_k" in role.tags
    items = [{"id": "D1:1", "text": "Ben: I like tea"}, {"id": "D1:2", "text": "Ana: the pottery class was fun"},
             {"id": "D1:3", "text": "Ben: great"}]
    assert offline_focus({"question": "How was the pottery class?", "items": items})["turn_id"] == "D1:2"
    assert offline_focus({"question": "What about rockets?", "items": items})["turn_id"] == "D1:3"  # the latest
    case = contract_case(NAME, tmp_path)
    system, _ = case.built()
    q = case.conv.questions[0]
    ans = system.answer(q)
    assert ans.usage["retrieval"].calls == 1  # the focus role, run by the offline engine through the role
    shown = [{"id": t.turn_ids[0], "text": t.text} for t in sorted(ans.trace.items, key=lambda t: t.turn_ids[0])]
    want = offline_focus({"question": q.text, "items": shown})["turn_id"]
    assert ans.trace.structure["focus"] == want == ans.trace.items[0].turn_ids[0]
    assert ans.trace.structure["focus_mode"] == "role"


def test_its_reader_family_picks_its_prompt_and_the_trace_names_it(tmp_path) -> None:
    assert NAME in family_names() and NAME in reader_choices()
    assert reader_for(NAME).role == "answer_recent_k" and reader_for(NAME).family == NAME
    assert reader_for("naive_rag", NAME).role == "answer_recent_k"  # any system may choose the family
    case = contract_case(NAME, tmp_path)
    system, _ = case.built()
    ans = system.answer(case.conv.questions[1])
    assert ans.trace.reader["role"] == "answer_recent_k" and ans.trace.reader["family"] == NAME
    assert ans.usage["answer"].calls == 1


def test_its_typed_structure_is_what_the_trace_stores(tmp_path) -> None:
    case = contract_case(NAME, tmp_path)
    system, _ = case.built()
    tr = system.retrieve(case.conv.questions[0])
    st = RecentKStructure.from_dict(tr.structure)
    assert st.to_dict() == tr.structure and st.k == 6 and len(st.window) == 6
    assert st.focus_rank == len(st.window) - st.window.index(st.focus)


def test_its_mechanism_statistics_read_its_structure() -> None:
    def structure(focus: str, best: str, mode: str = "role") -> dict:
        return RecentKStructure(k=3, window=["D1:1", "D1:2", "D1:3"], best=best, focus=focus,
                                focus_mode=mode).to_dict()

    rows = [{"conv_id": "c", "mechanism": question_stats(NAME, s)} for s in
            (structure("D1:3", "D1:3"), structure("D1:1", "D1:3"), structure("", "D1:2", "off"))]
    assert rows[0]["mechanism"] == {"window": 3, "focused": True, "focus_is_best": True, "focus_back": 1}
    out = summarize(NAME, rows)
    assert out == {"window_mean": 3.0, "focus_rate": 1.0, "focus_agrees_rate": 0.5, "focus_back_mean": 2.0,
                   "questions": 3}
    assert set(out) - {"questions"} <= set(labels(NAME))


def test_eval_results_hold_its_mechanism_block_and_rows(tmp_path) -> None:
    out, store = tmp_path / "res.json", tmp_path / "store"
    res = cli("eval", "--dataset", "demo", "--systems", NAME, "--limit", "3", "--store", str(store),
              "--embedder", "hashing", "--out", str(out))
    assert res.returncode == 0, res.stdout + res.stderr
    assert f"  {NAME}: window_mean 6.000" in res.stdout  # the CLI's mechanism lines
    results = json.loads(out.read_text())
    block = results["systems"][NAME]["mechanism"]
    assert block["questions"] == results["systems"][NAME]["overall"]["n"] == 3 and block["window_mean"] == 6.0
    stored = LanceStore(str(store)).results(results["run_id"], [NAME])
    assert len(stored) == 3
    for row in stored:  # each result row holds its own numbers, read from its own trace
        structure = row_trace(row)["structure"]
        assert row["mechanism"] == question_stats(NAME, structure)
        assert row_trace(row)["reader"]["role"] == "answer_recent_k"
    assert block["focus_rate"] == pytest.approx(
        sum(bool(row_trace(r)["structure"]["focus"]) for r in stored) / 3, abs=1e-4)


def test_its_fidelity_rows_name_its_defaults_and_roles() -> None:
    fid = get_system(NAME).fidelity
    assert fid is not None and fid.section == "recent_k (example plugin)"
    where = " ".join(r.where for r in fid.rows)
    assert "`recent_k.k` = 6" in where and "`recent_k_focus`" in where and "`answer_recent_k`" in where
    from tests.systems.test_fidelity import row_problems  # memcore's check of a system's rows

    problems, seen = row_problems(get_system(NAME))
    assert not problems and seen >= 1, problems


def test_its_presets_and_sweep_are_variant_names(tmp_path) -> None:
    assert [p.name for p in presets(NAME)] == ["no-focus", "short"]
    assert parse_variant(f"{NAME}:no-focus").config().focus is False
    assert parse_variant(f"{NAME}:short[focus=false]").config().k == 2
    assert get_sweep(NAME, "k").variants() == ["recent_k[k=2]", "recent_k[k=4]", "recent_k", "recent_k[k=8]",
                                               "recent_k[k=12]"]  # k = 6 is the default
    case = contract_case(NAME, tmp_path)
    case.built()
    tr = case.workbench.system(NAME, case.conv, focus=False).retrieve(case.conv.questions[0])
    assert tr.structure["focus_mode"] == "off" and tr.structure["focus"] == ""
    assert [i.turn_ids[0] for i in tr.items] == tr.structure["window"]  # conversation order, no focus turn
    assert question_stats(NAME, tr.structure)["focused"] is None


def test_its_view_draws_its_structure_and_the_focus(tmp_path) -> None:
    case = contract_case(NAME, tmp_path)
    system, _ = case.built()
    tr = system.retrieve(case.conv.questions[0])
    sections = dict(structure_sections(NAME, tr, {}))
    table = sections["Window turns"]
    assert list(table["focus"]).count("focus") == 1 and table.iloc[0]["turn"] == tr.structure["focus"]


def focus_run(tmp_path, reply: object, unusable: str = "fail"):
    """Build recent_k on the tiny conversation with the focus role's replies scripted; retrieve question 0."""
    fake = FakeLLM(by_role={"recent_k_focus": reply})
    wb = Workbench(Settings(store_uri=str(tmp_path / "s"), llm_provider="fake", embedder="hashing",
                            llm_unusable=unusable), embedder=HashingEmbedder(), provider=fake)
    conv = tiny_conversation()
    wb.ingest(NAME, conv)
    return fake, wb.system(NAME, conv).retrieve(conv.questions[0])


def test_the_focus_role_gets_the_window_and_its_answer_goes_first(tmp_path) -> None:
    fake, tr = focus_run(tmp_path, {"turn_id": "D9:9", "reason": "scripted"})
    window = tr.structure["window"]
    sent = fake.calls("recent_k_focus")[0].inputs
    assert [i["id"] for i in sent["items"]] == window and len(sent["turns"]) == len(window)
    assert tr.structure["focus"] == "" and any("not a turn of the window" in n for n in tr.notes)
    _, tr3 = focus_run(tmp_path / "c", {"turn_id": window[1], "reason": "scripted"})
    assert tr3.structure["focus"] == window[1] and tr3.items[0].turn_ids[0] == window[1]
    assert tr3.items[0].origin.startswith("focus turn")


def test_an_unusable_focus_reply_fails_or_is_named(tmp_path) -> None:
    with pytest.raises(LLMCallFailed, match="recent_k_focus"):
        focus_run(tmp_path, ["not json", "still not json"])
    _, tr = focus_run(tmp_path / "b", ["not json", "still not json"], unusable="fallback")
    assert tr.structure["focus_mode"] == "unusable" and tr.structure["focus"] == ""
    assert any("recent_k_focus" in e for e in tr.errors) and any("no focus turn" in n for n in tr.notes)
    assert [i.turn_ids[0] for i in tr.items] == tr.structure["window"]  # conversation order
