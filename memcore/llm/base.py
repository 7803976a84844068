"""The provider protocol and the result types of LLM calls."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, TypedDict, Unpack, runtime_checkable

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
    # the response_format sent: "json_schema", "json_object+schema", "json_object", "text" ("" unknown)
    request_format: str = ""


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


class ChatOptions(TypedDict, total=False):
    """Keyword options of `Provider.chat`; `CHAT_DEFAULTS` holds their defaults."""

    json_mode: bool  # ask for a JSON object (dropped where the server rejects it)
    schema: dict[str, Any] | None  # the role's strict JSON schema, sent as the endpoint accepts it (structured.py)
    max_tokens: int
    temperature: float
    seed: int | None  # sampling seed, where the server supports one (None: not sent)
    logprobs: bool  # per generated token, where supported
    role: str  # the role being run (providers that compute outputs need it)
    inputs: dict[str, Any] | None  # that role's inputs


CHAT_DEFAULTS: ChatOptions = {"json_mode": False, "schema": None, "max_tokens": 512, "temperature": 0.0, "seed": None,
                              "logprobs": False, "role": "", "inputs": None}


def chat_options(opts: Mapping[str, Any]) -> ChatOptions:
    """`opts` over `CHAT_DEFAULTS`; TypeError on an unknown option, as a keyword-only signature would raise."""
    unknown = sorted(set(opts) - set(CHAT_DEFAULTS))
    if unknown:
        raise TypeError(f"chat() got unexpected keyword arguments: {', '.join(unknown)}")
    return {**CHAT_DEFAULTS, **opts}  # type: ignore[typeddict-item]


@dataclass(frozen=True)
class Capabilities:
    """What a provider is, said explicitly (never guessed from its methods)."""

    offline_rules: bool = False  # computes role outputs with the offline rules (`run_role`): no model, no request
    needs_embedder: bool = False  # its offline rules compute similarities: give it the runtime's embedder


CHAT_MODEL = Capabilities()  # a chat model behind an endpoint (the default of a provider that declares nothing)


def capabilities(provider: Any) -> Capabilities:
    """The provider's declared capabilities (`provider.capabilities`; a chat model's when it declares none)."""
    caps = getattr(provider, "capabilities", CHAT_MODEL)
    return caps if isinstance(caps, Capabilities) else CHAT_MODEL


@runtime_checkable
class Provider(Protocol):
    """Something that answers chat messages (a real model, or a scripted fake)."""

    name: str  # registry name: "openai", "offline", "fake", "local"
    model: str
    label: str  # shown wherever results appear, e.g. "offline engine"

    def chat(self, messages: list[dict[str, str]], **opts: Unpack[ChatOptions]) -> ChatResult:
        """Send messages, return the reply with token usage (options and defaults: ChatOptions)."""
        ...
