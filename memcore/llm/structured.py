"""Structured outputs: a role's JSON schema in the form each endpoint accepts, and the prompt's example.

Forms of `response_format` (setting `llm_structured`, $MEMCORE_LLM_STRUCTURED):
- "json_schema": OpenAI structured outputs, `{"type": "json_schema", "json_schema": {name, schema,
  strict: true}}` (OpenAI, vLLM, recent llama.cpp `llama-server`, Ollama's OpenAI API);
- "json_object": `{"type": "json_object", "schema": ...}`, which llama-cpp-python's server turns into a
  grammar (llama_cpp/llama_chat_format.py: `LlamaGrammar.from_json_schema`);
- "off": `{"type": "json_object"}` without a schema (memcore's request before structured outputs);
- "auto": the first schema call probes the endpoint (`probe_order`) with a tiny schema whose only valid
  reply is known, and keeps the first form that the endpoint accepts *and* honours, per (endpoint,
  model), for the life of the process.

`strict_schema` derives the schema strict mode requires from a role's pydantic model: every object has
`additionalProperties: false` and lists all its properties as required, `$ref`s are inlined, and the
keywords strict mode rejects (default, title, ...) are dropped. `example_object` is the short example a
prompt shows instead of the schema (a small model copies a pasted schema instead of filling it).
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from pydantic import BaseModel

MODES = ("auto", "json_schema", "json_object", "off")
FORMS = ("json_schema", "json_object")  # forms that carry a schema, in the order `auto` tries them

# The one format instruction memcore adds to a JSON role's system prompt (docs/fidelity.md names it).
FORMAT_INSTRUCTION = "Reply with one JSON object only, in this form: {example}"

# The probe: a schema whose only valid reply is {"probe": "memcore"}; a model that does not see the
# schema (the prompt does not mention the value) would not write it.
PROBE_NAME = "memcore_probe"
PROBE_SCHEMA: dict[str, Any] = {"type": "object", "properties": {"probe": {"type": "string", "enum": ["memcore"]}},
                                "required": ["probe"], "additionalProperties": False}
PROBE_MESSAGES = [{"role": "user", "content": "Reply with one JSON object."}]
PROBE_REPLY = {"probe": "memcore"}

_DROP = {"default", "title", "examples", "discriminator"}


def check_mode(mode: str) -> str:
    """`mode` if it is one of MODES, else ValueError naming the choices."""
    if mode not in MODES:
        raise ValueError(f"llm_structured must be one of {', '.join(MODES)}, not {mode!r} "
                         "(Fix: set $MEMCORE_LLM_STRUCTURED to one of them)")
    return mode


@lru_cache(maxsize=256)
def _strict(model: type[BaseModel]) -> str:
    raw = model.model_json_schema()
    defs = raw.pop("$defs", {})
    return json.dumps(_tighten(raw, defs))


def strict_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The strict-mode JSON schema of a pydantic model (a fresh dict each call)."""
    return json.loads(_strict(model))


