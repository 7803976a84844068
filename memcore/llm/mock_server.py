"""A tiny OpenAI-compatible HTTP server on 127.0.0.1 with scripted replies and faults (tests, demos).

Each POST to /v1/chat/completions is answered, in this order of precedence, by:
1. the outage schedule (`fail_requests(range(30, 90), status=500)`: requests 30..89, counted
   from 0 over all POSTs received, fail);
2. the reply queue (`enqueue(content, status, delay_s=, retry_after=, mode=)`, `hang()`);
3. the responder, if any (`OfflineResponder`: the offline engine's output for any memcore role);
4. otherwise "ok".
Status 200 returns a completion whose message content is the reply's content and whose usage
counts words; other statuses return an error body (with a Retry-After header when given).
Modes: "normal"; "hang" (never answer until the server shuts down); "truncated" (200 whose body
stops half-way); "invalid_body" (200 whose body is not JSON); "drop" (close without answering).
`delay_s` (per reply, plus the server-wide `delay_s`) is slept before answering.
Structured outputs: `formats` names the schema forms the server accepts ("json_schema", "json_object":
see memcore.llm.structured); a request carrying another form is refused with `reject_status` (400, like
OpenAI; 500 with a validation message, like llama-cpp-python's server). memcore's probe request (the
`memcore_probe` schema) is answered by the server itself, before and apart from all of the above: it is
kept in `probes`, not counted in `requests` or `received`, and the reply honours the schema unless
`honours_schema=False` (then it is "{}", as from a server that accepts the form but ignores it).
Handler threads are daemons and `__exit__` wakes hanging or sleeping handlers, so it returns promptly.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import deque
from collections.abc import Callable, Container
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar

from memcore.llm.offline_provider import OfflineEngine
from memcore.llm.simulated import offline_reply
from memcore.llm.structured import PROBE_REPLY, PROBE_SCHEMA, schema_of

MODES = ("normal", "hang", "truncated", "invalid_body", "drop")


@dataclass(frozen=True)
class Reply:
    """One scripted reply: content (message content, or the error message when status != 200),
    HTTP status, seconds to wait first, Retry-After seconds (sent with any status), and mode."""

    content: str = "ok"
    status: int = 200
    delay_s: float = 0.0
    retry_after: float | None = None
    mode: str = "normal"

    @property
    def is_fault(self) -> bool:
        """Whether serving this reply counts as a fault (an error status or an abnormal mode)."""
        return self.status != 200 or self.mode != "normal"


class MockOpenAIServer:
    """Run with `with MockOpenAIServer() as srv: ... srv.base_url ...`.

    `requests` holds every POST's JSON body; `received` and `faults` count requests received and
    faults served (thread-safe). `responder(request_json) -> content` answers when nothing is scripted.
    """

    def __init__(self, model: str = "mock-model", delay_s: float = 0.0,
                 responder: Callable[[dict[str, Any]], str] | None = None,
                 formats: tuple[str, ...] = ("json_schema", "json_object"), reject_status: int = 400,
                 honours_schema: bool = True, port: int = 0) -> None:
        self.model = model
        self.formats, self.reject_status, self.honours_schema = formats, reject_status, honours_schema
        self.probes: list[dict[str, Any]] = []  # the structured-outputs probe requests received
        self.delay_s = delay_s
        self.responder = responder
        self.replies: deque[Reply] = deque()
        self.requests: list[dict[str, Any]] = []
        self._outages: list[tuple[Container[int], Reply]] = []
        self._received = 0
        self._faults = 0
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._httpd = _QuietServer(("127.0.0.1", port), self._handler())
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL (ends in /v1)."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def received(self) -> int:
        """POST requests received so far."""
        with self._lock:
            return self._received

    @property
    def faults(self) -> int:
        """Faults served so far (error statuses, hangs, truncated / invalid bodies, drops)."""
        with self._lock:
            return self._faults

    def enqueue(self, content: str = "ok", status: int = 200, *, delay_s: float = 0.0,
                retry_after: float | None = None, mode: str = "normal") -> None:
        """Queue one reply (see the module docstring for the modes)."""
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; choose one of {MODES}")
        with self._lock:
            self.replies.append(Reply(content, status, delay_s, retry_after, mode))

    def hang(self, n: int = 1) -> None:
        """Queue `n` replies that never come (the connection stays open until shutdown)."""
        for _ in range(n):
            self.enqueue(mode="hang")

    def fail_requests(self, which: Container[int], status: int = 500, *, content: str = "scheduled outage",
                      retry_after: float | None = None, mode: str = "normal", delay_s: float = 0.0) -> None:
        """Make the requests whose 0-based POST number is in `which` (e.g. range(30, 90)) fail this way."""
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; choose one of {MODES}")
        with self._lock:
            self._outages.append((which, Reply(content, status, delay_s, retry_after, mode)))

    def __enter__(self) -> MockOpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._closing.set()  # wakes hanging and sleeping handlers
        if self._thread.is_alive():
            self._httpd.shutdown()
        self._httpd.server_close()

    def _format_reply(self, req: dict[str, Any]) -> Reply | None:
        """The reply to a probe or to a refused response_format form, else None (see the module docstring)."""
        rf = req.get("response_format") or {}
        form = rf.get("type") if rf.get("type") == "json_schema" or "schema" in rf else None
        probe = schema_of(req) == PROBE_SCHEMA
        if form is not None and form not in self.formats:
            reply = Reply(f"response_format type {form!r} is not supported", status=self.reject_status)
        elif probe:
            reply = Reply(json.dumps(PROBE_REPLY) if self.honours_schema else "{}")
        else:
            return None
        if probe:
            with self._lock:
                self.probes.append(req)
        return reply

    def _next_reply(self, req: dict[str, Any]) -> Reply:
        refused = self._format_reply(req)
        if refused is not None and schema_of(req) == PROBE_SCHEMA:
            return refused
        with self._lock:
            n = self._received
            self._received += 1
            self.requests.append(req)
            reply = next((r for which, r in self._outages if n in which), None) or refused
            if reply is None and self.replies:
                reply = self.replies.popleft()
        if reply is None:
            if self.responder is None:
                reply = Reply()
            else:
                try:
                    reply = Reply(self.responder(req))
                except Exception as e:
                    reply = Reply(f"mock responder failed: {type(e).__name__}: {e}", status=500)
        if reply.is_fault:
            with self._lock:
                self._faults += 1
        return reply

    def _completion(self, req: dict[str, Any], content: str) -> dict[str, Any]:
        prompt = sum(len(str(m.get("content", "")).split()) for m in req.get("messages", []))
        completion = len(content.split())
        choice: dict[str, Any] = {"index": 0, "finish_reason": "stop",
                                  "message": {"role": "assistant", "content": content}}
        if req.get("logprobs"):
            choice["logprobs"] = {"content": [
                {"token": w, "logprob": -0.5, "bytes": None, "top_logprobs": []} for w in content.split()]}
        return {
            "id": f"chatcmpl-{len(self.requests)}", "object": "chat.completion", "created": 0,
            "model": self.model, "choices": [choice],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        srv = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # quiet
                return

            def _send(self, status: int, body: dict, reply: Reply | None = None) -> None:
                data = json.dumps(body).encode()
                mode = reply.mode if reply else "normal"
                if mode == "invalid_body":
                    data = b'{"id": "chatcmpl-broken", "choices": [ this is not JSON'
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                if reply is not None and reply.retry_after is not None:
                    ra = reply.retry_after
                    self.send_header("Retry-After", str(int(ra)) if float(ra).is_integer() else str(ra))
                self.end_headers()
                self.wfile.write(data[: len(data) // 2] if mode == "truncated" else data)

            def do_GET(self) -> None:
                self._send(200, {"object": "list", "data": [{"id": srv.model, "object": "model"}]})

            def do_POST(self) -> None:
                n = int(self.headers.get("Content-Length", 0))
                req = json.loads(self.rfile.read(n) or b"{}")
                reply = srv._next_reply(req)
                if reply.mode == "hang":
                    srv._closing.wait()
                    return
                delay = srv.delay_s + reply.delay_s
                if delay > 0 and srv._closing.wait(delay):
                    return  # shutting down: drop the connection
                if reply.mode == "drop":
                    return
                if reply.status != 200:
                    self._send(reply.status, {"error": {"message": reply.content, "type": "server_error",
                                                        "code": reply.status}}, reply)
                    return
                self._send(200, srv._completion(req, reply.content), reply)

        return Handler


class _QuietServer(ThreadingHTTPServer):
    """Daemon handler threads; clients that gave up (timeouts) are not an error worth printing."""

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Ignore connection errors from clients that went away; print anything else."""
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def messages_key(messages: list[dict[str, Any]]) -> str:
    """sha256 of the canonical JSON of the messages' (role, content) pairs."""
    canon = [[m.get("role", ""), m.get("content", "")] for m in messages]
    return hashlib.sha256(json.dumps(canon, ensure_ascii=True, separators=(",", ":")).encode()).hexdigest()


