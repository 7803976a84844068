"""Real-provider runs under faults: an xMemory ingest, `memcore ask` and `memcore eval` through the openai
provider against the mock OpenAI server (memcore/llm/mock_server.py), with the offline engine's replies.

- transient faults (5xx, 429 + Retry-After, unreadable bodies, a dropped connection, a read timeout, a
  malformed reply the JSON repair fixes, a slow reply) are retried: the memory equals a clean run's;
- an outage stops the ingest at the last checkpoint (nothing after it is kept) with a message naming the
  fix; the rerun completes and equals a clean run (no lost facts, no verbatim episodes, no duplicates);
- a dead or never-answering endpoint fails in seconds and nothing is scored;
- a failed answer/judge call leaves its question out (no row, no score); a resumed run fills exactly it;
- credentials in the base URL and the key never reach the terminal, the store or the results.

What "equal to a clean run" compares: events (every field), every stored item version (kind, id, text,
turn ids, sources, metadata, valid_from / valid_to), provenance links and the checkpoint. The clean run
goes through its own mock server: the events' `engine` label ("mock-model via http://127.0.0.1:<port>/v1")
names that server's port, so the endpoint in it is normalised before comparing. The offline provider
is not the reference: its label differs altogether (and so does its memory space).
CLI runs go through the real entry point: `memcore.cli.main()` in this process (argv, environment and file
descriptors 1/2 captured: the exit codes and lines a shell sees) and, for the two failing ingests,
`python -m memcore.cli` in a new process (kept to two: each costs ~5 s of imports on a busy machine). Their
provider is not observed: the shared responder already knows their messages from in-process runs of the
same work (the clean ingest; the ask and eval warm-up), so an unexpected message would be a 500.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from memcore.datasets import load_demo
from memcore.embed import HashingEmbedder
from memcore.errors import LLMCallFailed, LLMError
from memcore.eval.cost import construction_usage
from memcore.eval.report import diff_results
from memcore.eval.runner import run_eval
from memcore.eval.runs import load_rows
from memcore.llm import make_provider
from memcore.llm.mock_server import MockOpenAIServer, OfflineResponder, messages_key, observe
from memcore.llm.roles.readers import reader_for
from memcore.llm.scheduler import CallScheduler, SchedulerConfig
from memcore.settings import Settings
from memcore.store.schema import INF_STEP
from memcore.types import Conversation
from memcore.workbench import Workbench

pytestmark = pytest.mark.slow  # ~60 s in all: xMemory ingests over HTTP, two `python -m memcore.cli` processes

MODEL = "mock-model"
KEY = "sk-test-faults-0123456789"
SYSTEM = "xmemory"
ANSWER = reader_for(SYSTEM).role  # the reader role xMemory answers with (its paper's prompt, roles/readers.py)
ENDPOINT = re.compile(r"http://(?:[^/@\s]+@)?127\.0\.0\.1:\d+/v1")


# ------------------------------------------------------------------ helpers
class Responder(OfflineResponder):
    """The offline responder, also telling which role call (role, inputs) a request body is."""

    def __init__(self) -> None:
        super().__init__(HashingEmbedder())  # the benches' embedder: rules computing cosines use it
        self.calls: dict[str, tuple[str, dict]] = {}

    def register(self, messages: list[dict[str, Any]], role: str, inputs: dict[str, Any]) -> None:
        super().register(messages, role, inputs)
        self.calls[messages_key(messages)] = (role, inputs)

    def role_of(self, req: dict[str, Any]) -> tuple[str, dict]:
        """(role, inputs) of a chat request, ("", {}) when unknown."""
        return self.calls.get(messages_key(req.get("messages", [])), ("", {}))


class Delayed:
    """A responder that answers its n-th request (counted from 0) only after `delays[n]` seconds."""

    def __init__(self, inner: Callable[[dict], str], delays: dict[int, float]) -> None:
        self.inner, self.delays, self.n = inner, delays, 0
        self.lock = threading.Lock()

    def __call__(self, req: dict[str, Any]) -> str:
        with self.lock:
            n, self.n = self.n, self.n + 1
        time.sleep(self.delays.get(n, 0.0))
        return self.inner(req)


class When:
    """An outage schedule for `MockOpenAIServer.fail_requests`: the requests (number, JSON body) that match
    `pred`, while `on` (switch it off to make the endpoint healthy again without a new port)."""

    def __init__(self, srv: MockOpenAIServer, pred: Callable[[int, dict], bool]) -> None:
        self.srv, self.pred, self.on = srv, pred, True
        self.hits = 0

    def __contains__(self, n: object) -> bool:
        if not (self.on and isinstance(n, int) and self.pred(n, self.srv.requests[n])):
            return False
        self.hits += 1
        return True


def question_of(responder: Responder, req: dict) -> tuple[str, str]:
    """(role, question text) of a request ("" when it has no question)."""
    role, inputs = responder.role_of(req)
    return role, str(inputs.get("question", ""))


def bench(path: Path, url: str, responder: Responder, *, key: str = KEY, timeout_s: float = 5.0,
          retries: int = 3, concurrency: int = 4, **settings: Any) -> Workbench:
    """A workbench on its own store using the openai provider at `url` (observed by `responder`), with a
    fast scheduler (10 ms first backoff, no circuit breaker) so retries cost milliseconds."""
    s = Settings(store_uri=str(path), embedder="hashing", llm_provider="openai", llm_model=MODEL,
                 openai_base_url=url, openai_api_key=key, llm_timeout_s=timeout_s, llm_retries=retries,
                 llm_concurrency=concurrency, **settings)
    wb = Workbench(s, provider=observe(make_provider(s), responder), embedder=HashingEmbedder())
    # before any system exists: systems bind wb.llm and share its scheduler object
    wb.llm.scheduler = CallScheduler(SchedulerConfig(concurrency=concurrency, retries=retries, deadline_s=60,
                                                     backoff_s=0.01, breaker=0))
    return wb


def normalise(text: str) -> str:
    """The text with the mock endpoint's URL (its port changes from server to server) replaced."""
    return ENDPOINT.sub("<endpoint>", text)


