"""The offline engine owns its features (issue 25, item 2): its nature is a declared capability, the client
runs it like any provider, it gets the runtime's embedder explicitly, and `llm_unusable=fallback` never puts
the offline rules' output in place of a model's unusable reply."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

import memcore.systems  # noqa: F401  (registers the systems' roles)
from memcore.embed import HashingEmbedder
from memcore.errors import LLMCallFailed
from memcore.llm import FakeLLM, LLMClient, OfflineEngine, make_client
from memcore.llm.base import ChatResult, capabilities
from memcore.llm.roles import Role, register
from memcore.settings import Settings

UNUSABLE = ["not json", "still not json"]


class Decision(BaseModel):
    decided: bool  # required, and the role declares no fallback
    why: str = ""


class Maybe(BaseModel):
    picks: list[str] = []


RULE_ONLY = register(Role(name="test_rule_only", system="Decide.", user="{x}", output=Decision,
                          offline=lambda i: Decision(decided=True, why="the offline rule")))
EMPTY_OK = register(Role(name="test_empty_ok", system="Pick.", user="{x}", output=Maybe,
                         offline=lambda i: Maybe(picks=["the offline rule"])))


def test_unusable_reply_with_fallback_never_becomes_the_offline_rules_output() -> None:
    """A required-field role without a declared fallback fails the call, booked as failed."""
    client = LLMClient(FakeLLM(by_role={"test_rule_only": list(UNUSABLE)}), unusable="fallback")
    with pytest.raises(LLMCallFailed, match="declares no fallback"):
        client.run("test_rule_only", {"x": "a"}, stage="construction")
    assert client.degraded == 0
    rec = client.ledger.records[-1]
    assert rec.ok is False and rec.outcome == "unusable" and "the offline rule" not in rec.completion


def test_real_roles_with_required_fields_fail_instead_of_taking_the_rule() -> None:
    """mw_router (required cluster_id, no declared fallback): an unusable reply is a failed call, not the rule."""
    client = LLMClient(FakeLLM(by_role={"mw_router": list(UNUSABLE)}), unusable="fallback")
    inputs = {"turn": "Ana: hi", "candidates": [{"cluster_id": "cluster-1", "center_text": "t", "samples": []}],
              "_sims": {"cluster-1": 0.9}}
    with pytest.raises(LLMCallFailed):
        client.run("mw_router", inputs, stage="construction")


def test_fallback_names_what_it_used() -> None:
    client = LLMClient(FakeLLM(by_role={"test_empty_ok": list(UNUSABLE), "mw_coherence": list(UNUSABLE)}),
                       unusable="fallback")
    empty = client.run("test_empty_ok", {"x": "a"}, stage="construction")
    assert empty.output == Maybe() and "used an empty output (llm_unusable=fallback)" in empty.error
    rec = client.ledger.records[-1]
    assert rec.outcome == "fallback" and "fallback: used an empty output" in rec.error
    declared = client.run("mw_coherence", {"turns": ["Ana: a", "Ben: b"]}, stage="construction")
    assert declared.output.is_coherent is False and "used the role's fallback" in declared.error
    assert "fallback: used the role's fallback" in client.ledger.records[-1].error
    assert client.degraded == 2


def test_boundary_fallback_is_declared_not_the_rule() -> None:
    """The offline rule ends an episode at "by the way"; the declared fallback does not pretend to decide."""
    inputs = {"history": ["[8 May, 2023] Ana: I adopted a puppy."], "new_messages": ["[8 May, 2023] Ben: By the "
              "way, how is work?"], "gap_minutes": 30, "max_messages": 15}
    rule = LLMClient(OfflineEngine(HashingEmbedder())).run("episode_boundary", inputs, stage="construction")
    assert rule.output.should_end is True
    client = LLMClient(FakeLLM(by_role={"episode_boundary": list(UNUSABLE)}), unusable="fallback")
    res = client.run("episode_boundary", inputs, stage="construction")
    assert res.output.should_end is False and res.output.reason.startswith("fallback")


class ChatWithRunRole:
    """A chat provider that happens to have a `run_role` method: its nature is what it declares."""

    name, model, label = "chatty", "m", "a chat model"

    def __init__(self) -> None:
        self.chats = 0

    def run_role(self, role: str, inputs: dict[str, Any]) -> BaseModel:
        raise AssertionError("a chat provider is never asked for offline rules")

    def chat(self, messages: list[dict[str, str]], **kw: Any) -> ChatResult:
        self.chats += 1
        return ChatResult('{"decided": false, "why": "model"}', 3, 3, self.model)


def test_provider_nature_is_a_declared_capability() -> None:
    prov = ChatWithRunRole()
    client = LLMClient(prov)
    assert client.is_offline is False and capabilities(prov).offline_rules is False
    assert client.run("test_rule_only", {"x": "a"}, stage="construction").output.why == "model"
    assert prov.chats == 1
    assert LLMClient(OfflineEngine()).is_offline and OfflineEngine.capabilities.offline_rules


class SpyEngine(OfflineEngine):
    """The offline engine, counting the role calls it computes."""

    def __init__(self, embedder: Any = None) -> None:
        super().__init__(embedder)
        self.roles: list[str] = []

    def run_role(self, role: str, inputs: dict[str, Any]) -> BaseModel:
        self.roles.append(role)
        return super().run_role(role, inputs)


def test_offline_calls_go_through_the_engine() -> None:
    engine = SpyEngine()
    res = LLMClient(engine).run("test_rule_only", {"x": "a"}, stage="construction")
    assert engine.roles == ["test_rule_only"] and res.output.why == "the offline rule"


def test_the_engine_gets_the_runtimes_embedder_explicitly(tmp_path) -> None:
    emb = HashingEmbedder()
    client = make_client(Settings(store_uri=str(tmp_path), llm_provider="offline"), embedder=emb)
    assert client.provider.embedder is emb
    fake = FakeLLM()
    make_client(Settings(store_uri=str(tmp_path), llm_provider="fake"), provider=fake, embedder=emb)
    assert fake.engine.embedder is emb
    with pytest.raises(ValueError, match="needs the runtime's embedder"):
        OfflineEngine().run_role("mw_coherence", {"turns": ["Ana: a", "Ben: b"]})
