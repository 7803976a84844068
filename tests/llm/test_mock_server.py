"""MockOpenAIServer faults over real HTTP (delay, 429 + Retry-After, 5xx, hang, broken bodies, outage
schedule) and the offline responder serving valid replies for any role."""

from __future__ import annotations

import http.client
import json
import time
import urllib.error
import urllib.request

import openai
import pytest

from memcore.eval.judge_role import JUDGE
from memcore.llm.client import parse_output
from memcore.llm.mock_server import MockOpenAIServer, OfflineResponder, observe
from memcore.llm.roles import get_role

MSGS = [{"role": "user", "content": "hello there"}]


def _client(srv: MockOpenAIServer, timeout: float = 30.0) -> openai.OpenAI:
    return openai.OpenAI(api_key="x", base_url=srv.base_url, max_retries=0, timeout=timeout)


def _post(srv: MockOpenAIServer, timeout: float = 30.0) -> tuple[int, dict[str, str], bytes]:
    req = urllib.request.Request(f"{srv.base_url}/chat/completions", method="POST",
                                 data=json.dumps({"model": "m", "messages": MSGS}).encode(),
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def test_default_reply_and_usage_word_counts():
    with MockOpenAIServer() as srv:
        srv.enqueue("three little words")
        r = _client(srv).chat.completions.create(model="m", messages=MSGS)
        assert r.choices[0].message.content == "three little words"
        assert (r.usage.prompt_tokens, r.usage.completion_tokens) == (2, 3)
        assert _client(srv).chat.completions.create(model="m", messages=MSGS).choices[0].message.content == "ok"
        assert srv.received == 2 and srv.faults == 0 and srv.requests[0]["messages"] == MSGS


def test_delayed_reply_is_slow_and_a_short_read_timeout_fails():
    with MockOpenAIServer() as srv:
        srv.enqueue("late", delay_s=0.3)
        t0 = time.monotonic()
        assert _client(srv).chat.completions.create(model="m", messages=MSGS).choices[0].message.content == "late"
        assert time.monotonic() - t0 >= 0.25
        srv.enqueue("later", delay_s=3.0)
        with pytest.raises(openai.APITimeoutError):
            _client(srv, timeout=0.3).chat.completions.create(model="m", messages=MSGS)


def test_429_with_retry_after_and_5xx():
    with MockOpenAIServer() as srv:
        srv.enqueue("slow down", status=429, retry_after=2)
        srv.enqueue("busy", status=503, retry_after=1.5)
        srv.enqueue("boom", status=500)
        with pytest.raises(openai.RateLimitError) as e429:
            _client(srv).chat.completions.create(model="m", messages=MSGS)
        assert e429.value.response.headers["retry-after"] == "2" and "slow down" in str(e429.value)
        status, headers, _ = _post(srv)
        assert status == 503 and headers["Retry-After"] == "1.5"
        with pytest.raises(openai.InternalServerError, match="boom"):
            _client(srv).chat.completions.create(model="m", messages=MSGS)
        assert srv.faults == 3


def test_hang_times_out_and_shutdown_is_prompt():
    srv = MockOpenAIServer()
    with srv:
        srv.hang(2)
        t0 = time.monotonic()
        with pytest.raises(openai.APITimeoutError):
            _client(srv, timeout=0.5).chat.completions.create(model="m", messages=MSGS)
        assert time.monotonic() - t0 < 4.0
        t_exit = time.monotonic()
    assert time.monotonic() - t_exit < 2.0  # the handler still hanging did not block __exit__
    assert srv.faults == 1


def test_truncated_invalid_and_dropped_bodies():
    with MockOpenAIServer() as srv:
        srv.enqueue("x", mode="truncated")
        with pytest.raises(http.client.IncompleteRead):
            _post(srv)
        srv.enqueue("x", mode="truncated")
        with pytest.raises(openai.APIConnectionError):
            _client(srv).chat.completions.create(model="m", messages=MSGS)
        srv.enqueue("x", mode="invalid_body")
        status, _, body = _post(srv)
        assert status == 200
        with pytest.raises(json.JSONDecodeError):
            json.loads(body)
        srv.enqueue(mode="drop")
        with pytest.raises(openai.APIConnectionError):
            _client(srv).chat.completions.create(model="m", messages=MSGS)
        assert srv.faults == 4
        with pytest.raises(ValueError, match="unknown mode"):
            srv.enqueue(mode="explode")


def test_outage_schedule_counts_posts_from_zero():
    with MockOpenAIServer() as srv:
        srv.fail_requests(range(2, 4), status=500)
        srv.fail_requests({5}, status=429, retry_after=1)
        statuses = [_post(srv)[0] for _ in range(7)]
        assert statuses == [200, 200, 500, 500, 200, 429, 200]
        assert srv.received == 7 and srv.faults == 3


def test_outage_wins_over_the_queue_which_waits():
    with MockOpenAIServer() as srv:
        srv.fail_requests(range(0, 1), status=503)
        srv.enqueue("queued")
        assert _post(srv)[0] == 503
        status, _, body = _post(srv)
        assert status == 200 and json.loads(body)["choices"][0]["message"]["content"] == "queued"


JUDGE_INPUTS = {"question": "Where did Caroline go on 8 May 2023?", "gold": "Paris",
                "prediction": "She went to Paris", "category": 1}
ANSWER_INPUTS = {"question": "Where did Caroline go?", "context": "8 May 2023: Caroline went to Paris.",
                 "question_date": "", "passages": [{"text": "Caroline went to Paris.", "date": "8 May 2023",
                                                    "score": 1.0, "speaker": "Caroline"}]}


class RawProvider:
    """The smallest chat provider over the openai client (independent of memcore's OpenAIProvider)."""

    def __init__(self, srv: MockOpenAIServer) -> None:
        self.client = _client(srv)

    def chat(self, messages: list[dict], **opts: object) -> str:
        r = self.client.chat.completions.create(model="m", messages=messages)
        return r.choices[0].message.content or ""


@pytest.mark.parametrize(("role_name", "inputs"), [(JUDGE.name, JUDGE_INPUTS), ("answer", ANSWER_INPUTS)])
def test_offline_responder_serves_the_offline_engine_output(role_name, inputs):
    responder = OfflineResponder()
    with MockOpenAIServer(responder=responder) as srv:
        prov = observe(RawProvider(srv), responder)
        role = get_role(role_name)
        expected = role.offline(inputs)  # first: its lazy imports take seconds on a loaded machine
        text = prov.chat(role.messages(inputs), role=role_name, inputs=inputs)
        assert len(responder) == 1 and srv.faults == 0
        assert parse_output(role, text) == expected
        if not role.json_output:
            assert text == expected.text


def test_offline_responder_through_memcore_openai_provider():
    from memcore.llm.openai_provider import OpenAIProvider

    responder = OfflineResponder()
    with MockOpenAIServer(responder=responder) as srv:
        prov = observe(OpenAIProvider("mock-model", base_url=srv.base_url), responder)
        role = JUDGE
        expected = role.offline(JUDGE_INPUTS)
        res = prov.chat(role.messages(JUDGE_INPUTS), json_mode=True, role=JUDGE.name, inputs=JUDGE_INPUTS)
        assert parse_output(role, res.text) == expected
        assert res.prompt_tokens > 0 and res.completion_tokens > 0 and srv.faults == 0


def test_offline_responder_unknown_messages_is_a_clear_500():
    with MockOpenAIServer(responder=OfflineResponder()) as srv:
        with pytest.raises(openai.InternalServerError, match="no role call was registered"):
            _client(srv).chat.completions.create(model="m", messages=MSGS)
        assert srv.faults == 1
