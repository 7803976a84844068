"""Reply length bounds (issue 37): a reply whose text field is longer than the role's max_tokens could produce
(a 1,000,000-character theme label) fails its call by name; nothing is truncated, cached or used."""

from __future__ import annotations

import pytest

import memcore.systems.xmemory  # noqa: F401  - registers the xmemory roles
from memcore.errors import LLMCallFailed
from memcore.llm.cache import CallCache
from memcore.llm.client import LLMClient, field_bound
from memcore.llm.fake import FakeLLM
from memcore.llm.ledger import UsageLedger
from memcore.llm.roles import get_role


def test_a_huge_theme_label_fails_the_call(tmp_path) -> None:
    huge = "theme " * 200_000  # 1,200,000 characters
    fake = FakeLLM(by_role={"xmemory_theme": [huge, huge, huge, huge]})
    ledger = UsageLedger()
    client = LLMClient(fake, ledger, cache=CallCache(tmp_path))
    with pytest.raises(LLMCallFailed, match="characters, more than the 1,536 its max_tokens allow"):
        client.run("xmemory_theme", {"facts": "- Maya has a dog"}, stage="construction")
    assert len(CallCache(tmp_path)) == 0  # the reply was not cached


def test_a_reply_within_the_bound_is_used() -> None:
    assert field_bound(get_role("xmemory_theme")) == 96 * 16
    fake = FakeLLM(by_role={"xmemory_theme": ["Maya's dog Pepper"]})
    res = LLMClient(fake, UsageLedger()).run("xmemory_theme", {"facts": "- Maya has a dog"}, stage="construction")
    assert res.output.text == "Maya's dog Pepper"
