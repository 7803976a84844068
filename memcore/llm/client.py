"""LLMClient: runs roles on a provider, with the call cache, JSON repair, the scheduler and the ledger.

Failure semantics: a role call that fails for good (the endpoint fails after the scheduler's
retries, or the reply stays unusable after one JSON-repair attempt) raises `LLMCallFailed`. Its
output never becomes memory, an answer, an abstention or a score. The one named exception is
`unusable="fallback"` (setting `llm_unusable`): an unusable reply then yields what the role declares
for it (`Role.default`: its declared fallback, else an empty output), named in the result's error and the
ledger record ("fallback: <what was used>"), counted as degraded; a role whose output has required fields
and no declared fallback fails the call all the same. The offline rules never stand in for a model's reply.

Ledger order: a call's records are added to the ledger when its result is used (in the thread that
uses it), so the ledger of an ingest lists calls in program order whatever the concurrency.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from memcore.errors import LLMCallFailed, LLMError
from memcore.llm import fixes
from memcore.llm.ahead import Ahead, Stream, current_depth, set_depth
from memcore.llm.base import ChatResult, RoleResult, capabilities
from memcore.llm.cache import CallCache, call_key
from memcore.llm.ledger import PROBE_STAGE, CallRecord, UsageLedger, prompt_text
from memcore.llm.redact import redact
from memcore.llm.roles import Role, get_role
from memcore.llm.scheduler import CallScheduler
from memcore.llm.structured import PROBE_MESSAGES
from memcore.llm.windows import PromptDoesNotFit
from memcore.text.tokens import count_messages, count_tokens

T = TypeVar("T")

REPAIR_PROMPT = (
    "Your previous reply could not be used: {error}. Reply again with only one valid JSON "
    "object that matches the schema, and nothing else."
)

_EMPTY_LOCK = threading.Lock()



# Control characters (a raw newline) inside strings are accepted: grammar-constrained decoding (llama.cpp)
# lets a model write them, and they change no value.
_DECODER = json.JSONDecoder(strict=False)


def extract_json(text: str) -> Any:
    """The first JSON object in a reply (tolerates code fences and prose around it). The whole reply is tried
    first: a fence may sit inside one of the object's strings (a small model wrote "```python ...```" in a reason)."""
    text = text.strip()
    candidates = [text, *(m.strip() for m in re.findall(r"```(?:json)?\s*(.*?)```", text, re.S))]
    for candidate in candidates:
        try:
            return _DECODER.decode(candidate)
        except json.JSONDecodeError:
            pass
    error: json.JSONDecodeError | None = None
    for candidate in candidates:  # an object with prose after it
        start = candidate.find("{")
        if start >= 0:
            try:
                return _DECODER.raw_decode(candidate[start:])[0]
            except json.JSONDecodeError as e:
                error = error or e  # the whole reply's error is the one to report
    if error is not None:
        raise error
    raise ValueError("no JSON object in the reply")


CHARS_PER_TOKEN_BOUND = 16  # no token of a reply is longer: a field longer than max_tokens x this is no real reply


def field_bound(role: Role) -> int:
    """The most characters any text field of the role's output may hold: what its `max_tokens` reply could."""
    return max(role.max_tokens, 1) * CHARS_PER_TOKEN_BOUND


def _check_lengths(value: Any, bound: int, where: str) -> None:
    if isinstance(value, str):
        if len(value) > bound:
            raise ValueError(f"the reply's {where} holds {len(value):,} characters, more than the {bound:,} its "
                             "max_tokens allow (the call fails: nothing is truncated or stored)")
    elif isinstance(value, BaseModel):
        for name in type(value).model_fields:
            _check_lengths(getattr(value, name), bound, f"{where}.{name}" if where else name)
    elif isinstance(value, list | tuple):
        for i, v in enumerate(value):
            _check_lengths(v, bound, f"{where}[{i}]")
    elif isinstance(value, dict):
        for k, v in value.items():
            _check_lengths(v, bound, f"{where}[{k!r}]")


