"""Evidence hits (issue 25 item 4): which gold turns a context holds is worked out once per (trace, gold) and
every view and diagnostic reads that one result."""

from __future__ import annotations

import memcore.eval.diagnostics as diag
from memcore.eval.answer_rows import answer_summary, export_row
from memcore.eval.diagnostics import evidence_hits, evidence_recall, locate_missed_evidence
from memcore.types import Answer, Candidate, Trace, TraceItem
from memcore.viz.evidence import evidence_table, missed_table

GOLD = ["D1:3", "D2:1; D1:1", "D9:9", "D1:3"]  # a malformed entry and a repeat, as datasets have them


def _trace() -> Trace:
    items = [TraceItem("episode-1", "episode", "e", 0.8, ["D1:1", "D1:2"]),
             TraceItem("D1:3", "turn", "t", 0.7, ["D1:3"]),
             TraceItem("episode-2", "episode", "e2", 0.6, ["D1:3", "D1:1"])]
    return Trace("recmem", "q?", items=items, stages=["pool"],
                 candidates=[Candidate("pool", "D2:1", 0.1, 9, False, ["D2:1"], "below k")])


def test_hits_positions_and_recall():
    h = evidence_hits(_trace(), GOLD)
    assert h.gold == ("D1:3", "D2:1", "D1:1", "D9:9")
    assert h.hit == ["D1:3", "D1:1"] and h.missed == ["D2:1", "D9:9"]
    assert h.first_item == {"D1:3": (2, "D1:3"), "D1:1": (1, "episode-1")}
    assert h.recall == 0.5 and evidence_recall(_trace(), GOLD) == 0.5
    assert evidence_recall(_trace().context_turn_ids(), GOLD) == 0.5  # the list form agrees
    assert evidence_hits(_trace(), []).recall is None


def test_every_view_reads_one_computation(monkeypatch):
    made = []

    class Counted(diag.EvidenceHits):
        def __init__(self, *a, **kw):
            made.append(a)
            super().__init__(*a, **kw)

    monkeypatch.setattr(diag, "EvidenceHits", Counted)
    tr = _trace()
    ans = Answer("a", tr)
    summary = answer_summary("recmem", ans, GOLD)
    row = export_row("recmem", ans, GOLD)
    table = evidence_table(evidence_hits(tr, GOLD))
    missed = missed_table(locate_missed_evidence(tr, GOLD))
    lost = locate_missed_evidence(tr, GOLD)
    assert evidence_recall(tr, GOLD) == 0.5
    assert len(made) == 1
    assert summary["evidence hits"] == "2/4" and summary["evidence recall"] == 0.5
    assert row["evidence hit"] == "D1:3, D1:1" and row["evidence missed"].startswith("D2:1 (dropped by a stage")
    assert list(table["result"]) == ["hit", "miss", "hit", "miss"]
    assert list(table["in item"]) == ["D1:3", "", "episode-1", ""]
    assert [m["turn_id"] for m in lost] == list(missed["turn"]) == ["D2:1", "D9:9"]
    evidence_hits(tr, ["D9:9"])  # another gold is another computation
    assert len(made) == 2


def test_hits_are_not_stored_or_exported():
    tr = _trace()
    before = tr.to_dict()
    evidence_hits(tr, GOLD)
    assert tr.to_dict() == before and "_evidence_hits" not in str(Trace.from_dict(before).to_dict())
