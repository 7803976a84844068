"""The ledger records the variant a call was made for (issue 26): `UsageLedger.variant(name)` names it for the
records booked in its block, the store keeps it in llm_calls.variant (an older store gets the column, its rows
reading as their plain system), and `store.llm_calls(variant=...)` filters by it."""

from __future__ import annotations

import threading

import lancedb
import pyarrow as pa

from memcore.llm.ledger import CallRecord, UsageLedger
from memcore.store import LanceStore
from memcore.store.schema import SCHEMAS


def test_records_booked_in_a_variant_block_carry_it_and_others_read_as_their_system(tmp_path) -> None:
    store = LanceStore(str(tmp_path / "db"), dim=8)
    ledger = UsageLedger(sink=store.add_llm_calls)
    with UsageLedger.variant("com[beta=0.8]"):
        ledger.add(CallRecord(role="answer", stage="answer", system="com"))
        with UsageLedger.variant("com"):  # an inner block wins (an ingest inside an ask)
            ledger.add(CallRecord(role="x", stage="construction", system="com"))
        seen: list[CallRecord] = []
        other = threading.Thread(target=lambda: seen.append(CallRecord(role="t", stage="answer", system="com")))
        other.start()
        other.join()
        ledger.extend(seen)  # booked here, in the block (run-ahead work is booked where its result is used)
    ledger.add(CallRecord(role="answer", stage="answer", system="naive_rag"))
    ledger.flush()
    df = store.llm_calls()
    assert list(df["variant"]) == ["com[beta=0.8]", "com", "com[beta=0.8]", "naive_rag"]
    assert list(store.llm_calls(variant="com[beta=0.8]")["role"]) == ["answer", "t"]
    assert len(store.llm_calls(variant=["com", "naive_rag"])) == 2


def test_an_older_store_gets_the_variant_column_with_its_rows_as_their_system(tmp_path) -> None:
    old_schema = pa.schema([f for f in SCHEMAS["llm_calls"] if f.name != "variant"])
    old = {f.name: [0] for f in old_schema} | {
        "role": ["answer"], "stage": ["answer"], "system": ["com"], "conv_id": ["c"], "provider": ["offline"],
        "model": ["m"], "error": [""], "cache_hit": [False], "ok": [True], "prompt": [""], "completion": [""],
        "request_format": [""], "outcome": [""]}
    lancedb.connect(str(tmp_path / "db")).create_table("llm_calls", data=pa.table(old, schema=old_schema))
    store = LanceStore(str(tmp_path / "db"), dim=8)
    with UsageLedger.variant("memweaver[review=false]"):
        led = UsageLedger(sink=store.add_llm_calls)
        led.add(CallRecord(role="mw_review", stage="construction", system="memweaver"))
        led.flush()
    df = store.llm_calls().sort_values("role")
    assert list(df["variant"]) == ["com", "memweaver[review=false]"]
    assert list(store.llm_calls(variant="com")["role"]) == ["answer"]