class OfflineResponder:
    """Answers a chat request with the offline engine's output for the (role, inputs) that produced
    its messages, serialized as memcore's client parses it (JSON for json roles, text otherwise).

    The HTTP request carries only the messages, so calls are registered in-process first
    (`register`, or wrap the provider with `observe`). Unknown messages raise LookupError, which
    the server turns into a 500 naming the problem.
    """

    def __init__(self, embedder: Any = None) -> None:
        self.engine = OfflineEngine(embedder)  # rules computing similarities need the run's embedder
        self._table: dict[str, tuple[str, dict[str, Any]]] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            return len(self._table)

    def register(self, messages: list[dict[str, Any]], role: str, inputs: dict[str, Any]) -> None:
        """Remember that these messages are `role` run on `inputs`."""
        key = messages_key(messages)
        with self._lock:
            self._table[key] = (role, inputs)

    def __call__(self, request: dict[str, Any]) -> str:
        """The reply content for this chat request (its JSON body)."""
        key = messages_key(request.get("messages", []))
        with self._lock:
            entry = self._table.get(key)
        if entry is None:
            raise LookupError(f"no role call was registered for these messages (sha256 {key[:12]}): wrap the "
                              "provider with memcore.llm.mock_server.observe(provider, responder)")
        return offline_reply(*entry, self.engine)


P = TypeVar("P")


def observe(provider: P, responder: OfflineResponder) -> P:
    """Patch `provider.chat` (this instance only) to register (messages, role, inputs) with
    `responder` before each call that names a role; returns the same provider."""
    inner = provider.chat  # type: ignore[attr-defined]

    def chat(messages: list[dict[str, Any]], **opts: Any) -> Any:
        if opts.get("role") and opts.get("inputs") is not None:
            responder.register(messages, opts["role"], opts["inputs"])
        return inner(messages, **opts)

    provider.chat = chat  # type: ignore[attr-defined]
    return provider
