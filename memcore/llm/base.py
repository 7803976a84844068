"""The provider protocol and the result types of LLM calls."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel


@dataclass
class ChatResult:
    """One chat completion as returned by a provider."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model: str = ""
    logprobs: list[float] | None = None  # per generated token, when requested and supported
    cached: bool = False


@dataclass
class RoleResult:
    """The outcome of one role call: the parsed output (or the role's fallback) and its cost."""

    role: str
    output: BaseModel
    ok: bool = True
    error: str = ""
    raw: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    latency_ms: float = 0.0
    cached: bool = False
    logprobs: list[float] | None = None
    provider: str = ""
    notes: list[str] = field(default_factory=list)


@runtime_checkable
class Provider(Protocol):
    """Something that answers chat messages (a real model, or a scripted fake)."""

    name: str  # registry name: "openai", "offline", "fake", "local"
    model: str
    label: str  # shown wherever results appear, e.g. "offline engine"

    def chat(
        self,
        messages: list[dict[str, str]],
        *,
        json_mode: bool = False,
        max_tokens: int = 512,
        temperature: float = 0.0,
        logprobs: bool = False,
        role: str = "",
        inputs: dict[str, Any] | None = None,
    ) -> ChatResult:
        """Send messages, return the reply with token usage."""
        ...


class StructuredProvider(Protocol):
    """A provider that computes role outputs directly (the offline engine)."""

    name: str
    model: str
    label: str

    def run_role(self, role: str, inputs: dict[str, Any]) -> BaseModel:
        """Compute the role's output for these inputs without a model."""
        ...