def snapshot(store: Any, space: str, conv_id: str) -> dict[str, Any]:
    """What an ingest leaves in the store: events, every item version, links, the checkpoint."""
    events = [(e.step, e.kind, e.item_kind, tuple(e.item_ids), e.turn_id, e.reason,
               normalise(json.dumps(e.data, sort_keys=True, default=str))) for e in store.events(space, conv_id)]
    versions = []
    for name in sorted(n for n in store.table_names() if n.startswith("mem_")):
        for r in store.rows(name, space=space, conv_id=conv_id).to_dict("records"):
            versions.append((r["kind"], r["id"], int(r["valid_from"]), int(r["valid_to"]), r["text"],
                             tuple(r["turn_ids"]), tuple(r["sources"]), r["metadata"]))
    links = sorted((r["item_id"], r["source_id"], int(r["step"]))
                   for r in store.rows("links", space=space, conv_id=conv_id).to_dict("records")) \
        if "links" in store.table_names() else []
    ck = {k: v for k, v in (store.checkpoint(space, conv_id) or {}).items() if k != "updated"}  # when, not what
    return {"events": events, "versions": sorted(versions), "links": links, "checkpoint": ck}


def current(snap: dict[str, Any], kind: str) -> list[tuple]:
    """(id, text, turn ids) of the current items of a kind."""
    return sorted(v[1:2] + v[4:6] for v in snap["versions"] if v[0] == kind and v[3] == INF_STEP)


def verbatim_episodes(snap: dict[str, Any], conv: Conversation) -> list[str]:
    """Episodes holding raw turn text (the old fallback when the summary call failed)."""
    by_id = {t.turn_id: t for t in conv.turns}
    out = []
    for kind, iid, _, _, text, turn_ids, _, meta in snap["versions"]:
        raw = "\n".join(f"{by_id[t].speaker}: {by_id[t].content}" for t in turn_ids if t in by_id)
        if kind == "episode" and (text == raw or "(unsummarised)" in meta):
            out.append(iid)
    return out


def assert_same_memory(got: dict[str, Any], want: dict[str, Any]) -> None:
    """Equal snapshots, with the first difference named."""
    for part in ("events", "versions", "links"):
        g, w = got[part], want[part]
        first = next((i for i, (a, b) in enumerate(zip(g, w, strict=False)) if a != b), None)
        assert g == w, f"{part}: {len(g)} vs {len(w)}; first difference at {first}: " \
                       f"{first is not None and (g[first], w[first])}"
    assert got["checkpoint"] == want["checkpoint"]


