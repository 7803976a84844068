"""The settings panel on Ask (issue 26 item 2) with AppTest: every field with its paper default, valid values and
source; a change highlighted and the entry renamed to the canonical variant (picker and URL); construction
changes named as a new memory built only on a click; query-time changes answer from the built memory; reset to
paper defaults; a preset one click away; the variant's name on the answer card."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from memcore.settings import Settings
from memcore.systems import get_system
from memcore.systems.fields import field_specs, format_value
from memcore.systems.variants import presets, register_preset, unregister_preset
from memcore.workbench import Workbench
from tests.app.test_app_pages import APP, errors, home_with_demo, run_benchmark, texts
from ui import jobs

pytestmark = pytest.mark.usefixtures("app_env")  # temp store, hashing embedder, offline engine

KEY = "ask_systems"


def _open(at: AppTest, key: str, n: int = 1) -> AppTest:
    """Open the first n panels of picker `key`, as a click on their titles does (a closed panel draws no field)."""
    for i in range(n):
        at.session_state[f"{key}_panel{i}_open"] = True
    return at


def _ask_page(systems: list[str]) -> AppTest:
    at = home_with_demo()
    at.switch_page("pages/ask.py").run()
    _open(at, KEY, len(systems)).multiselect(key=KEY).set_value(systems).run()
    assert not errors(at), errors(at)
    return at


def _field(at: AppTest, system: str, name: str, i: int = 0):
    entry = at.multiselect(key=KEY).value[i]
    return at.text_input(key=f"{KEY}_f{i}_{entry}_{name}")


def _changed(at: AppTest) -> set[str]:
    """The fields the panel highlights as changed from the papers' defaults."""
    return {m.value.replace("\\", "").split("**")[1] for m in at.markdown if ":orange-badge[changed]" in m.value}


def _plain(at: AppTest) -> str:
    boxes = [b.value for kind in (at.info, at.warning, at.success) for b in kind]
    return "\n".join([texts(at), *boxes]).replace("\\", "")  # md_escape's backslashes


def test_every_field_shows_its_paper_default_valid_values_and_source():
    at = _ask_page(["com"])
    body = _plain(at)
    specs = field_specs(get_system("com").config_class)
    for spec in specs:
        said = "memcore default" if spec.source.startswith("memcore extension") else "paper default"
        assert f"{said} {format_value(spec.default)} · {spec.valid_short()} · {spec.source}" in body
    ours = [s for s in specs if s.source.startswith("memcore extension")]  # e.g. speaker_boost: no paper sets it
    assert ours and not any(f"paper default {format_value(s.default)} · {s.valid_short()} · {s.source}" in body
                            for s in ours)
    assert "Query time: answers from the memory already built" in body
    assert _changed(at) == set()


def test_a_closed_panel_draws_no_field_and_an_open_one_stays_open_through_an_edit():
    at = home_with_demo()
    at.switch_page("pages/ask.py").run()
    at.multiselect(key=KEY).set_value(["com[beta=0.8]", "xmemory"]).run()
    assert not errors(at), errors(at)
    titles = [e.label.replace("\\", "") for e in at.expander]
    assert "Settings · com[beta=0.8] · 1 changed from the papers' defaults" in titles and "Settings · xmemory" in titles
    assert not [t for t in at.text_input if t.key.startswith(f"{KEY}_f")]  # closed: no field drawn
    assert not [b for b in at.button if b.label == "Paper defaults"]
    _open(at, KEY).run()  # the first panel opened: its fields only
    drawn = {t.key for t in at.text_input if t.key.startswith(f"{KEY}_f")}
    assert drawn and all(k.startswith(f"{KEY}_f0_") for k in drawn)
    _field(at, "com", "beta").set_value("0.7").run()  # the edit renames the entry (and the title): still open
    assert at.multiselect(key=KEY).value == ["com[beta=0.7]", "xmemory"]
    assert _field(at, "com", "beta").value == "0.7"


