"""Smoke benchmark of the bundled local LLM (SmolLM2-135M-Instruct on llama-cpp-python).

Prints: in-process model load time, server startup time, tokens/s of a 100-token completion,
and the latency of a short JSON-ish prompt (with and without response_format=json_object).

    .venv/bin/python bench/local_llm_smoke.py [--base-url http://127.0.0.1:8088/v1]
"""

from __future__ import annotations

import argparse
import json
import time

import openai

from memcore.llm.local_server import LocalServer, free_port, model_path

LONG_PROMPT = "Write a long story about a lighthouse keeper who finds a message in a bottle."
JSON_PROMPT = (
    'Extract the facts from this message as a JSON object {"facts": [string]}.\n'
    "Message: I moved to Lisbon in May and I adopted a cat called Miso."
)


def bench_load() -> float:
    """Seconds to load the gguf in-process with llama_cpp (what the server does at startup)."""
    from llama_cpp import Llama

    t0 = time.perf_counter()
    llm = Llama(model_path=str(model_path()), n_ctx=4096, n_threads=2, verbose=False)
    elapsed = time.perf_counter() - t0
    llm.close()
    return elapsed


def bench_generation(client: openai.OpenAI, model: str) -> None:
    """Tokens/s of a 100-token completion: overall, and decode-only from the streamed first token."""
    messages = [{"role": "user", "content": LONG_PROMPT}]
    client.chat.completions.create(model=model, messages=messages, max_tokens=4)  # warm-up
    t0 = time.perf_counter()
    resp = client.chat.completions.create(model=model, messages=messages, max_tokens=100, temperature=0.0)
    elapsed = time.perf_counter() - t0
    n = resp.usage.completion_tokens
    print(
        f"100-token completion: {n} tokens in {elapsed:.2f}s = {n / elapsed:.1f} tokens/s "
        f"(prompt {resp.usage.prompt_tokens} tokens)"
    )
    t0 = time.perf_counter()
    first = 0.0
    chunks = 0
    stream = client.chat.completions.create(
        model=model, messages=messages, max_tokens=100, temperature=0.0, stream=True
    )
    for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            chunks += 1
            if not first:
                first = time.perf_counter() - t0
    total = time.perf_counter() - t0
    decode = (chunks - 1) / (total - first) if chunks > 1 and total > first else 0.0
    print(f"streamed: first token after {first * 1000:.0f} ms, decode {decode:.1f} tokens/s")


def bench_json(client: openai.OpenAI, model: str) -> None:
    """Latency of a short JSON-ish prompt, plain and with response_format=json_object."""
    messages = [{"role": "user", "content": JSON_PROMPT}]
    for label, extra in (("plain", {}), ("json_object", {"response_format": {"type": "json_object"}})):
        t0 = time.perf_counter()
        resp = client.chat.completions.create(
            model=model, messages=messages, max_tokens=96, temperature=0.0, **extra
        )
        elapsed = time.perf_counter() - t0
        text = resp.choices[0].message.content or ""
        try:
            json.loads(text)
            valid = "valid JSON"
        except ValueError:
            valid = "not JSON"
        print(
            f"JSON prompt ({label}): {elapsed * 1000:.0f} ms, {resp.usage.prompt_tokens}+"
            f"{resp.usage.completion_tokens} tokens, {valid}: {text[:100]!r}"
        )


def main() -> None:
    """Run the smoke benchmark against a running server, or one started here."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", default="", help="use a running OpenAI-compatible server")
    args = parser.parse_args()
    print(f"model load (in-process): {bench_load():.2f}s")
    server = None
    base_url = args.base_url
    if not base_url:
        server = LocalServer().start(port=free_port())
        base_url = server.base_url
        print(f"server startup (spawn to /v1/models answering): {server.startup_s:.2f}s")
    try:
        client = openai.OpenAI(base_url=base_url, api_key="not-needed", timeout=120)
        model = client.models.list().data[0].id
        bench_generation(client, model)
        bench_json(client, model)
    finally:
        if server is not None:
            server.stop()


if __name__ == "__main__":
    main()