def construction_calls(wb: Workbench) -> tuple[dict, Counter]:
    """The construction usage an eval reports for the ingest, and the stored ledger rows as (role, step, ok)."""
    wb.ledger.flush()
    usage = construction_usage(wb.store, SYSTEM, ["demo"], "openai", MODEL)
    usage.pop("latencies_ms")
    df = wb.store.llm_calls(system=SYSTEM, stage="construction")
    return usage, Counter(zip(df["role"], df["step"], df["ok"], strict=True))


def free_port() -> int:
    """A port nobody listens on (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class SilentServer:
    """Accepts TCP connections and never answers (a hung server); `with SilentServer() as port: ...`."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.conns: list[socket.socket] = []
        self.closing = threading.Event()

    def _accept(self) -> None:
        while not self.closing.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(conn)  # kept open, never read from nor written to

    def __enter__(self) -> int:
        threading.Thread(target=self._accept, daemon=True).start()
        return self.sock.getsockname()[1]

    def __exit__(self, *exc: object) -> None:
        self.closing.set()
        self.sock.close()
        for c in self.conns:
            c.close()


def cli_env(store: Path, url: str, key: str = KEY, **extra: str) -> dict[str, str]:
    """The environment of a `memcore` run against `url` (no other MEMCORE_ / OPENAI_ variable)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMCORE_", "OPENAI_"))}
    env.update(HF_HUB_OFFLINE="1", MEMCORE_LLM_PROVIDER="openai", MEMCORE_EMBEDDER="hashing", MEMCORE_LLM_MODEL=MODEL,
               MEMCORE_STORE=str(store), OPENAI_BASE_URL=url, OPENAI_API_KEY=key, MEMCORE_LLM_TIMEOUT="5")
    env.update(extra)
    return env


def cli_process(*args: str, cwd: Path, store: Path, url: str, key: str = KEY, **extra: str) -> CliResult:
    """`python -m memcore.cli ...` in a new process (each costs ~5 s of imports on a busy 2-core machine)."""
    t0 = time.monotonic()
    res = subprocess.run([sys.executable, "-m", "memcore.cli", *args], cwd=cwd, env=cli_env(store, url, key, **extra),
                         capture_output=True, text=True, timeout=180)
    return CliResult(res.returncode, res.stdout, res.stderr, time.monotonic() - t0)


@dataclass
class CliResult:
    code: int
    stdout: str
    stderr: str
    seconds: float


@pytest.fixture
def cli(monkeypatch, capfd, tmp_path) -> Callable[..., CliResult]:
    """Run the real entry point `memcore.cli.main()` in this process (argv, environment and file descriptors
    1 and 2 captured): the exit code is main()'s, errors print as "error: ..." exactly as from a shell."""
    from memcore.cli import main

    def run(*args: str, store: Path, url: str, key: str = KEY, **extra: str) -> CliResult:
        for k in [k for k in os.environ if k.startswith(("MEMCORE_", "OPENAI_"))]:
            monkeypatch.delenv(k)
        for k, v in cli_env(store, url, key, **extra).items():
            if k.startswith(("MEMCORE_", "OPENAI_")):
                monkeypatch.setenv(k, v)
        monkeypatch.setattr(sys, "argv", ["memcore", *args])
        monkeypatch.chdir(tmp_path)
        capfd.readouterr()
        t0 = time.monotonic()
        try:
            main()
            code = 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        seconds = time.monotonic() - t0
        out, err = capfd.readouterr()
        return CliResult(code, out, err, seconds)

    return run


def error_lines(res: CliResult) -> list[str]:
    return [ln for ln in res.stderr.splitlines() if ln.startswith("error: ")]


# ------------------------------------------------------------------ fixtures
@pytest.fixture(scope="module")
def conv() -> Conversation:
    return load_demo()


@pytest.fixture(scope="module")
def responder() -> Responder:
    """One responder for the module: the calls registered by in-process runs let CLI processes be answered."""
    return Responder()


@pytest.fixture(scope="module")
def clean(tmp_path_factory, conv, responder) -> dict[str, Any]:
    """An xMemory ingest of the demo through a healthy mock server: the reference memory."""
    path = tmp_path_factory.mktemp("clean")
    with MockOpenAIServer(responder=responder) as srv:
        wb = bench(path, srv.base_url, responder)
        rep = wb.ingest(SYSTEM, conv)
        assert rep.complete and not rep.error and srv.faults == 0, rep
        calls = srv.received
    snap = snapshot(wb.store, rep.space, conv.id)
    assert snap["checkpoint"]["done"] and current(snap, "semantic") and not verbatim_episodes(snap, conv)
    return {"path": path, "space": rep.space, "snap": snap, "calls": calls, "counts": rep.counts}


