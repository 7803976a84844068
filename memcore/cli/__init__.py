"""The `memcore` command: main (the typer app and its router), one module per command family: common (shared
options), tools (doctor, optimize, llm serve), variants, eval, compare, sweep."""

from memcore.cli.main import app, main

__all__ = ["app", "main"]
