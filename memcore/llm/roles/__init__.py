"""The registry of LLM prompt roles.

A Role is one kind of LLM call a memory system makes (episode summary, judge, ...). It
owns the prompt template, the pydantic model of its output, and the offline engine's
implementation. Systems never build prompts by hand: they call
`LLMClient.run(role_name, inputs, stage=...)`, which renders the prompt for real models
and hands the inputs to the offline engine (`role.run_offline`), which computes its own cues. Role modules register themselves
with `register`; the table lives in the one registry (memcore.registry, kind "role"; `ROLES` is a live view of it).
"""

from __future__ import annotations

import importlib
import json
import pkgutil
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from memcore import registry
from memcore.llm.structured import format_instruction, strict_schema


class TextOutput(BaseModel):
    """Output of roles that answer in free text."""

    text: str = ""


@dataclass(frozen=True)
class Role:
    """One prompt role: template, output schema and offline implementation.

    - `system` and `user` are str.format templates over the inputs dict (values that are
      lists or dicts are rendered as JSON or numbered lines by `render_value`).
    - `output` is a pydantic model; `json_output=False` roles put the reply in `.text`.
    - `offline(inputs) -> output instance` implements the role without a model; with
      `offline_embedder=True` it is `offline(inputs, embedder)` and computes the similarities it
      needs from the inputs (the offline engine passes the runtime's embedder). Its inputs are a
      real model's: a system never computes anything for the offline rules alone.
    - `offline_note`: how the offline rule decides where the paper's LLM judges (e.g. "similarity
      threshold instead of judgement"); shown next to the events of offline-built memories.
    - `fallback(inputs) -> output instance` is used, with `llm_unusable=fallback`, when a real
      model's reply cannot be parsed even after one repair attempt (named in the result and ledger).
    - `temperature` is the role's sampling temperature as its paper sets it (0 unless stated).
    - `may_be_empty`: whether an empty output (no field set) is a legitimate answer of this role
      (e.g. no facts worth keeping); such replies are counted (ledger outcome "empty"). Roles
      that must return something require it in their output model, so an empty reply fails validation.
    """

    name: str
    system: str
    user: str
    output: type[BaseModel]
    offline: Callable[..., BaseModel]
    fallback: Callable[[dict[str, Any]], BaseModel] | None = None
    json_output: bool = True
    max_tokens: int = 512
    temperature: float = 0.0  # the paper's sampling temperature for this role (callers may override)
    may_be_empty: bool = False
    description: str = ""
    tags: tuple[str, ...] = field(default_factory=tuple)
    offline_embedder: bool = False
    offline_note: str = ""

    def messages(self, inputs: dict[str, Any]) -> list[dict[str, str]]:
        """The chat messages sent to a real model for these inputs."""
        values = {k: render_value(v) for k, v in inputs.items()}
        sys_text = self.system.format(**values)
        if self.json_output:  # memcore's format instruction: a short example, never the raw schema
            sys_text += "\n" + format_instruction(self.output)
        user = {"role": "user", "content": self.user.format(**values)}
        return [{"role": "system", "content": sys_text}, user] if sys_text else [user]  # no empty system message

    def schema(self) -> dict[str, Any] | None:
        """The strict JSON schema sent with the request (structured outputs); None for free-text roles."""
        return strict_schema(self.output) if self.json_output else None

    def run_offline(self, inputs: dict[str, Any], embedder: Any = None) -> BaseModel:
        """The offline rule's output for these inputs (rules that compute similarities get the embedder)."""
        if not self.offline_embedder:
            return self.offline(inputs)
        if embedder is None:
            raise ValueError(f"the offline rule of {self.name!r} computes similarities and needs the runtime's "
                             "embedder: build the client with make_client(..., embedder=...) or "
                             "OfflineEngine(embedder)")
        return self.offline(inputs, embedder)

    def can_fall_back(self) -> bool:
        """Whether `llm_unusable=fallback` has something to use for this role (see `default`)."""
        if self.fallback is not None:
            return True
        try:
            self.output()
        except ValidationError:
            return False
        return True

    def default(self, inputs: dict[str, Any]) -> tuple[BaseModel, str] | None:
        """What `llm_unusable=fallback` uses for an unusable reply, and its name: the role's declared
        fallback ("the role's fallback"), else an empty output ("an empty output"); None when the output
        has required fields and the role declares no fallback (the call then fails). Never the offline rules."""
        if self.fallback is not None:
            return self.fallback(inputs), "the role's fallback"
        try:
            return self.output(), "an empty output"
        except ValidationError:
            return None


def render_value(v: Any) -> str:
    """Render an input value for a prompt: lists as numbered lines, dicts as JSON."""
    if isinstance(v, str):
        return v
    if isinstance(v, list):
        return "\n".join(
            f"{i + 1}. {x if isinstance(x, str) else json.dumps(x, ensure_ascii=False)}"
            for i, x in enumerate(v)
        )
    if isinstance(v, dict):
        return json.dumps(v, ensure_ascii=False)
    return str(v)


KIND = "role"
_LOADERS: list[Callable[[], object]] = []  # registries above this layer whose modules register roles


def _import_role_modules() -> None:
    for mod in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{mod.name}")


registry.define(KIND, "LLM role", load=_import_role_modules)
ROLES = registry.Table(KIND)  # name -> Role (a live view of the registry)


def add_loader(loader: Callable[[], object]) -> None:
    """Have `load_all` also call `loader` (once per load): the systems registry adds its own, so that a
    lookup by name finds the roles a system's package registers (memcore/systems/<name>/roles.py)."""
    if loader not in _LOADERS:
        _LOADERS.append(loader)


def register(role: Role) -> Role:
    """Add a role to the registry (role names are unique: another role under a taken name raises
    registry.NameTaken, naming both owners)."""
    return registry.register(KIND, role.name, role, skip=("memcore.llm.roles",))


def unregister(name: str) -> Role | None:
    """Remove a role (tests that register one for a while); returns it."""
    return registry.unregister(KIND, name)


def get_role(name: str) -> Role:
    """The registered role with this name; imports every role module on first use. A name already registered is
    returned without running the loaders again (a name is registered once: they could not change it; the
    offline conv-26 eval looks roles up ~14,000 times, each load sorting the systems)."""
    registry.ensure(KIND)
    try:
        return ROLES[name]
    except KeyError:
        pass
    load_all()
    try:
        return ROLES[name]
    except KeyError:
        raise KeyError(f"unknown LLM role {name!r}; known: {sorted(ROLES)}") from None


def load_all() -> MutableMapping[str, Role]:
    """Import every module in memcore.llm.roles so that their roles are registered; the roles (`ROLES`).

    Roles defined above the LLM layer register when their module is imported: each system's own
    (memcore/systems/<name>/roles.py, imported with its package; the systems registry adds itself with
    `add_loader`, so every system's roles are found once memcore.systems is imported) and the evaluation's
    `judge` (memcore.eval.judge_role, imported by memcore.eval.judge).
    """
    registry.ensure(KIND)
    for loader in _LOADERS:
        loader()
    return ROLES
