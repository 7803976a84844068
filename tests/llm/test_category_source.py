"""category_source: readers that pick a prompt by question category read the gold label or a predicted one,
and every answer (and result row) names which."""

from __future__ import annotations

import dataclasses

import pytest

from memcore.embed import HashingEmbedder
from memcore.eval.report import build_row
from memcore.llm.roles.question_type import offline_question_type
from memcore.llm.roles.readers import TEMPORAL_HINT, reader_for
from memcore.settings import Settings
from memcore.systems import make_config
from memcore.workbench import Workbench


def test_reader_records_where_its_category_came_from() -> None:
    gold = reader_for("memweaver", "paper", "locomo", 2, category_source="gold")
    assert gold.role == "answer_memweaver_temporal" and gold.record()["category_source"] == "gold"
    # a predicted single-hop for a gold-temporal question: the default prompt, named as predicted
    pred = reader_for("memweaver", "paper", "locomo", 4, category_source="predicted")
    assert pred.role == "answer_memweaver" and pred.record()["category"] == 4
    assert pred.record()["category_source"] == "predicted"
    # readers that ignore the category say so, whatever the setting
    assert reader_for("naive_rag", "paper", "locomo", 2, category_source="gold").category_source == "none"
    assert reader_for("memcot", "paper", "longmemeval", 2).category_source == "none"
    assert reader_for("memcot", "paper", "locomo", 2).extra["hint"] == TEMPORAL_HINT


@pytest.mark.parametrize(("question", "category"), [
    ("When did Caroline go to the LGBTQ support group?", 2),
    ("How long has Caroline had her current group of friends for?", 2),
    ("What fields would Caroline be likely to pursue in her educaton?", 3),
    ("What did Caroline research?", 4),
    ("What is Caroline's identity?", 4),
])
def test_offline_question_type_rule(question: str, category: int) -> None:
    assert offline_question_type({"question": question}).category == category


def test_invalid_category_source_is_refused() -> None:
    with pytest.raises(ValueError, match="category_source must be one of gold, predicted"):
        make_config("memcot", category_source="oracle")


@pytest.mark.parametrize("source", ["gold", "predicted"])
def test_memcot_answer_and_row_name_the_category_source(tmp_path, tiny_conv, source) -> None:
    tiny_conv.source = "locomo"
    q = dataclasses.replace(tiny_conv.questions[1], category=2)  # "What class did Ben start?": gold says temporal
    wb = Workbench(Settings(store_uri=str(tmp_path / "s"), embedder="hashing"), embedder=HashingEmbedder())
    wb.ingest("memcot", tiny_conv)
    ans = wb.system("memcot", tiny_conv, category_source=source).answer(q)
    assert ans.trace.reader["category_source"] == source
    assert ans.trace.reader["category"] == (2 if source == "gold" else 4)  # the rule reads no temporal cue
    assert ("question_type" in ans.usage) == (source == "predicted")  # the prediction is one call, booked
    assert build_row(q, ans, {"system": "memcot"})["category_source"] == source
