"""SimulatedProvider: the offline engine's outputs, after a delay, concurrently, with optional 429s."""

from __future__ import annotations

import threading
import time

import pytest

from memcore.errors import PermanentLLMError, TransientLLMError
from memcore.eval.judge_role import JUDGE
from memcore.llm.client import parse_output
from memcore.llm.roles import get_role
from memcore.llm.simulated import SimulatedProvider

JUDGE_INPUTS = {"question": "Where did Caroline go on 8 May 2023?", "gold": "Paris",
                "prediction": "She went to Paris", "category": 1}
ANSWER_INPUTS = {"question": "Where did Caroline go?", "context": "8 May 2023: Caroline went to Paris.",
                 "question_date": "", "passages": [{"text": "Caroline went to Paris.", "date": "8 May 2023",
                                                    "score": 1.0, "speaker": "Caroline"}]}


def _call(prov: SimulatedProvider, role_name: str, inputs: dict):
    role = get_role(role_name)
    return prov.chat(role.messages(inputs), json_mode=role.json_output, role=role_name, inputs=inputs)


def test_label_and_no_run_role():
    prov = SimulatedProvider(delay_ms=500, jitter_ms=100, rate_429=0.05)
    assert prov.name == "simulated" and prov.model == "offline-engine"
    assert "500±100 ms" in prov.label and "5% 429s" in prov.label
    assert "429" not in SimulatedProvider().label
    assert not hasattr(prov, "run_role")


@pytest.mark.parametrize(("role_name", "inputs"), [(JUDGE.name, JUDGE_INPUTS), ("answer", ANSWER_INPUTS)])
def test_output_equals_the_offline_engine(role_name, inputs):
    role = get_role(role_name)
    res = _call(SimulatedProvider(delay_ms=0, jitter_ms=0), role_name, inputs)
    assert parse_output(role, res.text) == role.offline(inputs)
    if not role.json_output:
        assert res.text == role.offline(inputs).text
    assert res.prompt_tokens > 10 and res.completion_tokens > 0


def test_delay_is_respected():
    prov = SimulatedProvider(delay_ms=200, jitter_ms=20)
    t0 = time.monotonic()
    _call(prov, "answer", ANSWER_INPUTS)
    assert 0.17 <= time.monotonic() - t0 < 2.0


def test_concurrent_calls_overlap():
    prov = SimulatedProvider(delay_ms=200, jitter_ms=0)
    _call(prov, "answer", ANSWER_INPUTS)  # warm the offline engine
    barrier = threading.Barrier(8)
    texts: list[str] = []

    def work() -> None:
        barrier.wait()
        texts.append(_call(prov, "answer", ANSWER_INPUTS).text)

    threads = [threading.Thread(target=work) for _ in range(8)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert time.monotonic() - t0 < 1.0  # ~one delay, not eight (1.6 s)
    assert len(set(texts)) == 1 and len(texts) == 8
    assert prov.calls == 9 and prov.peak_concurrency > 1


def test_rate_429_raises_transient_with_retry_after():
    prov = SimulatedProvider(delay_ms=1000, jitter_ms=0, rate_429=1.0, retry_after_s=2.5)
    t0 = time.monotonic()
    with pytest.raises(TransientLLMError) as e:
        _call(prov, JUDGE.name, JUDGE_INPUTS)
    assert time.monotonic() - t0 < 0.9  # a 429 comes back quickly
    assert e.value.status == 429 and e.value.retry_after == 2.5
    assert prov.calls == 1 and prov.errors_429 == 1


def test_without_a_role_is_a_permanent_error_and_unknown_options_are_refused():
    prov = SimulatedProvider(delay_ms=0, jitter_ms=0)
    with pytest.raises(PermanentLLMError, match="roles only"):
        prov.chat([{"role": "user", "content": "hi"}])
    with pytest.raises(TypeError):
        prov.chat([{"role": "user", "content": "hi"}], temprature=0.1)  # type: ignore[call-arg]
