"""`memcore mcp`: a Model Context Protocol server (the official `mcp` SDK's MCPServer) whose tools let an agent use
memory systems as its memory: remember, recall, answer, memory_status. The memory itself is memcore.live's
LiveMemory: one live conversation per agent session id (`live-<session_id>`), stored like any other.

Failures are MCP tool errors (`is_error` results) of one line: bad arguments name the argument and what to give;
a failed LLM call names the fix (the memory stays at its last checkpoint, the message stays stored as a turn, and
the next call resumes). Nothing is printed on stdout but the protocol (stdio transport); notes go to stderr.
"""

from __future__ import annotations

import sys
import threading
from typing import Annotated, Any

import typer
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field, ValidationError

from memcore.cli.common import PROVIDER, STORE, workbench_from
from memcore.cli.variants import resolve_names
from memcore.errors import MemcoreError
from memcore.live import LiveMemory, live_conv_id
from memcore.llm import check_endpoint
from memcore.llm.redact import redact
from memcore.types import Trace

DEFAULT_SYSTEM = "naive_rag"
DEFAULT_SESSION = "default"
INSTRUCTIONS = ("memcore memory: call remember for every message of the conversation (speaker or role, text, "
                "optional time and message_id: a resent message_id is stored once), recall before answering to get "
                "the memory's context, answer to let the memory system answer, memory_status to see how far the "
                "memory is built (a reconnecting client continues from last_message_id). session_id picks the "
                "conversation (one per agent session).")

SessionArg = Annotated[str | None, Field(description="agent session id (one stored conversation each); default: the "
                                         "server's --session")]


def _one_line(err: Exception) -> str:
    return " ".join(redact(str(err)).split())


def _trace_view(trace: Trace, trace_id: str) -> dict[str, Any]:
    return {"trace_id": trace_id, "context": trace.context,
            "items": [{"id": it.id, "kind": it.kind, "score": round(float(it.score), 6), "text": it.text,
                       "turn_ids": it.turn_ids} for it in trace.items],
            "notes": trace.notes, "errors": trace.errors}


class MemoryServer:
    """The tools over one workbench: one LiveMemory per agent session, calls one at a time (a lock)."""

    def __init__(self, wb: Any, systems: list[str], session: str = DEFAULT_SESSION) -> None:
        self.wb = wb
        self.systems = systems
        self.session = session
        self._lock = threading.Lock()
        self._live: dict[str, LiveMemory] = {}

    def live(self, session_id: str | None) -> LiveMemory:
        """The LiveMemory of an agent session (ToolError for a bad id)."""
        sid = session_id or self.session
        try:
            conv_id = live_conv_id(sid)
        except ValueError as e:
            raise ToolError(f"session_id: {e}") from None
        if conv_id not in self._live:
            self._live[conv_id] = LiveMemory(self.wb, conv_id, self.systems, client="mcp")
        return self._live[conv_id]

    def run(self, fn: Any) -> Any:
        """Call `fn` under the lock, turning memcore's and argument errors into one-line tool errors."""
        with self._lock:
            try:
                return fn()
            except (ValueError, MemcoreError) as e:
                raise ToolError(_one_line(e)) from None


