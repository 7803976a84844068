"""A tiny OpenAI-compatible HTTP server on 127.0.0.1 with scripted replies (tests, demos).

Each queued reply is (status, content) for /v1/chat/completions: status 200 returns a
completion whose message content is `content` and whose usage counts words; other
statuses return an error body. When the queue is empty it echoes "ok".
"""

from __future__ import annotations

import json
import threading
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class MockOpenAIServer:
    """Run with `with MockOpenAIServer() as srv: ... srv.base_url ...`."""

    def __init__(self, model: str = "mock-model") -> None:
        self.model = model
        self.replies: deque[tuple[int, str]] = deque()
        self.requests: list[dict[str, Any]] = []
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def enqueue(self, content: str, status: int = 200) -> None:
        """Queue one reply."""
        self.replies.append((status, content))

    def __enter__(self) -> MockOpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        srv = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # quiet
                return

            def _send(self, status: int, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802
                self._send(200, {"object": "list", "data": [{"id": srv.model, "object": "model"}]})

            def do_POST(self) -> None:  # noqa: N802
                n = int(self.headers.get("Content-Length", 0))
                req = json.loads(self.rfile.read(n) or b"{}")
                srv.requests.append(req)
                status, content = srv.replies.popleft() if srv.replies else (200, "ok")
                if status != 200:
                    self._send(status, {"error": {"message": content, "type": "server_error"}})
                    return
                prompt = sum(len(str(m.get("content", "")).split()) for m in req.get("messages", []))
                completion = len(content.split())
                choice: dict[str, Any] = {"index": 0, "finish_reason": "stop",
                                          "message": {"role": "assistant", "content": content}}
                if req.get("logprobs"):
                    choice["logprobs"] = {"content": [
                        {"token": w, "logprob": -0.5, "bytes": None, "top_logprobs": []} for w in content.split()]}
                self._send(200, {
                    "id": f"chatcmpl-{len(srv.requests)}", "object": "chat.completion", "created": 0,
                    "model": srv.model, "choices": [choice],
                    "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                              "total_tokens": prompt + completion},
                })

        return Handler
