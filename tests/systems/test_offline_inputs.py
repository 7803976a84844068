"""Systems pass a real model's inputs only (issue 25, item 2): over every role call of an offline demo build
and its questions, no input exists for the offline rules alone; stored event text is the same for every
provider (the "offline engine" label is added when rendering, memcore.viz.replay.event_reason)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from memcore.embed import HashingEmbedder
from memcore.llm import OfflineEngine
from memcore.settings import Settings
from memcore.workbench import Workbench

# Cues still passed in, each because no input a real model gets can give it (reported in issue 25):
# the router's cosines to cluster centroids (the centroids are not in the prompt) and the c-TF-IDF
# contrast classes of a theme label (the other themes' facts are not in the prompt).
LEFT = {("mw_router", "_sims"), ("xmemory_theme", "other_themes")}
OFFLINE_ONLY = {"centroid_similarity", "n_messages", "minutes_since_last", "session_change"}


class Recorder(OfflineEngine):
    """The offline engine, recording the inputs of every role call it answers."""

    def __init__(self, embedder: Any = None) -> None:
        super().__init__(embedder)
        self.seen: list[tuple[str, dict[str, Any]]] = []

    def run_role(self, role: str, inputs: dict[str, Any]) -> BaseModel:
        self.seen.append((role, dict(inputs)))
        return super().run_role(role, inputs)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Workbench, Recorder, Any]:
    rec = Recorder()
    wb = Workbench(Settings(store_uri=str(tmp_path_factory.mktemp("offline-inputs")), embedder="hashing",
                            llm_provider="offline"), provider=rec, embedder=HashingEmbedder())
    conv = wb.load_demo()
    for name in ("memweaver", "xmemory"):
        wb.ingest(name, conv)
        for q in conv.questions[:6]:
            wb.ask(name, conv, q)
    return wb, rec, conv


def test_role_inputs_carry_no_offline_only_cues(built: tuple[Workbench, Recorder, Any]) -> None:
    _, rec, _ = built
    roles = {r for r, _ in rec.seen}
    assert {"mw_coherence", "mw_experience", "mw_time", "mw_select", "episode_boundary"} <= roles
    leaks = sorted({(r, k) for r, inputs in rec.seen for k in inputs
                    if (k.startswith("_") or k in OFFLINE_ONLY or k == "other_themes") and (r, k) not in LEFT})
    assert leaks == []


def test_stored_event_text_names_no_provider(built: tuple[Workbench, Recorder, Any]) -> None:
    wb, _, conv = built
    events = wb.memory("memweaver", conv).events()
    judged = [e for e in events if e.data.get("role")]
    assert judged, "MemWeaver's judgement events name the role that decided them"
    assert not [e.reason for e in events if "offline" in e.reason.split(": offline:")[0]]
