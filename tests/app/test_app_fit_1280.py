"""Tables that fit a 1280 px page (issue 35's look at BEAM size: Explore's item table hid three of its six columns
behind horizontal scrolling)."""

from __future__ import annotations

import json

from tests.app.test_app_pages import build, errors, home_with_demo


def test_explores_item_table_shows_every_column_at_1280_px(app_env):
    at = home_with_demo()
    at.switch_page("pages/replay.py").run()
    build(at, ["naive_rag_session"], "replay_systems")
    at.switch_page("pages/explore.py").run()
    at.selectbox(key="ex_system").set_value("naive_rag_session").run()
    assert not errors(at), errors(at)
    table = next(d for d in at.dataframe if "version from" in d.value.columns)
    config = json.loads(table.proto.columns)
    widths = {c: config.get(c, {}).get("width") for c in table.value.columns}
    assert all(isinstance(w, int) for w in widths.values()), widths  # every column sized, none left to grow
    assert sum(widths.values()) + 40 <= 800, widths  # + the row-selection column: inside the ~800 px main area
    assert all(config[c].get("help") for c in table.value.columns)