def _tighten(node: Any, defs: dict[str, Any]) -> Any:
    if isinstance(node, list):
        return [_tighten(x, defs) for x in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        target = defs[node["$ref"].rsplit("/", 1)[-1]]
        return _tighten({**target, **{k: v for k, v in node.items() if k != "$ref"}}, defs)
    out = {k: _tighten(v, defs) for k, v in node.items() if k not in _DROP and k not in ("properties", "$defs")}
    if "properties" in node:  # a map of property names (a property may be called "title")
        out["properties"] = {k: _tighten(v, defs) for k, v in node["properties"].items()}
    if out.get("type") == "object" or "properties" in out:
        out["type"] = "object"
        out.setdefault("properties", {})
        out["required"] = list(out["properties"])
        out["additionalProperties"] = False
    return out


ARRAY_BOUND = 5  # maxItems of a top-level array in a grammar-form schema
NESTED_ARRAY_BOUND = 3  # maxItems of an array inside an array's items (turn ids of one episode, ...)
ID_LENGTH = 24  # maxLength of a string inside a nested array (ids)
CHARS_PER_TOKEN = 2.5  # a low estimate of characters per token of a reply, for the string bounds
MIN_LENGTH_BOUND = 24


def bounded_schema(schema: dict[str, Any], max_tokens: int) -> dict[str, Any]:
    """The schema with length bounds, for grammar-constrained decoding (the json_object form). A small model
    under a grammar may repeat items or words until max_tokens cuts the JSON off; with every array full and
    every string at its bound, the reply still fits 80% of max_tokens (at CHARS_PER_TOKEN): arrays get
    ARRAY_BOUND items (NESTED_ARRAY_BOUND inside another array, whose strings are ids of ID_LENGTH), and the
    other strings share the rest of the budget equally (at least MIN_LENGTH_BOUND characters)."""
    slots, ids = _slots(schema)
    rest = CHARS_PER_TOKEN * max_tokens * 0.8 - ids * ID_LENGTH
    return _bound(schema, max(MIN_LENGTH_BOUND, int(rest / max(1, slots))), 0)


def _slots(node: dict[str, Any], weight: int = 1, depth: int = 0) -> tuple[int, int]:
    """(free-text string slots, id slots) in the worst case of `node` (every array full)."""
    if "enum" in node or "const" in node:
        return 0, 0
    if "anyOf" in node:
        return max((_slots(n, weight, depth) for n in node["anyOf"]), key=sum)
    kind = node.get("type")
    if kind == "object":
        parts = [_slots(v, weight, depth) for v in node.get("properties", {}).values()]
        return sum(p[0] for p in parts), sum(p[1] for p in parts)
    if kind == "array":
        return _slots(node.get("items", {}), weight * (NESTED_ARRAY_BOUND if depth else ARRAY_BOUND), depth + 1)
    if kind == "string":
        return (0, weight) if depth > 1 else (weight, 0)
    return 0, 0


def _bound(node: Any, limit: int, depth: int) -> Any:
    if isinstance(node, list):
        return [_bound(x, limit, depth) for x in node]
    if not isinstance(node, dict):
        return node
    inner = depth + (1 if node.get("type") == "array" else 0)
    out = {k: (_bound(v, limit, inner) if k != "properties" else {p: _bound(s, limit, inner) for p, s in v.items()})
           for k, v in node.items()}
    if out.get("type") == "array":
        bound = NESTED_ARRAY_BOUND if depth else ARRAY_BOUND
        out["maxItems"] = min(out.get("maxItems", bound), bound)
    if out.get("type") == "string" and "enum" not in out:
        cap = ID_LENGTH if depth > 1 else limit
        out["maxLength"] = min(out.get("maxLength", cap), cap)
    return out


def response_format(form: str, name: str, schema: dict[str, Any], max_tokens: int = 0) -> dict[str, Any]:
    """The request's `response_format` for a form ("json_schema", "json_object" or "off")."""
    if form == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": True}}
    if form == "json_object":  # a grammar: bounded, or a small model may loop until max_tokens
        return {"type": "json_object", "schema": bounded_schema(schema, max_tokens) if max_tokens else schema}
    return {"type": "json_object"}


def schema_of(request: dict[str, Any]) -> dict[str, Any] | None:
    """The schema a chat request carries in its response_format (either form), else None."""
    rf = request.get("response_format") or {}
    if rf.get("type") == "json_schema":
        return (rf.get("json_schema") or {}).get("schema")
    return rf.get("schema")


def example_text(node: dict[str, Any]) -> str:
    """A short example of a (strict) JSON schema node, in JSON syntax except where a choice is shown:
    an enum as `"a" or "b"`, a boolean as `true or false` (a single value would bias a small model)."""
    if "enum" in node:
        return " or ".join(json.dumps(v) for v in node["enum"])
    if "const" in node:
        return json.dumps(node["const"])
    if "anyOf" in node:
        return example_text(next((n for n in node["anyOf"] if n.get("type") != "null"), node["anyOf"][0]))
    kind = node.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if kind == "object":
        return "{" + ", ".join(f"{json.dumps(k)}: {example_text(v)}" for k, v in node.get("properties", {}).items()) + "}"
    if kind == "array":
        return "[" + example_text(node.get("items", {"type": "string"})) + "]"
    return {"boolean": "true or false", "integer": "0", "number": "0.0", "null": "null"}.get(kind, '"..."')


@lru_cache(maxsize=256)
def example_json(model: type[BaseModel]) -> str:
    """A short example object of the model: its field names with placeholder values (example_text)."""
    return example_text(strict_schema(model))


def format_instruction(model: type[BaseModel]) -> str:
    """The format instruction a JSON role's system prompt ends with (FORMAT_INSTRUCTION filled in)."""
    return FORMAT_INSTRUCTION.format(example=example_json(model))
