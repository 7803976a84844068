"""Ingest reports progress in the units it processes (issue 23 item 6): the shared turn embedding per batch
before any turn, every turn, then the system's finishing step; the evaluator forwards them."""

from __future__ import annotations

from memcore.datasets import load_demo
from memcore.eval.evaluate import ingest_reporter
from memcore.ingest import EMBED_BATCH, EMBEDDING, FINISHING, ingest_conversation
from memcore.systems import get_system, make_config


def test_embedding_turns_are_reported_per_batch_then_each_turn_then_finishing(workbench):
    conv = load_demo()
    n = len(conv.turns)
    assert n > 2 * EMBED_BATCH  # several batches
    seen: list[tuple] = []
    sys_ = get_system("naive_rag")(workbench.runtime, conv, make_config("naive_rag"))
    ingest_conversation(sys_, workbench.store, workbench.ledger, progress=lambda d, t, ev: seen.append(("turn", d, t)),
                        stage=lambda s, d, t: seen.append((s, d, t)))
    embedded = [d for s, d, _ in seen if s == EMBEDDING]
    assert embedded == [*range(EMBED_BATCH, n, EMBED_BATCH), n]  # each batch as it is done, not once at the end
    first_turn = next(i for i, e in enumerate(seen) if e[0] == "turn")
    assert all(e[0] == EMBEDDING for e in seen[:first_turn])  # the embedding comes first and is reported
    assert [d for s, d, _ in seen if s == "turn"] == list(range(1, n + 1))
    assert seen[-2:] == [(FINISHING, 0, 1), (FINISHING, 1, 1)]
    # a second system of the same conversation finds the turns stored: nothing embedded again
    seen.clear()
    other = get_system("com")(workbench.runtime, conv, make_config("com"))
    ingest_conversation(other, workbench.store, workbench.ledger, progress=lambda d, t, ev: None, stage=lambda s, d, t: seen.append((s, d, t)))
    assert [s for s, _, _ in seen] == [FINISHING, FINISHING]


def test_the_evaluator_forwards_turn_progress_throttled_but_always_the_last(monkeypatch):
    import memcore.eval.evaluate as evaluate

    clock = iter([0.0, 0.1, 0.2, 0.7, 0.8, 0.9, 1.5])
    monkeypatch.setattr(evaluate.time, "monotonic", lambda: next(clock))
    got: list[dict] = []
    report = ingest_reporter(got.append, {"system": "s", "conv_id": "c"})
    for d in range(1, 8):
        report("ingest", d, 7)
    assert [m["turn"] for m in got] == [1, 4, 7]  # every 0.5 s, and the last turn
    assert got[0] == {"phase": "ingest", "system": "s", "conv_id": "c", "turn": 1, "turns": 7}
