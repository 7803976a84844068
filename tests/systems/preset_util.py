"""Helpers of the ablation-preset tests: the demo memory of one system, and a variant's traces and ledger."""

from __future__ import annotations

from memcore.llm.ledger import CallRecord
from memcore.systems.variants import parse_variant
from memcore.testing.contract import contract_workbench
from memcore.types import Conversation, Trace
from memcore.workbench import Workbench

Demo = tuple[Workbench, Conversation]


def demo_memory(root, system: str) -> Demo:
    """A workbench under `root` (hashing embedder, offline engine) with `system`'s demo memory built."""
    wb = contract_workbench(root)
    conv = wb.load_demo()
    wb.ingest(system, conv)
    return wb, conv


def run_variant(demo: Demo, name: str) -> tuple[list[Trace], list[CallRecord]]:
    """The trace of every demo question under a variant and the ledger records of those retrievals."""
    wb, conv = demo
    v = parse_variant(name)
    system = wb.system(v.system, conv, **v.settings)
    start = wb.ledger.mark()
    trs = [system.retrieve(q) for q in conv.questions]
    return trs, wb.ledger.records[start:]
