"""Replay's charts over every step stay the same element from step to step (issue 35 item 5: a step <= 0.5 s drawn):
a chart whose figure changed is re-sent and drawn anew in the browser, so the current step is a line drawn over the
chart (ui.step_line), not part of its figure."""

from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest

from tests.app.test_app_pages import build, errors, home_with_demo, texts

CHARTS = {"Layers over time": "rp_layers", "Construction cost": "rp_cost", "Events per step": "rp_events",
          "Timeline": "rp_timeline"}
VEGA = {"rp_layers": "Memory layers over time", "rp_cost": "Construction cost so far"}  # memcore.viz.vega


def _chart(at: AppTest, key: str):
    """The proto of the plotly chart keyed `key` (its id ends with the key)."""
    return next(e.proto for e in at.get("plotly_chart") if e.proto.id.endswith(f"-{key}"))


def _sent(at: AppTest, key: str) -> tuple:
    """What the page sends for the chart keyed `key`: a plotly chart's id and figure; for a Vega-Lite chart (drawn
    in a container keyed `key`; Streamlit names it by its content) its spec and datasets' bytes."""
    if key not in VEGA:
        chart = _chart(at, key)
        return chart.id, chart.spec
    [chart] = [e.proto for e in at.get("vega_lite_chart") if json.loads(e.proto.spec)["title"]["text"] == VEGA[key]]
    return chart.spec, tuple((d.name, d.data.data) for d in chart.datasets)


def _step_lines(at: AppTest) -> list[str]:
    return [e.proto.body for e in at.get("html") if "memcoreStepLines" in e.proto.body]


def test_a_step_keeps_each_chart_and_moves_only_its_step_line(app_env):
    at = home_with_demo()
    at.switch_page("pages/replay.py").run()
    at = build(at, ["com", "xmemory"], "replay_systems")
    for view, key in CHARTS.items():
        at.button_group(key="rp_view").set_value(view).run()
        seen = []
        for step in (30, 31):
            at.slider(key="replay_step").set_value(step).run()
            assert not errors(at), errors(at)
            sent = _sent(at, key)
            lines = _step_lines(at)
            assert len(lines) == 1 and f'const key = "{key}", step = {step}, domain = ' in lines[0], (view, lines)
            assert f"the current step ({step})" in texts(at).replace("The", "the")
            seen.append(sent)
        # the same figure (and element id): Streamlit sends it as a reference to the one the browser holds, which
        # keeps the chart it drew
        assert seen[0] == seen[1], view
        if key in VEGA:
            assert '"rule"' not in seen[0][0] and len(seen[0][1]) == 2, view  # no step in the spec: lines, hover
            assert 'domain = [0, ' in lines[0], view  # the step line is placed by the chart's x domain
        else:
            assert "30" not in {str(s.get("x0")) for s in _layout_shapes(seen[0][1])}, view


def _layout_shapes(spec: str) -> list[dict]:
    return json.loads(spec).get("layout", {}).get("shapes", [])


def test_a_filter_change_redraws_the_timeline_and_its_step_line(app_env):
    at = home_with_demo()
    at.switch_page("pages/replay.py").run()
    at = build(at, ["xmemory"], "replay_systems")
    at.button_group(key="rp_view").set_value("Timeline").run()
    at.slider(key="replay_step").set_value(20).run()
    before, line = _chart(at, "rp_timeline").spec, _step_lines(at)[0]
    kinds = at.button_group(key="rp_tl_kinds")
    at.button_group(key="rp_tl_kinds").set_value(list(kinds.value)[:1]).run()
    assert not errors(at), errors(at)
    assert _chart(at, "rp_timeline").spec != before
    # the same step, a new figure: the script differs (it names the figure), so it runs again and finds the new chart
    after = _step_lines(at)[0]
    assert after != line and 'const key = "rp_timeline", step = 20, domain = null;' in after


def test_a_click_on_the_timeline_jumps_and_counts_the_jump(monkeypatch):
    from ui import timeline_view

    state = {"rp_timeline": {"selection": {"points": [{"x": 40.2, "y": "xmemory · split"}]}}, "replay_step": 3}
    monkeypatch.setattr(timeline_view.st, "session_state", state)
    timeline_view._jump("replay_step", 90)
    assert (state["replay_step"], state[timeline_view.JUMPS]) == (40, 1)
    state["rp_timeline"] = {"selection": {"points": []}}  # a click that selected nothing: no jump
    timeline_view._jump("replay_step", 90)
    assert (state["replay_step"], state[timeline_view.JUMPS]) == (40, 1)


def test_a_jump_draws_the_strip_anew_once(app_env):
    """The strip is the same chart at every step, so its selection would stay and a click on the same tick later
    would not jump: after a jump (counted by timeline_view._jump) the strip is drawn anew, then kept again."""
    at = home_with_demo()
    at.switch_page("pages/replay.py").run()
    at = build(at, ["xmemory"], "replay_systems")
    at.button_group(key="rp_view").set_value("Timeline").run()
    at.slider(key="replay_step").set_value(5).run()
    before = _chart(at, "rp_timeline")
    at.session_state["_rp_tl_jumps"] = 1
    at.slider(key="replay_step").set_value(40).run()
    assert not errors(at), errors(at)
    jumped = _chart(at, "rp_timeline")
    assert jumped.id != before.id and json.loads(jumped.spec)["layout"]["meta"] == {"jumps": 1}
    at.slider(key="replay_step").set_value(41).run()
    assert _chart(at, "rp_timeline").id == jumped.id  # the steps after it keep it


def test_a_growth_step_does_not_ask_the_store_which_kinds_a_memory_holds(app_env, monkeypatch):
    """Growth's entity-neighbourhood part reads the kinds from the step's data (a store read per step before: ~70 ms
    at the BEAM 1M chat's size)."""
    from memcore.store.view import MemoryView

    at = home_with_demo()
    at.switch_page("pages/replay.py").run()
    at = build(at, ["xmemory", "memweaver"], "replay_systems")
    at.button_group(key="rp_view").set_value("Growth").run()
    reads = []
    real = MemoryView.kind_counts
    monkeypatch.setattr(MemoryView, "kind_counts", lambda self, *a, **k: reads.append(self.space) or real(self, *a, **k))
    for system in ("xmemory", "memweaver"):
        at.button_group(key="gr_system").set_value(system).run()
        at.slider(key="replay_step").set_value(40).run()
        assert not errors(at), errors(at)
    assert reads == []
    assert at.selectbox(key="gr_memweaver_ego") is not None  # MemWeaver's neighbourhood is still offered