class FirstJsonRequest:
    """A `which` for MockOpenAIServer.fail_requests: the first request numbered >= start that asks for a JSON
    object (the server appends each request before asking `n in which`)."""

    def __init__(self, srv: MockOpenAIServer, start: int) -> None:
        self.srv, self.start, self.hit = srv, start, None

    def __contains__(self, n: object) -> bool:
        if self.hit is None and isinstance(n, int) and n >= self.start:
            fmt = self.srv.requests[n].get("response_format") or {}
            if isinstance(fmt, dict) and fmt.get("type") in ("json_object", "json_schema"):
                self.hit = n
        return n == self.hit


@pytest.fixture
def server(responder) -> Iterator[MockOpenAIServer]:
    with MockOpenAIServer(responder=responder) as srv:
        yield srv


# ------------------------------------------------------------------ 1. transient faults
def test_transient_faults_are_retried_and_the_memory_equals_a_clean_run(tmp_path, conv, responder, clean):
    faults = Delayed(responder, {60: 0.6})  # one slow reply, well under the 1.5 s read timeout
    with MockOpenAIServer(responder=faults) as srv:
        srv.fail_requests({3, 4}, status=500)
        srv.fail_requests({12}, status=429, retry_after=0.2, content="slow down")
        # repaired once: the first JSON-mode request from #20 on (free-text roles such as xMemory's theme
        # summary would take any text as their reply, so the run-ahead order must not pick one of them)
        srv.fail_requests(FirstJsonRequest(srv, 20), status=200, content='{"episodes": [ this is not JSON')
        srv.fail_requests({28}, mode="invalid_body", status=200)
        srv.fail_requests({36}, mode="truncated", status=200)
        srv.fail_requests({44}, mode="drop", status=200)
        srv.fail_requests({52}, status=503, retry_after=0.1)
        srv.fail_requests({70}, mode="hang", status=200)  # read timeout, then retried
        wb = bench(tmp_path, srv.base_url, responder, timeout_s=1.5)
        t0 = time.monotonic()
        rep = wb.ingest(SYSTEM, conv)
        seconds = time.monotonic() - t0
        served_faults = srv.faults
    assert rep.complete and not rep.error and rep.failed_calls == 0 and rep.degraded_calls == 0, rep
    assert served_faults == 8 and faults.n > 60  # 2x500, 429, invalid body, truncated body, drop, 503, hang; slow
    sched = wb.llm.scheduler
    assert sched.retried >= 8 and sched.limiter.pauses >= 1  # every fault retried; the 429 paused callers
    assert seconds >= 1.5 + 0.2  # the read timeout and the Retry-After were waited for
    wb.ledger.flush()
    calls = wb.store.llm_calls(system=SYSTEM)
    assert bool(calls["ok"].all())  # no call failed for good
    repaired = calls[calls["attempt"] == 2]
    assert len(repaired) == 1  # the malformed reply was repaired by one more call, not used or replaced
    assert rep.counts == clean["counts"]
    assert_same_memory(snapshot(wb.store, rep.space, conv.id), clean["snap"])


