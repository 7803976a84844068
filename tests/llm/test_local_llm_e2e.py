"""End to end with a real local LLM: SmolLM2 behind llama.cpp's OpenAI-compatible server.

Ingests the demo with RecMem and CoM through the openai client, answers three demo
questions, and checks usage comes from the server's responses and traces are populated;
malformed-JSON handling is exercised on a real reply. Skips when the local LLM is not
installed (`bash scripts/install-local-llm.sh`, run by `./run.sh test`).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pydantic import BaseModel

from memcore.datasets import load_demo
from memcore.embed import MiniLMEmbedder
from memcore.errors import LLMCallFailed
from memcore.llm import LLMClient, OpenAIProvider
from memcore.llm.local_server import LocalServer, free_port, is_available
from memcore.llm.roles import Role, register
from memcore.settings import Settings
from memcore.workbench import Workbench

AVAILABLE, WHY = is_available()
pytestmark = [pytest.mark.llm, pytest.mark.slow,
              pytest.mark.skipif(not AVAILABLE, reason=f"{WHY} (optional local LLM)")]


@pytest.fixture(scope="module")
def server() -> Iterator[LocalServer]:
    srv = LocalServer(timeout_s=180).start(port=free_port(), n_ctx=4096)
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture(scope="module")
def workbench(server, tmp_path_factory) -> Workbench:
    settings = Settings(store_uri=str(tmp_path_factory.mktemp("e2e") / "store"), llm_provider="openai",
                        use_cache=False, llm_unusable="fallback")  # a 135M model checks the plumbing, not JSON quality
    provider = OpenAIProvider(server.model_id, base_url=server.base_url, timeout_s=600,
                              label="local SmolLM2-135M (llama.cpp)")
    return Workbench(settings, embedder=MiniLMEmbedder(), provider=provider)


def test_recmem_and_com_ingest_and_answer_through_the_server(workbench):
    conv = load_demo()
    qs = [q for q in conv.questions if q.category == 4][:3]
    wb = workbench
    rep = wb.ingest("recmem", conv, theta_sim=0.6)
    assert rep.complete
    construction = [r for r in wb.ledger.records if r.system == "recmem" and r.stage == "construction"]
    assert construction, "RecMem made no construction call to the server"
    assert all(r.provider == "openai" for r in construction)
    assert sum(r.prompt_tokens for r in construction) > 0 and sum(r.completion_tokens for r in construction) > 0
    assert wb.ingest("com", conv).complete
    for name, cfg in (("recmem", {"theta_sim": 0.6}), ("com", {})):
        for q in qs:
            ans = wb.system(name, conv, **cfg).answer(q)
            assert ans.usage["answer"].prompt_tokens > 0 and ans.usage["answer"].completion_tokens > 0
            assert ans.trace.items and ans.trace.context
            assert isinstance(ans.text, str)
    wb.ledger.flush()
    stored = wb.store.llm_calls(provider="openai")
    assert len(stored) >= len(construction) + 6 and stored["prompt_tokens"].sum() > 0


class Profile(BaseModel):
    name: str
    hobbies: list[str]


TRUNCATED = register(Role(name="e2e_truncated_profile", system="Describe a person as JSON.",
                          user="Person: {who}", output=Profile, max_tokens=6,
                          offline=lambda inp: Profile(name=inp["who"], hobbies=[])))


def test_truncated_real_reply_is_reported_after_one_repair(server):
    """6 tokens cannot hold the object: both real replies are malformed, the error is reported."""
    strict = LLMClient(OpenAIProvider(server.model_id, base_url=server.base_url, timeout_s=600))
    with pytest.raises(LLMCallFailed, match="unusable reply after one repair attempt"):
        strict.run("e2e_truncated_profile", {"who": "Maya, a runner who adopted a dog"}, stage="construction")
    client = LLMClient(OpenAIProvider(server.model_id, base_url=server.base_url, timeout_s=600), unusable="fallback")
    res = client.run("e2e_truncated_profile", {"who": "Maya, a runner who adopted a dog"}, stage="construction")
    calls = [r for r in client.ledger.records if r.role == "e2e_truncated_profile"]
    assert len(calls) == 2 and all(c.completion_tokens > 0 for c in calls)
    assert not res.ok and "unusable reply after one repair attempt" in res.error
    assert res.output == Profile(name="Maya, a runner who adopted a dog", hobbies=[])  # offline fallback


def test_malformed_json_from_a_real_reply_is_repaired_or_reported(server):
    provider = OpenAIProvider(server.model_id, base_url=server.base_url, timeout_s=600)
    provider.supports_json_mode = False  # let the small model write free text: it will not be clean JSON
    client = LLMClient(provider, unusable="fallback")
    res = client.run("episode_summary", {"messages": [
        {"speaker": "Maya", "text": "I adopted Pepper from the Happy Paws shelter last year.",
         "date": "8 May, 2023", "turn_id": "D1:7"}], "max_episodes": 1}, stage="construction")
    calls = [r for r in client.ledger.records if r.role == "episode_summary"]
    if len(calls) == 1:  # the first reply already validated: nothing to repair, but it was parsed
        assert res.ok
    else:
        assert len(calls) == 2  # one repair attempt, never more
        assert (res.ok and any("repaired" in n for n in res.notes)) or "unusable reply" in res.error
    assert all(c.prompt_tokens > 0 for c in calls)
