"""A memory's LLM calls are its own: a construction variant's memory (its own space) and the plain system's memory
of the same conversation each read only the ledger rows booked under their memory name (Replay's cost curves and its
LLM-calls expander read them), and together they are every construction row of the system."""

from __future__ import annotations

from memcore.embed import HashingEmbedder
from memcore.settings import Settings
from memcore.workbench import Workbench

VARIANT = "memweaver[review=false]"  # a construction setting: a memory of its own


def test_a_variants_memory_reads_only_its_own_construction_calls(tmp_path) -> None:
    wb = Workbench(Settings(store_uri=str(tmp_path / "store"), llm_provider="offline", embedder="hashing"),
                   embedder=HashingEmbedder())
    conv = wb.load_demo()
    wb.ingest("memweaver", conv)
    wb.ingest(VARIANT, conv)
    plain, variant = wb.memory("memweaver", conv), wb.memory(VARIANT, conv)
    assert plain.space != variant.space and variant.variant == VARIANT
    every = wb.llm_calls(system="memweaver", conv_id=conv.id, stage="construction")
    mine, theirs = plain.llm_calls(stage="construction"), variant.llm_calls(stage="construction")
    assert len(mine) and len(theirs) and len(mine) + len(theirs) == len(every)
    assert set(mine["variant"]) == {"memweaver"} and set(theirs["variant"]) == {VARIANT}
    step = int(theirs["step"].iloc[-1])
    assert len(variant.llm_calls(stage="construction", step=step)) == int((theirs["step"] == step).sum())
