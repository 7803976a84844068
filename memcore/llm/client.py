"""LLMClient: runs roles on a provider, with the call cache, JSON repair and the ledger."""

from __future__ import annotations

import json
import re
import time
from typing import Any

from pydantic import BaseModel, ValidationError

from memcore.errors import LLMError
from memcore.llm.base import ChatResult, RoleResult
from memcore.llm.cache import CallCache, call_key
from memcore.llm.ledger import CallRecord, UsageLedger
from memcore.llm.roles import Role, get_role
from memcore.tokens import count_messages, count_tokens

REPAIR_PROMPT = (
    "Your previous reply could not be used: {error}. Reply again with only one valid JSON "
    "object that matches the schema, and nothing else."
)


def extract_json(text: str) -> Any:
    """The first JSON object in a reply (tolerates code fences and prose around it)."""
    text = text.strip()
    fence = re.search(r"```(?:json)?\s*(.*?)```", text, re.S)
    if fence:
        text = fence.group(1).strip()
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    start = text.find("{")
    if start < 0:
        raise ValueError("no JSON object in the reply")
    obj, _ = json.JSONDecoder().raw_decode(text[start:])
    return obj


def parse_output(role: Role, text: str) -> BaseModel:
    """Validate a reply against the role's output model (free-text roles wrap it)."""
    if not role.json_output:
        return role.output(text=text.strip())
    return role.output.model_validate(extract_json(text))


class LLMClient:
    """Runs prompt roles for one (system, conversation) context on a provider.

    `bind(system=..., conv_id=...)` gives a client sharing provider, cache and ledger.
    """

    def __init__(
        self,
        provider: Any,
        ledger: UsageLedger | None = None,
        cache: CallCache | None = None,
        system: str = "",
        conv_id: str = "",
    ) -> None:
        self.provider = provider
        self.ledger = ledger if ledger is not None else UsageLedger()
        self.cache = cache
        self.system = system
        self.conv_id = conv_id
        self.step = 0  # set by the system during ingest, recorded with each call

    @property
    def label(self) -> str:
        return self.provider.label

    @property
    def is_offline(self) -> bool:
        return hasattr(self.provider, "run_role")

    def bind(self, system: str = "", conv_id: str = "") -> LLMClient:
        """A client for another context sharing this one's provider, cache and ledger."""
        return LLMClient(self.provider, self.ledger, self.cache, system or self.system, conv_id or self.conv_id)

    def run(self, role: str, inputs: dict[str, Any], *, stage: str, logprobs: bool = False) -> RoleResult:
        """Run one role; never raises for model failures: errors come back in the result."""
        r = get_role(role)
        if hasattr(self.provider, "run_role"):
            return self._run_offline(r, inputs, stage)
        messages = r.messages(inputs)
        result = RoleResult(role=role, output=_PENDING, provider=self.provider.label)
        try:
            chat = self._chat(r, messages, inputs, stage, logprobs)
            result.raw, result.logprobs = chat.text, chat.logprobs
            self._account(result, chat)
            try:
                result.output = parse_output(r, chat.text)
                return result
            except (ValueError, ValidationError) as e:
                err = _short(e)
            # one repair attempt
            repair = messages + [
                {"role": "assistant", "content": chat.text},
                {"role": "user", "content": REPAIR_PROMPT.format(error=err)},
            ]
            chat2 = self._chat(r, repair, inputs, stage, False, attempt=2)
            self._account(result, chat2)
            result.raw = chat2.text
            try:
                result.output = parse_output(r, chat2.text)
                result.notes.append(f"{role}: malformed JSON repaired ({err})")
            except (ValueError, ValidationError) as e2:
                result.ok = False
                result.error = f"{role}: unusable reply after one repair attempt ({_short(e2)}); used fallback"
        except LLMError as e:
            result.ok = False
            result.error = f"{role}: {e}"
        if result.output is _PENDING:
            result.output = r.default(inputs)
        return result

    def _chat(self, r: Role, messages: list, inputs: dict, stage: str, logprobs: bool,
              attempt: int = 1) -> ChatResult:
        key = None
        if self.cache is not None:
            key = call_key(p=self.provider.name, m=self.provider.model, msgs=messages, lp=logprobs,
                           json=r.json_output, max=r.max_tokens)
            hit = self.cache.get(key)
            if hit is not None:
                self._record(r.name, stage, hit, 0.0, cache_hit=True, attempt=attempt)
                return hit
        t0 = time.perf_counter()
        try:
            chat = self.provider.chat(messages, json_mode=r.json_output, max_tokens=r.max_tokens,
                                      temperature=0.0, logprobs=logprobs, role=r.name, inputs=inputs)
        except LLMError as e:
            self._record(r.name, stage, ChatResult(""), (time.perf_counter() - t0) * 1000, error=str(e), attempt=attempt)
            raise
        except Exception as e:  # provider bugs or unexpected transport errors: report, don't crash
            msg = f"{type(e).__name__}: {e}"
            self._record(r.name, stage, ChatResult(""), (time.perf_counter() - t0) * 1000, error=msg,
                         attempt=attempt)
            raise LLMError(msg) from e
        latency = (time.perf_counter() - t0) * 1000
        if key is not None:
            self.cache.put(key, chat)
        self._record(r.name, stage, chat, latency, attempt=attempt)
        return chat

    def _run_offline(self, r: Role, inputs: dict, stage: str) -> RoleResult:
        t0 = time.perf_counter()
        out = r.offline(inputs)
        latency = (time.perf_counter() - t0) * 1000
        text = out.model_dump_json() if r.json_output else getattr(out, "text", "")
        chat = ChatResult(text, count_messages(r.messages(inputs)), count_tokens(text), self.provider.model)
        self._record(r.name, stage, chat, latency)
        res = RoleResult(role=r.name, output=out, raw=text, provider=self.provider.label)
        self._account(res, chat)
        res.latency_ms = latency
        return res

    def _account(self, res: RoleResult, chat: ChatResult) -> None:
        res.prompt_tokens += chat.prompt_tokens
        res.completion_tokens += chat.completion_tokens
        res.calls += 1
        res.cached = res.cached or chat.cached

    def _record(self, role: str, stage: str, chat: ChatResult, latency: float,
                cache_hit: bool = False, error: str = "", attempt: int = 1) -> None:
        self.ledger.add(CallRecord(
            role=role, stage=stage, system=self.system, conv_id=self.conv_id,
            provider=self.provider.name, model=chat.model or self.provider.model,
            prompt_tokens=chat.prompt_tokens, completion_tokens=chat.completion_tokens,
            latency_ms=latency, cache_hit=cache_hit, ok=not error, error=error, step=self.step,
            attempt=attempt,
        ))


class _Pending(BaseModel):
    """Placeholder until a role call has an output."""


_PENDING = _Pending()


def _short(e: Exception) -> str:
    return str(e).replace("\n", " ")[:300]