class _Server(MCPServer):
    """MCPServer whose argument errors are one line per call: `argument: what is wrong` (no value echoed)."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        """Call a tool; a validation error of its arguments becomes a one-line ToolError."""
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as e:
            cause = e.__cause__
            if isinstance(cause, ValidationError):
                raise ToolError(f"{name}: invalid arguments: " + "; ".join(
                    f"{'.'.join(str(p) for p in err['loc']) or 'arguments'}: {err['msg']}"
                    for err in cause.errors())) from None
            raise


def build_server(wb: Any, systems: list[str], session: str = DEFAULT_SESSION) -> MCPServer:
    """The MCPServer with memcore's memory tools over `wb` for `systems` (canonical variant names)."""
    ms = MemoryServer(wb, systems, session)
    server = _Server("memcore", instructions=INSTRUCTIONS)

    @server.tool()
    def remember(text: Annotated[str, Field(min_length=1, description="the message text")],
                 speaker: Annotated[str | None, Field(description="who said it (a name)")] = None,
                 role: Annotated[str | None, Field(description="user or assistant, when no speaker is given")] = None,
                 time: Annotated[str | None, Field(description="when it was said, like '2024-03-01 10:00' (default: "
                                                   "now for a session's first message, else the session's date)")]
                 = None,
                 message_id: Annotated[str | None, Field(description="your id for the message: a resent id is "
                                                         "stored once")] = None,
                 chat_session: Annotated[int | None, Field(ge=1, description="the conversation's session number "
                                                           "(default: the current one; +1 starts the next)")] = None,
                 session_id: SessionArg = None) -> dict[str, Any]:
        """Store one message in memory: every system builds its memory of it; returns the turn id and, per
        system, the memory events it caused and the item counts."""
        who = speaker or role
        if not who:
            raise ToolError("give speaker (a name) or role (user or assistant)")

        def go() -> dict[str, Any]:
            r = ms.live(session_id).remember(who, text, time, chat_session, message_id)
            return {"conversation": r.turn.conv_id, "turn_id": r.turn.turn_id, "turn": r.turn.index + 1,
                    "stored": r.new, "call_id": r.call_id,
                    "systems": {n: {"events": [{"kind": e.kind, "item_ids": e.item_ids, "reason": e.reason}
                                               for e in r.events.get(n, [])], "items": r.counts.get(n, {})}
                                for n in ms.systems}}
        return ms.run(go)

    @server.tool()
    def recall(query: Annotated[str, Field(min_length=1, description="what to look up")],
               session_id: SessionArg = None) -> dict[str, Any]:
        """The memory's context for a query, per system: items with ids and scores, the rendered context and
        a trace id (the Live page shows the trace)."""
        def go() -> dict[str, Any]:
            got = ms.live(session_id).recall(query)
            return {"systems": {n: _trace_view(t, tid) for n, (t, tid) in got.items()}}
        return ms.run(go)

    @server.tool()
    def answer(query: Annotated[str, Field(min_length=1, description="the question")],
               session_id: SessionArg = None) -> dict[str, Any]:
        """Each system's answer to a query from its memory, with a trace id and what answered (the configured
        provider, or the offline engine's reader, labelled)."""
        def go() -> dict[str, Any]:
            got = ms.live(session_id).answer(query)
            return {"provider": wb.provider_label,
                    "systems": {n: {"answer": a.text, "trace_id": tid, "error": a.error,
                                    **_trace_view(a.trace, tid)} for n, (a, tid) in got.items()}}
        return ms.run(go)

    @server.tool()
    def memory_status(session_id: SessionArg = None) -> dict[str, Any]:
        """The conversation's turns and last message id, and per system how far its memory is built."""
        return ms.run(lambda: ms.live(session_id).status())

    return server


def mcp_command(
    systems: str = typer.Option(DEFAULT_SYSTEM, "--systems", "-s", help="comma-separated systems or variants "
                                "(com[beta=0.8], com:no-apt, @NAME) remembering side by side"),
    session: str = typer.Option(DEFAULT_SESSION, "--session", help="agent session id used when a tool call gives "
                                "no session_id (conversation live-<id>)"),
    http: bool = typer.Option(False, "--http", help="serve streamable HTTP on --host:--port (path /mcp) instead of "
                              "stdio"),
    host: str = typer.Option("127.0.0.1", "--host", help="HTTP host (127.0.0.1: this machine only)"),
    port: int = typer.Option(8765, "--port", help="HTTP port"),
    store: str | None = STORE,
    provider: str | None = PROVIDER,
) -> None:
    """Serve memory systems to an agent over the Model Context Protocol (tools remember, recall, answer,
    memory_status; stdio by default). Each agent session is a live conversation in the store: the Live page
    watches it, and replay, ask, eval and export work on it."""
    wb = workbench_from(store, provider)
    names = resolve_names(systems, wb.store, list(wb.systems()))
    if wb.settings.llm_check:  # a dead endpoint fails here (exit 2, the URL and the fix), not at the first tool call
        check_endpoint(wb.llm)
    default = " (the default; --systems picks others)" if systems == DEFAULT_SYSTEM else ""
    where = f"http://{host}:{port}/mcp" if http else "stdio"
    print(f"memcore mcp: serving {', '.join(names)}{default} on {where} | store: {redact(wb.settings.store_uri)} | "
          f"LLM: {wb.provider_label} | embedder: {wb.embedder.name} | default session: {session}",
          file=sys.stderr, flush=True)
    server = build_server(wb, names, session)
    if http:
        server.run("streamable-http", host=host, port=port)
    else:
        server.run()
