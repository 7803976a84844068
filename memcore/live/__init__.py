"""Live memory: a conversation that grows one message at a time (an agent over MCP, `memcore ingest --follow`,
the Live page's chat box) while memory systems build on it, and the log of what was asked of it.

session.py: LiveMemory (append a message, build every system's memory of it, recall, answer, status);
log.py: the `live_calls` table (every tool call: latency, outcome, the recall's trace and LLM calls)."""

from memcore.live.log import LIVE_CALLS, ToolCall, read_calls
from memcore.live.session import LiveError, LiveMemory, Remembered, live_conv_id

__all__ = ["LIVE_CALLS", "LiveError", "LiveMemory", "Remembered", "ToolCall", "live_conv_id", "read_calls"]
