"""A scripted fake LLM for tests: queued replies, per-role replies, and a call history."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from memcore.errors import LLMError
from memcore.llm.base import Capabilities, ChatResult
from memcore.llm.offline_provider import OfflineEngine
from memcore.text.tokens import count_messages, count_tokens

Reply = str | dict | BaseModel | Exception | Callable[..., Any]


@dataclass
class FakeCall:
    """One call the fake received."""

    role: str
    messages: list[dict[str, str]]
    inputs: dict[str, Any]
    options: dict[str, Any] = field(default_factory=dict)  # sampling options sent: temperature, seed


class FakeLLM:
    """Replies from a script. Per-role queues win over the global queue; when both are
    empty the fake raises LLMError naming the role, unless the test asks for a fallback
    explicitly (`fallback="offline"`: the offline engine answers the unscripted call).

    A reply may be a string (sent as is, so malformed JSON can be scripted), a dict or
    pydantic model (sent as JSON), an Exception (raised), or a callable
    `f(role, inputs, messages)` returning any of those.
    """

    name = "fake"
    model = "fake"
    label = "fake (scripted test replies)"
    capabilities = Capabilities(needs_embedder=True)  # a chat provider; with fallback="offline" the engine needs it

    def __init__(
        self,
        replies: list[Reply] | None = None,
        by_role: dict[str, list[Reply] | Reply] | None = None,
        fallback: str | None = None,
        logprobs: list[float] | None = None,
    ) -> None:
        self.queue: deque[Reply] = deque(replies or [])
        self.by_role: dict[str, deque[Reply] | Reply] = {}
        for k, v in (by_role or {}).items():
            self.by_role[k] = deque(v) if isinstance(v, list) else v
        if fallback not in (None, "offline"):
            raise ValueError(f"FakeLLM fallback must be None (raise) or 'offline', not {fallback!r}")
        self.fallback = fallback
        self.fixed_logprobs = logprobs
        self.history: list[FakeCall] = []
        self.engine = OfflineEngine()

    def use_embedder(self, embedder: Any) -> None:
        """Give the offline engine that answers unscripted calls the runtime's embedder."""
        self.engine.use_embedder(embedder)

    def enqueue(self, *replies: Reply) -> None:
        """Add replies to the global queue."""
        self.queue.extend(replies)

    def calls(self, role: str | None = None) -> list[FakeCall]:
        """Calls received, optionally for one role."""
        return [c for c in self.history if role is None or c.role == role]

    def chat(self, messages: list[dict[str, str]], **kwargs: Any) -> ChatResult:
        """Return the next scripted reply for this role."""
        role = kwargs.get("role", "")
        inputs = kwargs.get("inputs") or {}
        self.history.append(FakeCall(role, messages, inputs, {k: kwargs.get(k) for k in ("temperature", "seed")}))
        reply = self._next(role)
        if reply is None:
            if self.fallback != "offline" or not role:
                raise LLMError(f"fake LLM has no scripted reply for role {role!r} (script it, or pass "
                               f"fallback=\"offline\" to let the offline engine answer unscripted calls)")
            reply = self.engine.run_role(role, inputs)
        if callable(reply) and not isinstance(reply, BaseModel):
            reply = reply(role, inputs, messages)
        if isinstance(reply, Exception):
            raise reply
        if isinstance(reply, BaseModel):
            text = reply.model_dump_json()
        elif isinstance(reply, dict):
            import json

            text = json.dumps(reply)
        else:
            text = str(reply)
        lps = self.fixed_logprobs if kwargs.get("logprobs") else None
        return ChatResult(text, count_messages(messages), count_tokens(text), self.model, lps)

    def _next(self, role: str) -> Reply | None:
        src = self.by_role.get(role)
        if isinstance(src, deque):
            if src:
                return src.popleft()
        elif src is not None:
            return src
        if self.queue:
            return self.queue.popleft()
        return None
