"""The offline engine: every role answered by extractive, rule-based methods, no model.

The engine owns what its rules need: the role's inputs (exactly what a real model gets) and the
runtime's embedder, given explicitly (`use_embedder`, done by `make_client` when the workbench builds
its client); rules that compute similarities (`Role.offline_embedder`) embed the texts of their inputs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel

from memcore.llm.base import Capabilities, ChatResult
from memcore.llm.roles import get_role

OFFLINE_LABEL = "offline engine (rule-based, no LLM)"


class TextVectors:
    """An embedder's vectors kept per text for the offline rules, which embed the same turns again and again (a
    vector is a function of the text alone: memcore.embed); at most `limit` texts, then it starts afresh."""

    def __init__(self, embedder: Any, limit: int = 20000) -> None:
        self.inner, self.limit = embedder, limit
        self.name, self.dim = embedder.name, embedder.dim
        self._vecs: dict[str, np.ndarray] = {}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """The texts' vectors (n, dim); only unseen texts reach the embedder."""
        new = [t for t in dict.fromkeys(texts) if t not in self._vecs]
        if new:
            if len(self._vecs) + len(new) > self.limit:
                self._vecs = {}
            self._vecs.update(zip(new, self.inner.embed(new), strict=True))
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._vecs[t] for t in texts])


class OfflineEngine:
    """Deterministic provider: dispatches each role to its offline implementation."""

    name = "offline"
    model = "offline-engine"
    label = OFFLINE_LABEL
    capabilities = Capabilities(offline_rules=True, needs_embedder=True)

    def __init__(self, embedder: Any = None) -> None:
        self.embedder = embedder
        self._vectors = TextVectors(embedder) if embedder is not None else None

    def use_embedder(self, embedder: Any) -> None:
        """Give the engine the runtime's embedder (rules computing similarities use it)."""
        self.embedder = embedder
        self._vectors = TextVectors(embedder)

    def run_role(self, role: str, inputs: dict[str, Any]) -> BaseModel:
        """The role's output computed by its offline implementation."""
        return get_role(role).run_offline(inputs, self._vectors)

    def chat(self, messages: list[dict[str, str]], **kwargs: Any) -> ChatResult:
        """Free chat is not something the offline engine can do; roles are."""
        role = kwargs.get("role")
        inputs = kwargs.get("inputs")
        if not role or inputs is None:
            raise NotImplementedError("the offline engine answers roles only; call LLMClient.run(role, inputs)")
        out = self.run_role(role, inputs)
        return ChatResult(text=out.model_dump_json(), model=self.model)
