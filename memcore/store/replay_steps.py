"""Replay's per-step counts of a finished memory, cached in the store: one row per memory space x conversation x
LLM provider (whose construction calls the cost curves count).

A row holds the memory's version it was computed at (`steps_version`: the checkpoint's step, completion and commit
time, plus the number of steps; any commit, rebuild or deletion gives another; and the payload's FORMAT, raised when
what the counts mean changes) and the counts as JSON
(memcore.viz.replay's `replay_payload` writes it, `replay_from_payload` reads it). Only a finished memory is cached
(no partial batch after its checkpoint can be rolled back under it). A row whose version is not the memory's current
one is stale: `load_replay_steps` ignores it and `save_replay_steps` replaces it. The rows are read and written by
memcore.store.cached.
"""

from __future__ import annotations

from typing import Any

from memcore.store.cached import load_cached, save_cached

TABLE = "replay_steps"  # its schema: memcore.store.schema.SCHEMAS
FORMAT = 2  # 2: a variant's construction calls only (MemoryView.variant); rows of another format are stale


def steps_version(checkpoint: dict | None, n_steps: int) -> str | None:
    """The version of a memory that its cached counts are keyed by: its checkpoint's step, completion and commit time
    and the conversation's number of steps; None (never cached) before any commit and while it is not finished."""
    if not checkpoint or not checkpoint.get("done"):
        return None
    return f"f{FORMAT}|{int(checkpoint['step'])}|{float(checkpoint.get('updated', 0.0))!r}|{int(n_steps)}"


def _key(space: str, conv_id: str, provider: str) -> str:
    return f"{space}|{conv_id}|{provider}"


def load_replay_steps(store: Any, space: str, conv_id: str, provider: str, version: str) -> dict | None:
    """The cached counts of a memory (built with `provider`) at `version` (their payload dict), or None when there
    are none or only stale ones."""
    return load_cached(store, TABLE, _key(space, conv_id, provider), version)


def save_replay_steps(store: Any, space: str, conv_id: str, provider: str, version: str, payload: dict) -> None:
    """Store a memory's counts at `version`, replacing any earlier row of that memory and provider."""
    save_cached(store, TABLE, _key(space, conv_id, provider), version, payload, space=space, conv_id=conv_id,
                provider=provider)
