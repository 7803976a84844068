"""MemoryView: one memory (a system's memory space x a conversation) read through the store's typed queries.

`Workbench.memory(system, conv, **config)` gives one: the space is worked out there (system, config,
embedder, LLM), so the app, the CLI and benchmarks never compute or pass memory spaces themselves.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

import pandas as pd

from memcore.store.projections import load_projection, memory_version, save_projection
from memcore.store.replay_steps import load_replay_steps, save_replay_steps
from memcore.store.schema import INF_STEP
from memcore.types import Event, MemoryItem


@dataclass(frozen=True)
class MemoryView:
    """Read access to one stored memory: checkpoint, items now or at a step, versions, events, calls."""

    store: Any  # LanceStore
    system: str
    conv_id: str
    space: str
    variant: str | None = None  # the memory's Variant.memory_name (its ledger rows); None: every one of the system

    @property
    def key(self) -> tuple[str, str, str]:
        """(store uri, space, conv id): what identifies this memory, e.g. as a cache key."""
        return (str(self.store.uri), self.space, self.conv_id)

    def checkpoint(self) -> dict | None:
        """The ingest's last checkpoint {step, done, state, config, system}, or None before any commit."""
        return self.store.checkpoint(self.space, self.conv_id)

    def status(self) -> tuple[int, bool]:
        """(last committed step, complete); (0, False) before any commit."""
        ck = self.checkpoint()
        return (int(ck["step"]), bool(ck["done"])) if ck else (0, False)

    def items(self, kind: str, at_step: int | None = None, with_vectors: bool = True) -> list[MemoryItem]:
        """Current items of one kind (or as they were at `at_step`)."""
        return self.store.items(self.space, self.conv_id, kind, at_step=at_step, with_vectors=with_vectors)

    def kind_versions(self, kind: str, ids: Collection[str] | None = None,
                      alive: tuple[int, int] | None = None) -> tuple[list[MemoryItem], Any]:
        """Every stored version of one kind (no vectors) and each one's valid_to (a numpy array): the items at
        step s are the versions with updated_step <= s < valid_to, in `items(kind, at_step=s)`'s order. Only
        those of `ids`, and only those alive at some step from alive[0] to alive[1], when given."""
        return self.store.kind_versions(self.space, self.conv_id, kind, ids, alive)

    def kind_counts(self, at_step: int | None = None) -> dict[str, int]:
        """Number of current items per kind (or at `at_step`)."""
        return self.store.kind_counts(self.space, self.conv_id, at_step)

    def versions(self) -> pd.DataFrame:
        """Every stored item version: kind, id, valid_from, valid_to."""
        return self.store.item_versions(self.space, self.conv_id)

    def step_versions(self) -> pd.DataFrame:
        """`versions()` as Replay steps through them: "still alive" as INF_STEP, ids and kinds plain Python strings
        (a step's diff filters them at once)."""
        out = self.versions()
        out.loc[out["valid_to"] >= INF_STEP, "valid_to"] = INF_STEP
        return out.astype({"id": object, "kind": object})

    def construction_calls(self, provider: str) -> pd.DataFrame:
        """The memory's construction calls by `provider` without their prompt and completion texts, sorted by step
        (stable: a step's calls keep their order)."""
        calls = self.llm_calls(stage="construction", provider=provider, texts=False)
        return calls.sort_values("step", kind="stable") if len(calls) else calls

    def history(self, kind: str, item_id: str) -> list[MemoryItem]:
        """Every stored version of one item, oldest first."""
        return self.store.item_history(self.space, self.conv_id, kind, item_id)

    def sources_of(self, item_id: str) -> list[str]:
        """Direct sources (turn or item ids) of an item."""
        return self.store.sources_of(self.space, self.conv_id, item_id)

    def derived_from(self, source_id: str) -> list[str]:
        """Items built directly from a turn or an item."""
        return self.store.derived_from(self.space, self.conv_id, source_id)

    def events(self, upto: int | None = None, after: int | None = None) -> list[Event]:
        """Ingest events in order (optionally those of the steps after `after` and up to `upto`)."""
        return self.store.events(self.space, self.conv_id, upto, after)

    def events_table(self, upto: int | None = None, after: int | None = None) -> Any:
        """Every stored event row in order as a pyarrow Table (None: none), `data` as stored JSON text (those of the
        steps after `after` and up to `upto`, when given)."""
        return self.store.events_table(self.space, self.conv_id, upto=upto, after=after)

    def llm_calls(self, stage: str | None = None, provider: str | None = None, step: int | None = None,
                  texts: bool = True) -> pd.DataFrame:
        """This memory's ledger rows on this conversation: those booked under its `variant` (a construction variant's
        calls carry its memory name; rows from before variants carry the plain system's), every row of the system
        when `variant` is None; those of one step; without prompt and completion texts (`texts=False`)."""
        return self.store.llm_calls(system=self.system, conv_id=self.conv_id, stage=stage, provider=provider,
                                    step=step, texts=texts, variant=self.variant)

    def version(self) -> str:
        """A digest of every stored item version (memcore.store.projections.memory_version): changes whenever
        the memory does."""
        return memory_version(self.versions())

    def projection(self, method: str, version: str) -> dict | None:
        """The cached 2-D projection of this memory by `method` at `version`, or None (none, or a stale one)."""
        return load_projection(self.store, self.space, self.conv_id, method, version)

    def save_projection(self, method: str, version: str, payload: dict) -> None:
        """Cache this memory's 2-D projection by `method` at `version` (replaces the earlier one)."""
        save_projection(self.store, self.space, self.conv_id, method, self.status()[0], version, payload)

    def replay_steps(self, provider: str, version: str) -> dict | None:
        """Replay's cached per-step counts of this memory (built with `provider`) at `version`
        (memcore.store.replay_steps.steps_version), or None (none, or a stale one)."""
        return load_replay_steps(self.store, self.space, self.conv_id, provider, version)

    def save_replay_steps(self, provider: str, version: str, payload: dict) -> None:
        """Cache Replay's per-step counts of this memory at `version` (replaces the earlier ones)."""
        save_replay_steps(self.store, self.space, self.conv_id, provider, version, payload)