def test_a_query_time_change_renames_the_entry_highlights_the_field_and_keeps_the_memory():
    at = _ask_page(["com"])
    _field(at, "com", "beta").set_value("0.80").run()
    assert not errors(at), errors(at)
    assert at.multiselect(key=KEY).value == ["com[beta=0.8]"]  # canonical: repr of the float
    assert at.query_params["systems"] == "com[beta=0.8]"  # the link carries it
    assert _changed(at) == {"beta"}
    assert "Query-time settings only: answers come from the memory of com" in _plain(at)
    # a value outside the field's range is refused in one line, the entry unchanged
    _field(at, "com", "beta").set_value("2").run()
    assert at.multiselect(key=KEY).value == ["com[beta=0.8]"]
    assert any("beta" in e.value and "paper default 0.5" in e.value.replace("\\", "") for e in at.error)
    # issue 37 minor 12: the field does not keep the refused value while the variant keeps the last valid one
    assert _field(at, "com", "beta").value == "0.8"
    said = [e.value.replace("\\", "") for e in at.error]
    assert any("'2' not applied" in e and "the field is back to 0.8" in e and "[0.0, 1.0]" in e for e in said), said
    assert not at.warning or not any("Session State API" in w.value for w in at.warning)
    # back to the paper default: the name drops it
    at = at.run()
    _field(at, "com", "beta").set_value("0.5").run()
    assert at.multiselect(key=KEY).value == ["com"]


@pytest.mark.plugins  # recent_k: the example plugin (installed in CI), a system with a construction field
def test_a_construction_change_needs_a_click_to_build_and_answers_under_its_name():
    at = _ask_page(["recent_k"])
    _field(at, "recent_k", "k").set_value("3").run()
    assert at.multiselect(key=KEY).value == ["recent_k[k=3]"]
    body = _plain(at)
    assert "Construction settings changed (k)" in body and "built only when you click Build" in body
    wb = Workbench(Settings())
    conv = wb.conversation("demo")
    assert not wb.is_ingested("recent_k", conv, k=3)  # nothing built without a click
    next(b for b in at.button if b.label == "Build").click().run()
    jobs.wait("ingest:demo", 180)
    at.run()
    assert wb.is_ingested("recent_k", conv, k=3) and not wb.is_ingested("recent_k", conv)
    at.selectbox(key="ask_q_pick").set_value("demo:q0").run()
    next(b for b in at.button if b.label == "Ask").click().run()
    assert not errors(at), errors(at)
    assert any(m.value.replace("\\", "").startswith("**recent_k[k=3]** · retriever **dense**") for m in at.markdown)
    assert "(built)" in _plain(at)
    # the export names the variant (its canonical name, not the bare system)
    at.switch_page("pages/export.py").run()
    assert any(o.startswith("Answer · recent_k[k=3] · dense retriever") for o in at.selectbox(key="exp_choice").options)
    # Replay offers the variant edited this session, with its panel and its own built memory
    _open(at.switch_page("pages/replay.py").run(), "replay_systems")
    at.multiselect(key="replay_systems").set_value(["recent_k[k=3]"]).run()
    assert not errors(at), errors(at)
    assert "Construction settings changed (k)" in _plain(at) and "(built)" in _plain(at)


def test_reset_and_presets_are_one_click_away():
    register_preset("com", "test-short", {"max_len": 2}, "test fixture", "chains of at most 2")
    try:
        at = _ask_page(["com"])
        names = [b.label for b in at.button]
        for p in presets("com"):
            assert p.name in names
        offered = at.multiselect(key=KEY).options  # every picker offers every registered preset
        assert {f"{p.system}:{p.name}" for p in presets()} <= set(offered)
        next(b for b in at.button if b.label == "test-short").click().run()
        assert at.multiselect(key=KEY).value == ["com:test-short"]
        assert _changed(at) == {"max_len"}
        _field(at, "com", "K").set_value("10").run()
        assert at.multiselect(key=KEY).value == ["com:test-short[K=10]"]
        next(b for b in at.button if b.label == "Paper defaults").click().run()
        assert at.multiselect(key=KEY).value == ["com"]
        assert _changed(at) == set()
    finally:
        unregister_preset("com", "test-short")


def test_a_link_opens_the_variant_and_a_bad_one_is_said():
    home_with_demo()
    at = AppTest.from_file(APP, default_timeout=120)
    at.switch_page("pages/ask.py")
    at.query_params["systems"] = "com[max_len=4,beta=0.80],com[betta=1]"
    at.run()
    assert at.multiselect(key=KEY).value == ["com[beta=0.8,max_len=4]"]
    assert any("betta" in w.value for w in at.warning)


