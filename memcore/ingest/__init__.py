"""Ingest: replay a conversation into a memory system, turn by turn (driver), with the context each turn gets
(context: the TurnContext a system sees, the adapter for systems written to the older protocol)."""

from memcore.ingest.driver import (
    EMBED_BATCH,
    EMBEDDING,
    FINISHING,
    IngestReport,
    ProgressFn,
    StageFn,
    ensure_turns,
    ingest_conversation,
)

__all__ = ["EMBEDDING", "EMBED_BATCH", "FINISHING", "IngestReport", "ProgressFn", "StageFn", "ensure_turns",
           "ingest_conversation"]