# ------------------------------------------------------------------ 2. outage mid-ingest
def test_outage_mid_ingest_keeps_the_last_checkpoint_and_the_rerun_equals_a_clean_run(tmp_path, conv, responder,
                                                                                      clean):
    with MockOpenAIServer(responder=responder) as srv:
        start: list[int] = []  # the outage begins once turn 30 is done (the demo's first session ends at 24)
        outage = When(srv, lambda n, req: bool(start) and start[0] <= n < start[0] + 60)
        srv.fail_requests(outage, status=500)

        def progress(done: int, total: int, events: list) -> None:
            if done == 30 and not start:
                start.append(srv.received)

        wb = bench(tmp_path, srv.base_url, responder)
        rep = wb.ingest(SYSTEM, conv, progress=progress)
    assert start and outage.hits >= 3  # the outage happened, and a call failed after its 3 attempts
    assert rep.error and not rep.complete and rep.failed_calls >= 1, rep
    assert "server error 500" in rep.error and "gave up after 3 attempt(s)" in rep.error
    k = rep.committed_step
    assert k == 24 and 30 <= rep.turns_done < 50
    msg = rep.message
    assert msg.startswith(f"{rep.failed_calls} LLM call(s) failed, memory for {SYSTEM}/{conv.id} incomplete "
                          f"(kept up to turn 24 of {len(conv.turns)}): ") and msg.endswith("Rerun to resume")
    # nothing committed past the checkpoint: no item version, event or link of a later step
    snap = snapshot(wb.store, rep.space, conv.id)
    assert snap["checkpoint"]["step"] == 24 and not snap["checkpoint"]["done"]
    assert snap["versions"] and all(v[2] <= k and (v[3] == INF_STEP or v[3] <= k) for v in snap["versions"])
    assert snap["events"] and all(e[0] <= k for e in snap["events"])
    assert all(step <= k for _, _, step in snap["links"])
    assert snap["events"] == [e for e in clean["snap"]["events"] if e[0] <= k]  # what is kept is right
    assert not verbatim_episodes(snap, conv)
    assert not wb.is_ingested(SYSTEM, conv)

    with MockOpenAIServer(responder=responder) as healthy:  # the endpoint is back
        wb2 = bench(tmp_path, healthy.base_url, responder)
        rep2 = wb2.ingest(SYSTEM, conv)
        resumed_calls = healthy.received
    assert rep2.complete and not rep2.error and rep2.resumed_from == 24, rep2
    assert resumed_calls < clean["calls"]  # turns 1..24 were not redone
    final = snapshot(wb2.store, rep2.space, conv.id)
    assert_same_memory(final, clean["snap"])
    for kind in ("episode", "semantic", "theme"):  # no lost facts, no duplicates
        items = current(final, kind)
        assert items == current(clean["snap"], kind) and len({t for _, t, _ in items}) == len(items)
    assert not verbatim_episodes(final, conv)
    # every construction call is in the ledger once, as in the clean run (the failed batch's rows were rolled back)
    assert construction_calls(wb2) == construction_calls(bench(clean["path"], healthy.base_url, responder))


def test_cli_ingest_outage_exits_4_with_one_line_and_the_rerun_exits_0(tmp_path, conv, clean, server, cli):
    """The failing run in its own process (`python -m memcore.cli`), the rerun through main() in-process."""
    store = tmp_path / "store"
    outage = When(server, lambda n, req: 30 <= n < 90)
    server.fail_requests(outage, status=500)
    res = cli_process("ingest", "demo", "--systems", SYSTEM, cwd=tmp_path, store=store, url=server.base_url)
    assert res.code == 4, res.stderr
    errs = error_lines(res)
    assert len(errs) == 1, res.stderr
    m = re.fullmatch(rf"error: (\d+) LLM call\(s\) failed, memory for {SYSTEM}/demo incomplete \(kept up to turn "
                     rf"(\d+) of 90\): .*server error 500.*\. Rerun to resume", errs[0])
    assert m, errs[0]
    assert "Traceback" not in res.stderr
    wb = Workbench(Settings(store_uri=str(store), embedder="hashing", llm_provider="offline"),
                   embedder=HashingEmbedder())
    snap = snapshot(wb.store, clean["space"], conv.id)
    kept = int(m.group(2))
    ck = snap["checkpoint"]
    assert (ck["step"] if ck else 0) == kept and not (ck and ck["done"])
    assert all(v[2] <= kept for v in snap["versions"]) and all(e[0] <= kept for e in snap["events"])

    outage.on = False  # the endpoint is healthy again (same URL)
    before = server.received
    res2 = cli("ingest", "demo", "--systems", SYSTEM, store=store, url=server.base_url)
    assert res2.code == 0, res2.stderr
    assert not error_lines(res2) and server.received > before
    assert f"{SYSTEM} on demo:" in res2.stdout and (f"resumed at turn {kept}" in res2.stdout if kept else True)
    assert_same_memory(snapshot(wb.store, clean["space"], conv.id), clean["snap"])


