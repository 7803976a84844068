"""Saved variants in the store (memcore.store.variants): a name kept for a canonical variant, replaced when saved
again, listed by name, seen by another handle, refused with one line when malformed or unknown."""

from __future__ import annotations

import pytest

from memcore.store import LanceStore
from memcore.store.variants import (
    check_name,
    delete_variant,
    is_saved_name,
    save_variant,
    saved_variant,
    saved_variants,
)


def test_saved_names_are_kept_replaced_listed_and_seen_by_another_handle(tmp_path) -> None:
    a, b = LanceStore(str(tmp_path / "db"), dim=8), LanceStore(str(tmp_path / "db"), dim=8)
    assert saved_variants(a) == {}
    save_variant(a, "fast", "com[max_len=4]", "com")
    save_variant(a, "@wide", "xmemory[alpha=0.3]", "xmemory")
    assert saved_variant(b, "@fast") == "com[max_len=4]" and saved_variant(b, "wide") == "xmemory[alpha=0.3]"
    save_variant(b, "fast", "com[beta=0.8]", "com")  # saved again: replaced, not duplicated
    assert list(saved_variants(a)) == ["fast", "wide"] and saved_variant(a, "@fast") == "com[beta=0.8]"
    assert delete_variant(a, "@fast") and not delete_variant(a, "@fast")
    with pytest.raises(ValueError, match=r"@fast: no saved variant of that name; saved: @wide"):
        saved_variant(b, "@fast")


@pytest.mark.parametrize("bad", ["@", "@a b", "@com[beta=0.8]", "@-x", "@" + "x" * 65])
def test_malformed_names_fail_in_one_line(bad: str) -> None:
    with pytest.raises(ValueError, match="is not a variant name to save"):
        check_name(bad)
    assert is_saved_name(bad) and not is_saved_name("com[beta=0.8]")