def test_compare_a_system_with_its_query_time_variant_from_one_memory():
    at = home_with_demo()
    at.switch_page("pages/compare.py").run()
    _open(at, "cmp_systems", 2).multiselect(key="cmp_systems").set_value(["com", "com[max_len=2]"]).run()
    assert [b.label for b in at.button if b.label == "Build"] == ["Build", "Build"]  # one memory, both unbuilt
    next(b for b in at.button if b.label == "Build").click().run()
    jobs.wait("ingest:demo", 180)
    at.run()
    assert not any(b.label == "Build" for b in at.button)  # building com built the variant's memory too
    assert "Query-time settings only: answers come from the memory of com (built)" in _plain(at)
    at.selectbox(key="cmp_q_pick").set_value("demo:q0").run()
    next(b for b in at.button if b.label == "Compare").click().run()
    assert not errors(at), errors(at)
    heads = [m.value.replace("\\", "") for m in at.markdown if "· retriever **" in m.value]
    assert any(h.startswith("**com[max_len=2]**") for h in heads) and any(h.startswith("**com**") for h in heads)
    rows = {r["system"]: r for r in at.session_state["cmp_rows"]}
    assert rows["com[max_len=2]"]["context items"] < rows["com"]["context items"]  # the variant's settings acted


def test_text_from_data_is_escaped_and_the_panel_works_inside_benchmarks_form():
    register_preset("com", "md-test", {"K": 5}, "[Fig. 9](http://example.com)", "**bold** <b>tag</b>")
    try:
        at = home_with_demo()
        at.switch_page("pages/benchmark.py").run()
        at.multiselect(key="bm_run_systems").set_value(["com:md-test"]).run()
        at.toggle(key="bm_run_systems_panel0").set_value(True).run()  # inside the run form's expander: a toggle
        assert not errors(at), errors(at)
        button = next(b for b in at.button if b.label == "md-test")
        assert "\\*\\*bold\\*\\*" in button.help and "\\[Fig" in button.help  # Markdown syntax inert
        assert _changed(at) == {"K"}
        assert "A run builds it per conversation" not in _plain(at)  # K is query-time: no memory of its own
    finally:
        unregister_preset("com", "md-test")


def test_save_as_variant_keeps_it_in_the_store_for_every_picker():
    at = _ask_page(["com"])
    _field(at, "com", "beta").set_value("0.8").run()
    at.text_input(key=f"{KEY}_saveas0").set_value("fast").run()
    next(b for b in at.button if b.label == "Save as variant").click().run()
    assert not errors(at), errors(at)
    assert at.multiselect(key=KEY).value == ["@fast"]
    wb = Workbench(Settings())
    assert wb.saved_variants() == {"fast": "com[beta=0.8]"}
    assert "Variant: `com[beta=0.8]` (saved as `@fast`)" in _plain(at)
    at.switch_page("pages/compare.py").run()  # another page's picker offers it
    assert "@fast = com[beta=0.8]" in at.multiselect(key="cmp_systems").options  # labels: saved name = variant
    # answered under its canonical name, with the saved name beside it; the trace carries the canonical one
    at.switch_page("pages/ask.py").run()
    at.multiselect(key=KEY).set_value(["@fast"]).run()  # a page visit starts at the page's defaults again
    at.selectbox(key="ask_q_pick").set_value("demo:q0").run()
    next(b for b in at.button if b.label == "Build").click().run()
    jobs.wait("ingest:demo", 180)
    at.run()
    next(b for b in at.button if b.label == "Ask").click().run()
    assert not errors(at), errors(at)
    assert any(m.value.replace("\\", "").replace("\u2060", "").startswith("**com[beta=0.8] (@fast)** · retriever **dense**")
               for m in at.markdown)


@pytest.mark.plugins  # recent_k: the example plugin (installed in CI), a system with a construction field
def test_benchmark_runs_a_variant_edited_in_its_panel():
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page("pages/benchmark.py").run()
    at.multiselect(key="bm_run_systems").set_value(["recent_k"]).run()
    at.toggle(key="bm_run_systems_panel0").set_value(True).run()
    at.text_input(key="bm_run_systems_f0_recent_k_k").set_value("3").run()
    assert at.multiselect(key="bm_run_systems").value == ["recent_k[k=3]"]
    assert "A run builds it per conversation (Start run)" in _plain(at)
    run_benchmark(at, 2)
    assert "recent_k[k=3]" in set(at.dataframe[0].value["system"])  # the result set is keyed by the variant
