"""Home's turn table and Explore's item table show a preview of each long text (whole tables of a BEAM-size chat
were megabytes the browser had to draw), say so, and keep the whole text where it is read: Explore's selected item."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
sys.path.insert(0, str(ROOT))

from memcore.settings import Settings  # noqa: E402
from memcore.workbench import Workbench  # noqa: E402
from ui.explore_view import TEXT_PREVIEW  # noqa: E402

LONG = " ".join(f"Word{i} about the pottery project, step {i}." for i in range(120))  # ~4,700 characters


def _chat(path: Path) -> Path:
    rows = [{"conversation": "longchat", "session": 1, "speaker": "user", "text": "Short hello.", "date": "2024-05-01"},
            {"conversation": "longchat", "session": 1, "speaker": "assistant", "text": LONG, "date": "2024-05-01"},
            {"conversation": "longchat", "session": 1, "speaker": "user", "text": "Thanks, noted.", "date": "2024-05-01"}]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def test_long_texts_are_previewed_in_tables_and_whole_when_selected(app_env):
    wb = Workbench(Settings())
    conv = wb.load(_chat(app_env / "chat.jsonl"))[0]
    wb.ingest("naive_rag_session", conv)
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["conv"] = conv.id
    at.run()
    assert not at.exception, at.exception
    turns = next(d.value for d in at.dataframe if "speaker" in d.value.columns)
    assert list(turns["turn"]) == [t.turn_id for t in conv.turns]  # every turn, each one's text cut
    assert turns["text"].str.len().max() == 200 and turns["text"][1].endswith("…")
    assert turns["text"][1][:-1] == LONG[:199] and turns["text"][0] == "Short hello."
    assert any("cut here to its first 200 characters" in c.value for c in at.caption)

    at.switch_page("pages/explore.py").run()
    at.selectbox(key="ex_system").set_value("naive_rag_session").run()
    table = at.dataframe[0].value
    assert len(table) == 1 and table["text"][0].endswith("…") and len(table["text"][0]) == TEXT_PREVIEW
    assert any(f"texts cut to their first {TEXT_PREVIEW} characters" in c.value for c in at.caption)
    at.text_input(key="ex_query").set_value("step 119").run()  # search reads the whole text, past the preview
    assert len(at.dataframe[0].value) == 1
    at.text_input(key="ex_query").set_value("").run()
    at.session_state["ex_table"] = {"selection": {"rows": [0], "columns": []}}
    at.run()
    assert not at.exception, at.exception
    whole = [m.value for m in at.markdown if "Word119" in m.value]  # the selected item is shown whole
    assert whole and "Word0 about the pottery project" in whole[0]


def test_home_lists_the_first_turns_of_a_very_long_chat_and_says_so(app_env):
    import re

    rows = int(re.search(r"^TURN_ROWS = (\d+)", (ROOT / "pages" / "home.py").read_text(), re.M).group(1))  # a page
    # runs when imported: its constant is read from its source
    path = app_env / "long.jsonl"
    path.write_text("\n".join(json.dumps({"conversation": "verylong", "session": 1 + i // 500, "speaker": "user",
                                           "text": f"Turn {i}.", "date": "2024-05-01"}) for i in range(rows + 5)) + "\n")
    conv = Workbench(Settings()).load(path)[0]
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["conv"] = conv.id
    at.run()
    assert not at.exception, at.exception
    turns = next(d.value for d in at.dataframe if "speaker" in d.value.columns)
    assert list(turns["turn"]) == [t.turn_id for t in conv.turns[:rows]]
    assert any(f"The first {rows:,} of {rows + 5:,} turns are listed" in c.value for c in at.caption)
