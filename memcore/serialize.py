"""JSON (de)serialisation of conversations, for the store and exports."""

from __future__ import annotations

import json
from dataclasses import asdict

from memcore.types import Conversation, Question, Turn


def conversation_to_json(conv: Conversation) -> str:
    """A conversation as a JSON string."""
    return json.dumps(asdict(conv), ensure_ascii=False)


def conversation_from_json(s: str) -> Conversation:
    """The inverse of conversation_to_json."""
    d = json.loads(s)
    d["turns"] = [Turn(**t) for t in d["turns"]]
    d["questions"] = [Question(**q) for q in d["questions"]]
    return Conversation(**d)
