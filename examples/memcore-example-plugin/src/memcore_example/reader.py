"""recent_k's reader prompt family, "recent_k": one prompt for a context that is the latest turns of the
conversation, the focus turn first. Registered with memcore.llm.roles.readers when this module is imported;
RecentKSystem.reader_family names it, so config reader = "paper" picks it (and every system may pick it with
reader = "recent_k")."""

from __future__ import annotations

from memcore.llm.roles.readers import ReaderFamily, reader_role, register_family

ANSWER_RECENT = reader_role(
    "answer_recent_k",
    "You answer questions about a conversation from its latest turns. The first turn is the one most likely to "
    "hold the answer. Answer in a few words; if the turns do not say, answer 'No information available'.",
    "Latest turns:\n{context}\n\nQuestion: {question}\nShort answer:",
    0.0, "recent_k's reader: the latest turns, the focus turn first (example plugin)")

FAMILY = register_family(ReaderFamily("recent_k", pick=lambda source, category: ANSWER_RECENT, temperatures="0",
                                      source="example plugin (memcore-example-plugin): answer_recent_k"))