def parse_output(role: Role, text: str) -> BaseModel:
    """Validate a reply against the role's output model (free-text roles wrap it); ValueError when a text field
    is longer than the role's reply could be (field_bound): such a reply fails its call, never truncated."""
    out = role.output(text=text.strip()) if not role.json_output else role.output.model_validate(extract_json(text))
    _check_lengths(out, field_bound(role), "")
    return out


def is_empty(out: BaseModel) -> bool:
    """Whether every field of an output is empty (false, 0, "", [] or None)."""
    return not any(getattr(out, f) for f in type(out).model_fields)


def unusable_fix(request_format: str, fallback: bool = True) -> str:
    """What to change when a greedy (temperature 0) call's reply stays unusable: a rerun gets the same reply.
    `fallback`: whether the role has something `llm_unusable=fallback` could use (Role.default)."""
    fmt = f"this call sent response_format {request_format}" if request_format else "no response_format was sent"
    fix = (f". At temperature 0 a rerun gets the same reply ({fmt}). Fix: {fixes.LARGER_MODEL} or "
           "a schema-constrained request (MEMCORE_LLM_STRUCTURED=auto finds the form the endpoint honours)")
    if not fallback:
        return fix
    return fix.replace(" or a schema", ", a schema") + f", or {fixes.UNUSABLE_FALLBACK}"


