"""memcore: watch LLM-agent memory systems build, retrieve and answer, side by side."""

__version__ = "0.1.0"