# ------------------------------------------------------------------ 3. dead port
def test_dead_port_ask_and_eval_fail_fast_and_never_score(tmp_path, cli):
    port = free_port()
    url = f"http://127.0.0.1:{port}/v1"
    store = tmp_path / "store"
    res = cli("ask", "When did Jonas adopt Pepper?", store=store, url=url)
    assert res.code == 2 and res.seconds < 10, res
    errs = error_lines(res)
    assert len(errs) == 1 and f"cannot connect to {url}" in errs[0] and "Fix:" in errs[0], res.stderr
    assert "A:" not in res.stdout

    out = tmp_path / "results.json"
    res = cli("eval", "--dataset", "demo", "--categories", "5", "--provider", "openai", "--out", str(out),
              store=store, url=url)
    assert res.code == 2 and res.seconds < 10, res
    errs = error_lines(res)
    assert len(errs) == 1 and f"cannot connect to {url}" in errs[0] and "Fix:" in errs[0], res.stderr
    assert not out.exists() and not out.with_suffix(".csv").exists()
    assert "1.000" not in res.stdout  # no F1 from the abstention phrase
    st = Workbench(Settings(store_uri=str(store), embedder="hashing", llm_provider="offline"),
                   embedder=HashingEmbedder()).store
    assert "results" not in st.table_names() or st.results_table().count_rows() == 0

    res = cli("ask", "When did Jonas adopt Pepper?", store=store, url=url.replace("//", "//user:s3cretpass@"),
              key="sk-test-TOPSECRET1234")
    assert res.code == 2 and f"cannot connect to http://***@127.0.0.1:{port}/v1" in res.stderr, res
    assert "s3cretpass" not in res.stderr + res.stdout and "TOPSECRET1234" not in res.stderr + res.stdout


def test_dead_port_without_the_preflight_scores_no_question(tmp_path, responder):
    """Even with the endpoint check off, answers that never came are not abstentions worth F1 = 1.0."""
    wb = bench(tmp_path, f"http://127.0.0.1:{free_port()}/v1", responder, llm_check=False)
    res = run_eval(wb.settings, "demo", systems=["naive_rag"], categories=[5], workbench=wb,
                   out=tmp_path / "r.json")
    assert not res["complete"] and res["questions_missing"] == res["questions_total"] == 2
    assert res["missing_by_system"] == {"naive_rag": 2} and res["questions_done"] == 0
    assert load_rows(wb.store, res["run_id"], ["naive_rag"]) == []
    assert len(res["errors"]) == 2 and all("cannot connect" in e["error"] for e in res["errors"])
    text = json.dumps(res["systems"])
    assert '"f1": 1.0' not in text


# ------------------------------------------------------------------ 4. an endpoint that never answers
def test_endpoint_that_never_answers_fails_ask_within_the_preflight_timeout(tmp_path, cli):
    with SilentServer() as port:
        url = f"http://127.0.0.1:{port}/v1"
        res = cli("ask", "When did Jonas adopt Pepper?", store=tmp_path / "store", url=url, MEMCORE_LLM_TIMEOUT="60")
    assert res.code == 2 and 4.5 < res.seconds < 10, res  # the preflight's 5 s, not the 60 s read timeout
    errs = error_lines(res)
    assert len(errs) == 1 and url in errs[0] and "did not answer within 5 s" in errs[0] and "Fix:" in errs[0], \
        res.stderr


def test_chat_request_that_never_answers_fails_after_the_read_timeout(tmp_path, conv, responder, server):
    """The preflight passes (GET /models answers) but every chat request hangs: the read timeout bounds each
    attempt and the question fails; no answer is made up."""
    server.hang(5)
    wb = bench(tmp_path, server.base_url, responder, timeout_s=1.0, retries=2)
    q = next(x for x in conv.questions if str(x.category) == "5")
    t0 = time.monotonic()
    with pytest.raises(LLMCallFailed, match=r"did not answer within 1 s \(read timeout\)"):
        wb.ask("naive_rag", conv, q)
    assert time.monotonic() - t0 < 6 and server.faults == 2


