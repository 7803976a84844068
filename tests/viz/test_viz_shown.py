"""Numbers and codes as a person reads them: Benchmark tables rounded for display, missed-evidence codes in words."""

from __future__ import annotations

import pandas as pd

from memcore.viz.bench import rounded
from memcore.viz.evidence import STATUS_TEXT


def test_tables_are_rounded_for_display_and_text_is_left_alone():
    df = pd.DataFrame({"system": ["a", "b"], "n": [19, 20], "f1": [0.123456, 1.0],
                       "query_tokens_per_question": [894.7368, 12.0], "cost_usd": [None, 0.0012345]})
    out = rounded(df)
    assert list(out["f1"]) == [0.123, 1.0] and list(out["query_tokens_per_question"]) == [894.7, 12.0]
    assert list(out["system"]) == ["a", "b"] and list(out["n"]) == [19, 20]
    assert out["cost_usd"].iloc[1] == 0.00123 and pd.isna(out["cost_usd"].iloc[0])
    assert df["f1"].iloc[0] == 0.123456  # the table itself (exports) keeps every digit


def test_every_missed_evidence_status_has_words():
    assert set(STATUS_TEXT) == {"dropped", "not_in_pool", "not_in_context"}
    assert all("_" not in words for words in STATUS_TEXT.values())