class LLMClient:
    """Runs prompt roles for one (system, conversation) context on a provider.

    `bind(system=..., conv_id=...)` gives a client sharing provider, cache, ledger and scheduler.
    """

    def __init__(
        self,
        provider: Any,
        ledger: UsageLedger | None = None,
        cache: CallCache | None = None,
        system: str = "",
        conv_id: str = "",
        scheduler: CallScheduler | None = None,
        unusable: str = "fail",
        window: tuple[int | None, str] = (None, "unknown"),
    ) -> None:
        if unusable not in ("fail", "fallback"):
            raise ValueError(f"unusable must be 'fail' or 'fallback', not {unusable!r}")
        self.provider = provider
        self.ledger = ledger if ledger is not None else UsageLedger()
        self.cache = cache
        self.system = system
        self.conv_id = conv_id
        self.scheduler = scheduler if scheduler is not None else CallScheduler()
        self.unusable = unusable
        self.window, self.window_source = window  # the model's context window (memcore.llm.windows) and its source
        self.step = 0  # set by the system during ingest, recorded with each call
        self.degraded = 0  # calls answered with the role's fallback (unusable="fallback")
        self.empty = 0  # valid empty replies of roles that may return nothing (ledger outcome "empty")
        self._records: list[CallRecord] | None = None  # a detached client keeps its records here

    @property
    def label(self) -> str:
        return self.provider.label

    @property
    def is_offline(self) -> bool:
        """Whether the provider computes outputs with the offline rules (its declared capability)."""
        return capabilities(self.provider).offline_rules

    def options(self) -> list[str]:
        """The settings besides (provider, model) that change what is stored or scored, where they apply:
        "unusable=fallback" (llm_unusable) and "structured=<mode>" (llm_structured, chat providers that send
        schemas). Empty for the defaults of providers without either, so older identities stay valid."""
        out = ["unusable=fallback"] if self.unusable == "fallback" else []
        mode = getattr(self.provider, "structured", "")
        out += [f"structured={mode}"] if mode and not self.is_offline else []
        # a window set by hand changes what fits (and so what is built and answered); the table's does not join,
        # so identities made before windows stay valid
        return out + ([f"context_window={self.window}"] if self.window_source == "setting" else [])

    @property
    def identity(self) -> tuple[str, ...]:
        """(provider, model, *options()): what a memory space and an evaluation run are keyed by."""
        return (self.provider.name, self.provider.model, *self.options())

    def bind(self, system: str = "", conv_id: str = "") -> LLMClient:
        """A client for another context sharing this one's provider, cache, ledger and scheduler."""
        return LLMClient(self.provider, self.ledger, self.cache, system or self.system, conv_id or self.conv_id,
                         self.scheduler, self.unusable, (self.window, self.window_source))

    def _detached(self, step: int) -> LLMClient:
        c = self.bind()
        c.step = step
        c._records = []
        return c

    def book(self, records: list[CallRecord], depth: int = 0) -> None:
        """Add records made by work issued ahead when their result is used (and depend on them)."""
        self._book(records)
        set_depth(max(current_depth(), depth))

    def take_records(self) -> list[CallRecord]:
        """A detached client's records so far (emptied)."""
        recs, self._records = self._records or [], []
        return recs

    # ------------------------------------------------------------- running
    def ahead(self, fn: Callable[..., T], *args: Any, step: int | None = None, depth: int | None = None) -> Ahead:
        """Issue `fn(client, *args)` ahead of its use; it must make its calls through `client` and must
        not depend on anything decided after this point. With concurrency 1 (or the offline engine) it
        runs when its result is asked for, so results never depend on the concurrency."""
        return Ahead(self, fn, args, self.step if step is None else step, depth)

    def stream(self, gen_fn: Callable[..., Any], *args: Any, lookahead: int = 32, depth: int | None = None
               ) -> Stream:
        """Produce the items of `gen_fn(client, *args)` ahead of their use (see Stream)."""
        return Stream(self, gen_fn, args, lookahead, depth)

    def run_many(self, calls: list[tuple[str, dict[str, Any]]], *, stage: str) -> list[RoleResult]:
        """Independent role calls at once; results (and ledger records) in the order given."""
        aheads = [self.ahead(lambda c, r=r, i=i: c.run(r, i, stage=stage)) for r, i in calls]
        out, err = [], None
        for a in aheads:  # consume all, so every call is booked, then raise the first failure
            try:
                out.append(a.result())
            except LLMError as e:
                err = err or e
        if err is not None:
            raise err
        return out

    def run(self, role: str, inputs: dict[str, Any], *, stage: str, logprobs: bool = False,
            temperature: float | None = None, seed: int | None = None) -> RoleResult:
        """Run one role; raises LLMCallFailed when the call fails for good (see the module docstring).
        `temperature` overrides the role's own (Role.temperature); `seed` is sent where the server takes one."""
        r = get_role(role)
        recs: list[CallRecord] = []
        sampling = (r.temperature if temperature is None else float(temperature), seed)
        try:
            messages = r.messages(inputs)  # rendered once per call (a long context's render is not free)
            self.check_fits(r, messages, stage, recs)
            if self.is_offline:
                return self._run_offline(r, inputs, stage, recs, messages)
            return self._run_chat(r, inputs, stage, logprobs, recs, sampling, messages)
        finally:
            self._book(recs)

    def prompt_budget(self, r: Role) -> int | None:
        """Tokens a prompt of role `r` may take (the window less the role's reply budget); None: no window known."""
        return None if self.window is None else self.window - r.max_tokens

    def check_fits(self, r: Role, messages: list, stage: str, recs: list) -> None:
        """Raise PromptDoesNotFit (booked with outcome "does_not_fit", nothing sent) when the prompt and the role's
        reply budget exceed the context window (memcore.llm.windows)."""
        if self.window is None:
            return
        need = count_messages(messages) + r.max_tokens
        if need <= self.window:
            return
        err = PromptDoesNotFit(r.name, stage, need, self.window, self.provider.model, self.window_source)
        rec = self._record(r.name, stage, ChatResult(""), 0.0, error=str(err), prompt=prompt_text(messages))
        rec.outcome = "does_not_fit"
        recs.append(rec)
        raise err

    def _book(self, recs: list[CallRecord]) -> None:
        if self._records is not None:
            self._records.extend(recs)
        else:
            self.ledger.extend(recs)

    def _run_chat(self, r: Role, inputs: dict, stage: str, logprobs: bool, recs: list,
                  sampling: tuple[float, int | None] = (0.0, None), messages: list | None = None) -> RoleResult:
        messages = r.messages(inputs) if messages is None else messages
        result = RoleResult(role=r.name, output=_PENDING, provider=self.provider.label)
        try:
            chat, key = self._chat(r, messages, inputs, stage, logprobs, recs, sampling=sampling)
        except PromptDoesNotFit:
            raise
        except LLMError as e:
            raise LLMCallFailed(r.name, stage, str(e)) from e
        result.raw, result.logprobs = chat.text, chat.logprobs
        self._account(result, chat)
        try:
            result.output = self._parse(r, chat.text, recs[-1])
            self._cache_put(key, chat)
            return result
        except (ValueError, ValidationError) as e:
            err = _short(e)
            recs[-1].outcome = "malformed"
        repair = messages + [
            {"role": "assistant", "content": chat.text},
            {"role": "user", "content": REPAIR_PROMPT.format(error=err)},
        ]
        try:
            self.check_fits(r, repair, stage, recs)  # the repair turn carries the bad reply: it may not fit
            chat2, key2 = self._chat(r, repair, inputs, stage, False, recs, attempt=2, sampling=sampling)
        except PromptDoesNotFit:
            raise
        except LLMError as e:
            raise LLMCallFailed(r.name, stage, f"malformed reply ({err}), and the repair call failed: {e}") from e
        self._account(result, chat2)
        result.raw = chat2.text
        try:
            result.output = self._parse(r, chat2.text, recs[-1])
        except (ValueError, ValidationError) as e2:
            msg = f"unusable reply after one repair attempt ({_short(e2)})"
            recs[-1].ok, recs[-1].error, recs[-1].outcome = False, msg, "unusable"
            default = r.default(inputs) if self.unusable == "fallback" else None
            if default is None:
                greedy = sampling[0] == 0
                if self.unusable == "fallback":
                    msg += "; llm_unusable=fallback has nothing to use: the role declares no fallback and its output " \
                           "has required fields"
                fix = unusable_fix(chat2.request_format, self.unusable != "fallback" and r.can_fall_back()) \
                    if greedy else ""
                raise LLMCallFailed(r.name, stage, msg + fix, rerun_fixes=not greedy) from e2
            self.degraded += 1
            result.output, used = default
            recs[-1].outcome, recs[-1].error = "fallback", f"{msg}; fallback: used {used} (llm_unusable=fallback)"
            result.ok, result.error = False, f"{r.name}: {msg}; used {used} (llm_unusable=fallback)"
            return result
        self._cache_put(key, chat)
        self._cache_put(key2, chat2)
        if recs[-1].outcome == "ok":
            recs[-1].outcome = "repaired"
        result.notes.append(f"{r.name}: malformed JSON repaired ({err})")
        return result

    def _parse(self, r: Role, text: str, rec: CallRecord) -> BaseModel:
        """The reply's output; ValueError when it sets no field of the output model, or is empty where the
        role must return something. Sets the record's outcome ("ok" or "empty", counted in `self.empty`)."""
        out = parse_output(r, text)
        if r.json_output and type(out).model_fields and not out.model_fields_set:
            raise ValueError(f"the reply sets none of the fields {sorted(type(out).model_fields)}")
        if r.json_output and is_empty(out):
            if not r.may_be_empty:
                raise ValueError("the reply is empty, and this role must return something")
            rec.outcome = "empty"
            with _EMPTY_LOCK:
                self.empty += 1
            return out
        rec.outcome = "ok"
        return out

    def _chat(self, r: Role, messages: list, inputs: dict, stage: str, logprobs: bool, recs: list,
              attempt: int = 1, sampling: tuple[float, int | None] = (0.0, None)) -> tuple[ChatResult, str | None]:
        key = None
        temperature, seed = sampling
        schema = r.schema()
        structured = getattr(self.provider, "structured", "off") if schema is not None else "off"
        if self.cache is not None:
            # temperature and seed join the key only when not the defaults (0, None): older keys stay valid;
            # so does the structured mode (a reply asked for under a schema is another reply)
            extra = {**({"t": temperature} if temperature else {}), **({"seed": seed} if seed is not None else {}),
                     **({"fmt": structured} if structured != "off" else {})}
            key = call_key(p=self.provider.name, m=self.provider.model, msgs=messages, lp=logprobs,
                           json=r.json_output, max=r.max_tokens, **extra)
            hit = self.cache.get(key)
            if hit is not None:
                recs.append(self._record(r.name, stage, hit, 0.0, cache_hit=True, attempt=attempt,
                                         prompt=prompt_text(messages)))
                return hit, None
        tokens = count_messages(messages) + r.max_tokens
        t0 = time.perf_counter()
        try:
            chat = self.scheduler.call(lambda: self.provider.chat(
                messages, json_mode=r.json_output, schema=schema, max_tokens=r.max_tokens, temperature=temperature,
                seed=seed, logprobs=logprobs, role=r.name, inputs=inputs), tokens=tokens,
                priority=0 if stage == "construction" else 1)
        except LLMError as e:
            msg = redact(str(e))
            self._probe_records(r, stage, recs)
            recs.append(self._record(r.name, stage, ChatResult(""), _ms(t0), error=msg, attempt=attempt,
                                     prompt=prompt_text(messages)))
            raise LLMError(msg) from e
        except Exception as e:  # provider bugs or unexpected transport errors: report, don't crash
            msg = redact(f"{type(e).__name__}: {e}")
            recs.append(self._record(r.name, stage, ChatResult(""), _ms(t0), error=msg, attempt=attempt,
                                     prompt=prompt_text(messages)))
            raise LLMError(msg) from e
        self._probe_records(r, stage, recs)
        recs.append(self._record(r.name, stage, chat, _ms(t0), attempt=attempt, prompt=prompt_text(messages)))
        return chat, key

    def _probe_records(self, r: Role, stage: str, recs: list) -> None:
        """Ledger records of the structured-outputs probe this call triggered (mode auto, once per endpoint)."""
        take = getattr(self.provider, "take_probes", None)
        for p in take() if callable(take) else []:
            chat = ChatResult(p["text"], p["prompt_tokens"], p["completion_tokens"], self.provider.model,
                              request_format=p["form"])
            rec = self._record("structured_probe", PROBE_STAGE, chat, p["latency_ms"], prompt=prompt_text(PROBE_MESSAGES))
            rec.outcome, rec.error = p["outcome"], p.get("error", "")
            recs.append(rec)

    def _cache_put(self, key: str | None, chat: ChatResult) -> None:
        if key is not None and self.cache is not None:  # only replies that were usable are cached
            self.cache.put(key, chat)

    def _run_offline(self, r: Role, inputs: dict, stage: str, recs: list, messages: list | None = None) -> RoleResult:
        t0 = time.perf_counter()
        out = self.provider.run_role(r.name, inputs)  # through the engine, which owns the rules' cues
        latency = _ms(t0)
        text = out.model_dump_json() if r.json_output else getattr(out, "text", "")
        messages = r.messages(inputs) if messages is None else messages  # the rules never change their inputs
        chat = ChatResult(text, count_messages(messages), count_tokens(text), self.provider.model)
        recs.append(self._record(r.name, stage, chat, latency, prompt=prompt_text(messages)))
        recs[-1].outcome, recs[-1].request_format = "ok", "offline"
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
                cache_hit: bool = False, error: str = "", attempt: int = 1, prompt: str = "") -> CallRecord:
        depth = current_depth() + (0 if cache_hit else 1)
        set_depth(depth)
        return CallRecord(
            role=role, stage=stage, system=self.system, conv_id=self.conv_id,
            provider=self.provider.name, model=chat.model or self.provider.model,
            prompt_tokens=chat.prompt_tokens, completion_tokens=chat.completion_tokens,
            latency_ms=latency, cache_hit=cache_hit, ok=not error, error=error, step=self.step,
            attempt=attempt, prompt=prompt, completion=chat.text, depth=depth,
            request_format=chat.request_format, outcome="error" if error else "",
        )


class _Pending(BaseModel):
    """Placeholder until a role call has an output."""


_PENDING = _Pending()


def _short(e: Exception) -> str:
    return str(e).replace("\n", " ")[:300]


def _ms(t0: float) -> float:
    return (time.perf_counter() - t0) * 1000