def test_eval_failed_answer_retrieval_and_judge_calls_leave_no_rows_and_the_resume_fills_exactly_them(
        tmp_path, conv, responder, clean, server):
    """An answer call failing after its retries (500s), a judge call refused (400: permanent, not retried) and a
    retrieval call (xMemory's probe) failing: those three questions get no row and no score; the resumed run
    asks only them again and the results equal a clean run's."""
    qs = {q.id: q for q in conv.questions}
    abst = qs["demo:q17"]  # category 5: the old fallback answer "No information available" scored as an abstention
    judged = next(q for q in conv.questions if str(q.category) == "4")
    probed = qs["demo:q3"]
    broken = [When(server, lambda n, req: question_of(responder, req) == (ANSWER, abst.text)),
              When(server, lambda n, req: question_of(responder, req) == ("judge", judged.text)),
              When(server, lambda n, req: question_of(responder, req) == ("xmemory_probe", probed.text))]
    server.fail_requests(broken[0], status=500)  # transient: retried, then the call fails for good
    server.fail_requests(broken[1], status=400, content="invalid request")  # permanent: not retried
    server.fail_requests(broken[2], status=502)
    missing = {abst.id, judged.id, probed.id}
    cats = [1, 2, 3, 4, 5]

    def switch(on: bool) -> None:
        for w in broken:
            w.on = on

    def evaluate(name: str) -> dict:
        path = tmp_path / name
        if not path.exists():
            shutil.copytree(clean["path"], path)  # the built memory: only answer, retrieval and judge calls
        wb = bench(path, server.base_url, responder)
        return run_eval(wb.settings, "demo", systems=[SYSTEM], categories=cats, workbench=wb,
                        out=tmp_path / f"{name}.json")

    switch(False)
    mark = server.received
    reference = evaluate("reference")
    assert reference["complete"] and reference["questions_missing"] == 0, reference["errors"]
    assert ("xmemory_probe", probed.text) in {question_of(responder, r) for r in server.requests[mark:]}

    switch(True)
    first = evaluate("faulty")
    assert broken[0].hits == 3 and broken[2].hits == 3  # 3 attempts each
    assert broken[1].hits == 2  # no retry; one more request without response_format (the provider's fallback)
    assert not first["complete"] and first["questions_missing"] == 3
    assert first["missing_by_system"] == {SYSTEM: 3} and first["questions_done"] == reference["questions_done"] - 3
    store = Workbench(Settings(store_uri=str(tmp_path / "faulty"), embedder="hashing", llm_provider="offline"),
                      embedder=HashingEmbedder()).store
    rows = load_rows(store, first["run_id"], [SYSTEM])
    assert {r["question_id"] for r in rows} == set(qs) - missing
    errors = {e.get("question_id"): e["error"] for e in first["errors"]}
    assert set(errors) == missing
    assert "server error 500" in errors[abst.id] and "(400)" in errors[judged.id]
    assert "xmemory_probe (retrieval)" in errors[probed.id] and "server error 502" in errors[probed.id]
    saved = json.loads((tmp_path / "faulty.json").read_text())
    assert saved["questions_missing"] == 3 and not saved["complete"]
    assert sum(c["n"] for c in saved["systems"][SYSTEM]["categories"].values()) == len(qs) - 3

    switch(False)
    mark = server.received
    final = evaluate("faulty")
    redone = {question_of(responder, r) for r in server.requests[mark:]}
    assert {q for _, q in redone} == {abst.text, judged.text, probed.text}  # only the missing questions
    assert {(ANSWER, abst.text), ("judge", abst.text), ("judge", judged.text),
            ("xmemory_probe", probed.text), (ANSWER, probed.text), ("judge", probed.text)} <= redone
    assert final["complete"] and final["questions_missing"] == 0 and final["errors"] == []
    assert final["run_id"] == first["run_id"] == reference["run_id"]
    assert diff_results(final, reference) == []


