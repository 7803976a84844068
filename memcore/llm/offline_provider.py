"""The offline engine: every role answered by extractive, rule-based methods, no model."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from memcore.llm.base import ChatResult
from memcore.llm.roles import get_role

OFFLINE_LABEL = "offline engine (rule-based, no LLM)"


class OfflineEngine:
    """Deterministic provider: dispatches each role to its offline implementation."""

    name = "offline"
    model = "offline-engine"
    label = OFFLINE_LABEL

    def run_role(self, role: str, inputs: dict[str, Any]) -> BaseModel:
        """The role's output computed by its offline implementation."""
        return get_role(role).offline(inputs)

    def chat(self, messages: list[dict[str, str]], **kwargs: Any) -> ChatResult:
        """Free chat is not something the offline engine can do; roles are."""
        role = kwargs.get("role")
        inputs = kwargs.get("inputs")
        if not role or inputs is None:
            raise NotImplementedError("the offline engine answers roles only; call LLMClient.run(role, inputs)")
        out = self.run_role(role, inputs)
        return ChatResult(text=out.model_dump_json(), model=self.model)