# ------------------------------------------------------------------ 6. credentials
def test_credentials_never_reach_output_store_or_results(tmp_path, conv, responder, clean, server, cli):
    """ingest (failing part-way, in its own process; then resumed), ask (answered; then failing) and eval (one
    answer failing) with a password in OPENAI_BASE_URL and a key: neither secret is printed or stored."""
    user_pass, secret_key = "s3cretpass", "sk-test-TOPSECRET1234"
    secrets = (user_pass, "TOPSECRET1234")
    url = server.base_url.replace("http://", f"http://user:{user_pass}@")
    store, out = tmp_path / "store", tmp_path / "out" / "results.json"
    question, other = "When did Jonas adopt Pepper?", "What job did Maya start at Greenleaf Energy?"

    # the messages of the ask and the eval below, registered with the responder by the same work in-process
    warm = tmp_path / "warm"
    shutil.copytree(clean["path"], warm)
    wb = bench(warm, server.base_url, responder)
    wb.ask(SYSTEM, conv, question)
    wb.ask(SYSTEM, conv, other)
    assert run_eval(wb.settings, "demo", systems=[SYSTEM], categories=[5], workbench=wb)["complete"]

    outputs = []
    start = server.received + 60  # the ingest fails part-way (about turn 25 of 90)
    fault = When(server, lambda n, req: n >= start)
    server.fail_requests(fault, status=500, content=f"upstream said: bad key {secret_key} at {url}")
    res = cli_process("ingest", "demo", "--systems", SYSTEM, cwd=tmp_path, store=store, url=url, key=secret_key)
    outputs.append(res)
    assert res.code == 4 and len(error_lines(res)) == 1, res.stderr
    assert "http://***@127.0.0.1:" in error_lines(res)[0]

    fault.on = False
    res = cli("ingest", "demo", "--systems", SYSTEM, store=store, url=url, key=secret_key)
    outputs.append(res)
    assert res.code == 0, res.stderr
    res = cli("ask", question, "--system", SYSTEM, store=store, url=url, key=secret_key)
    outputs.append(res)
    assert res.code == 0 and "A: " in res.stdout and "***@127.0.0.1" in res.stdout, res.stderr

    fault.pred = lambda n, req: question_of(responder, req) == (ANSWER, other)  # its answer call fails
    fault.on = True
    res = cli("ask", other, "--system", SYSTEM, store=store, url=url, key=secret_key)
    outputs.append(res)
    assert res.code == 2 and len(error_lines(res)) == 1 and "A: " not in res.stdout, res.stderr

    res = cli("eval", "--dataset", "demo", "--categories", "5", "--systems", SYSTEM, "--provider", "openai",
              "--out", str(out), store=store, url=url, key=secret_key)
    outputs.append(res)
    assert res.code == 3 and any(ln.startswith("error: ") for ln in res.stderr.splitlines()), res.stderr
    results = json.loads(out.read_text())
    assert results["questions_missing"] == 1 and results["questions_done"] == 1

    for i, r in enumerate(outputs):
        for s in secrets:
            assert s not in r.stdout and s not in r.stderr, (i, s, r.stdout, r.stderr)
    files = [p for p in [*store.rglob("*"), *out.parent.rglob("*")] if p.is_file()]
    assert any(p.name == "llm_cache.sqlite" for p in files) and any(p.suffix == ".lance" for p in files)
    leaks = [(str(p), s) for p in files for s in secrets if s.encode() in p.read_bytes()]
    assert not leaks
    assert results["engine"].startswith(f"{MODEL} via http://***@127.0.0.1:")


@pytest.mark.parametrize("key", ["sk-test-TOPSECRET1234", "TOPSECRET1234-plain-token"])
def test_llm_error_messages_of_ask_are_redacted_in_process(tmp_path, conv, responder, server, key):
    """`Workbench.ask` raising LLMError (its ingest failed; the server echoed the URL and the key) carries neither
    the URL's password nor the key, whatever the key looks like; nor does the stored ledger."""
    url = server.base_url.replace("http://", "http://user:s3cretpass@")
    server.fail_requests(range(3, 1000), status=500, content=f"proxy error for {url} with key {key}")
    wb = bench(tmp_path, url, responder, key=key)
    with pytest.raises(LLMError) as err:
        wb.ask(SYSTEM, conv, "When did Jonas adopt Pepper?")
    assert "Rerun to resume" in str(err.value) and "http://***@127.0.0.1:" in str(err.value)
    assert "s3cretpass" not in str(err.value) and "TOPSECRET1234" not in str(err.value)
    wb.ledger.flush()
    calls = wb.store.llm_calls()
    errors = " ".join(calls["error"])
    assert "proxy error" in errors and "s3cretpass" not in errors and "TOPSECRET1234" not in errors
    leaks = [str(p) for p in tmp_path.rglob("*") if p.is_file() and (b"s3cretpass" in p.read_bytes()
                                                                      or b"TOPSECRET1234" in p.read_bytes())]
    assert not leaks


def test_a_400_that_is_not_about_response_format_leaves_json_mode_and_logprobs_on(server):
    from memcore.errors import PermanentLLMError
    from memcore.llm.openai_provider import OpenAIProvider

    for _ in range(2):  # the request and the provider's retry without response_format / logprobs
        server.enqueue("This model's maximum context length is 8192 tokens", status=400)
    server.enqueue('{"ok": true}')  # the next call's reply
    prov = OpenAIProvider(MODEL, KEY, server.base_url, timeout_s=5)
    with pytest.raises(PermanentLLMError, match=r"\(400\)"):
        prov.chat([{"role": "user", "content": "a very long prompt"}], json_mode=True, logprobs=True)
    prov.chat([{"role": "user", "content": "a short prompt"}], json_mode=True, logprobs=True)
    last = server.requests[-1]
    assert last.get("response_format") == {"type": "json_object"} and last.get("logprobs") is True
