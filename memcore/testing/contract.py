"""The MemorySystem contract: the checks every registered system must pass, built-in or plugin.

Each check takes a `ContractCase` (a system name, a workbench on a temporary store with the hashing
embedder and the offline engine, and the tiny conversation) and raises `ContractViolation` with a
message naming the system and what broke. The system ingests the tiny conversation and must: be
registered and configurable with every registered retriever; emit well-formed events; be ingested
through the MemorySystem protocol alone, stopped and resumed, into the same memory; retrieve a
Trace whose items and candidates point at real turns, with candidate stages the trace declares; work
with every registered retriever; answer with text, a trace and per-stage usage holding an "answer"
stage; give the same retrieval after a restore from the store; and draw its view's structure (Ask)
and write it to a standalone HTML export.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memcore.embed import HashingEmbedder
from memcore.ingest import IngestReport, ingest_conversation
from memcore.ingest.context import adapt
from memcore.retrievers import retriever_names
from memcore.settings import Settings
from memcore.systems import BaseSystem, MemorySystem, get_system, make_config
from memcore.types import EVENT_KINDS, Answer, Conversation, Question, Trace, Turn
from memcore.viz.bundles import structure_sections
from memcore.viz.export import standalone_html
from memcore.viz.safe import esc
from memcore.workbench import Workbench


class ContractViolation(AssertionError):
    """A system broke the MemorySystem contract (the message says which system and how)."""


PROTOCOL = frozenset({n for n in vars(MemorySystem) if not n.startswith("_")} | set(MemorySystem.__annotations__))


class OnlyProtocol:
    """A system seen through the MemorySystem protocol only: reaching any other attribute is a ContractViolation
    (what the ingest driver may use of a system is the protocol, nothing else)."""

    def __init__(self, inner: Any) -> None:
        object.__setattr__(self, "_inner", inner)

    def __getattr__(self, name: str) -> Any:
        if name not in PROTOCOL:
            raise ContractViolation(f"the ingest driver reached into {name!r}, which is not in the protocol")
        return getattr(object.__getattribute__(self, "_inner"), name)


def require(ok: Any, message: str) -> None:
    """Raise ContractViolation(message) unless `ok` (asserts that survive `python -O`)."""
    if not ok:
        raise ContractViolation(message)


def tiny_conversation(conv_id: str = "tiny") -> Conversation:
    """Two sessions, two speakers, with repeated topics and dates, and three questions."""
    lines = [
        (1, "8 May, 2023", "Ana", "I adopted a puppy named Biscuit last week!"),
        (1, "8 May, 2023", "Ben", "Congrats! What breed is Biscuit?"),
        (1, "8 May, 2023", "Ana", "Biscuit is a golden retriever, very playful."),
        (1, "8 May, 2023", "Ben", "I started a pottery class at the community center."),
        (1, "8 May, 2023", "Ana", "Pottery sounds fun. I am training for the Lisbon half-marathon."),
        (1, "8 May, 2023", "Ben", "Good luck with the marathon training!"),
        (2, "25 May, 2023", "Ben", "How is Biscuit doing?"),
        (2, "25 May, 2023", "Ana", "Biscuit learned to sit yesterday. The golden retriever is smart."),
        (2, "25 May, 2023", "Ben", "My pottery teacher said my bowl was the best in class."),
        (2, "25 May, 2023", "Ana", "I ran 18 kilometres for the half-marathon on Sunday."),
    ]
    turns, counters = [], {}
    for i, (s, date, spk, text) in enumerate(lines):
        counters[s] = counters.get(s, 0) + 1
        iso = "2023-05-08T10:00:00" if s == 1 else "2023-05-25T10:00:00"
        turns.append(Turn(conv_id, f"D{s}:{counters[s]}", i, s, date, iso, spk, text))
    qs = [
        Question(f"{conv_id}:q0", conv_id, "What breed is Biscuit?", "golden retriever", ["D1:3"], 4),
        Question(f"{conv_id}:q1", conv_id, "What class did Ben start?", "pottery", ["D1:4"], 4),
        Question(f"{conv_id}:q2", conv_id, "What race is Ana training for?", "Lisbon half-marathon", ["D1:5"], 4),
    ]
    return Conversation(conv_id, ["Ana", "Ben"], turns, qs, source="test")


def contract_workbench(root: str | Path) -> Workbench:
    """A workbench on a store under `root` with the hashing embedder and the offline engine."""
    settings = Settings(store_uri=str(Path(root) / "store"), llm_provider="offline", embedder="hashing")
    return Workbench(settings, embedder=HashingEmbedder())


@dataclass
class ContractCase:
    """One system under test: its name, a workbench, the conversation, and (once built) its ingested memory."""

    name: str
    workbench: Workbench
    conv: Conversation
    _built: tuple[BaseSystem, IngestReport] | None = field(default=None, repr=False)

    def built(self) -> tuple[BaseSystem, IngestReport]:
        """The system after ingesting the conversation in memory (its writes are in the store); built once."""
        if self._built is None:
            system = get_system(self.name)(self.workbench.runtime, self.conv, make_config(self.name))
            self._built = (system, self.ingest(system))
        return self._built

    def ingest(self, system: Any, **kw: Any) -> IngestReport:
        """Ingest with the workbench's store and ledger (memcore.ingest.ingest_conversation; `kw` as there)."""
        return ingest_conversation(system, self.workbench.store, self.workbench.ledger, **kw)


def contract_case(name: str, root: str | Path, conv: Conversation | None = None) -> ContractCase:
    """A ContractCase for system `name` on a fresh store under `root` (the tiny conversation by default)."""
    return ContractCase(name, contract_workbench(root), conv or tiny_conversation())


def check_registered_and_configurable(case: ContractCase) -> None:
    """Registered under its name with a title; its config defaults to dense, is JSON-able and takes every
    registered retriever; an unknown retriever is rejected naming the registered ones."""
    name = case.name
    cls = get_system(name)
    require(cls.name == name and cls.title, f"{name}: class name {cls.name!r} / title {cls.title!r}")
    require(isinstance(cls.rank, int), f"{name}: rank must be an int, not {cls.rank!r}")
    cfg = make_config(name)
    require(cfg.retriever == "dense", f"{name}: default retriever {cfg.retriever!r}, not 'dense' (the papers')")
    json.dumps(cfg.construction_dict(), default=str)
    for retriever in retriever_names():
        require(make_config(name, retriever=retriever).retriever == retriever, f"{name}: retriever {retriever}")
    try:
        make_config(name, retriever="telepathy")
    except ValueError as e:
        require(re.search("retriever must be one of", str(e)), f"{name}: unclear error for a bad retriever: {e}")
    else:
        raise ContractViolation(f"{name}: accepted the unknown retriever 'telepathy'")


def check_ingest_emits_well_formed_events(case: ContractCase) -> None:
    """Ingest completes every turn and emits events of known kinds, on real turns and steps, with reasons."""
    name, wb, conv = case.name, case.workbench, case.conv
    system, report = case.built()
    require(isinstance(system, MemorySystem), f"{name}: not a MemorySystem")
    require(report.complete and report.turns_done == len(conv.turns), f"{name}: ingest incomplete: {report}")
    events = wb.store.events(system.space, conv.id)
    require(events, f"{name} emitted no events")
    turn_ids = {t.turn_id for t in conv.turns}
    for e in events:
        require(e.kind in EVENT_KINDS, f"{name}: unknown event kind in {e}")
        require(e.system == name and e.conv_id == conv.id, f"{name}: event of another memory: {e}")
        require(1 <= e.step <= len(conv.turns) + 1, f"{name}: event step out of range: {e}")
        require(e.item_ids and all(isinstance(i, str) and i for i in e.item_ids), f"{name}: event ids: {e}")
        require(isinstance(e.reason, str) and e.reason.strip(), f"{name}: event without a reason: {e}")
        require(e.turn_id in turn_ids or (e.turn_id == "" and e.step == len(conv.turns) + 1),
                f"{name}: event on an unknown turn: {e}")
        json.dumps(e.data)
    require(wb.is_ingested(name, conv), f"{name}: the workbench does not see the memory as complete")


def _memory(case: ContractCase, system: Any) -> tuple[list, list]:
    """The stored events and items of a system's memory (comparable across two stores)."""
    store, space = case.workbench.store, system.space
    events = [(e.step, e.kind, e.item_kind, tuple(e.item_ids), e.reason) for e in store.events(space, case.conv.id)]
    items = sorted((it.kind, it.id, it.text, tuple(it.turn_ids), it.updated_step)
                   for kind in get_system(case.name).kinds for it in store.items(space, case.conv.id, kind))
    return events, items


def check_stop_and_resume_through_the_protocol(case: ContractCase) -> None:
    """Seen through the MemorySystem protocol alone, the system is ingested 4 turns, stopped, and resumed by a
    new instance (as after a kill): the memory is the one an uninterrupted ingest builds. (A system written to
    the protocol before TurnContext is seen through its adapter, memcore.ingest.context.LegacySystem.)"""
    name, conv = case.name, case.conv
    whole, _ = case.built()
    other = ContractCase(name, contract_workbench(Path(case.workbench.settings.store_uri).parent / "resumed"), conv)
    cls, cfg = get_system(name), make_config(name)
    part = other.ingest(OnlyProtocol(adapt(cls(other.workbench.runtime, conv, cfg))), stop_after=4)
    require((part.turns_done, part.complete) == (4, False), f"{name}: stop after 4 turns gave {part}")
    rest = other.ingest(OnlyProtocol(adapt(cls(other.workbench.runtime, conv, cfg))))
    require(rest.complete and rest.resumed_from == 4, f"{name}: the resumed ingest gave {rest}")
    require(_memory(other, whole) == _memory(case, whole), f"{name}: stopped and resumed, the memory differs from "
            "one uninterrupted ingest's")


def check_retrieve_returns_a_consistent_trace(case: ContractCase) -> None:
    """Every question gets a Trace with items on real turns, candidates at declared stages (dropped ones
    with a reason), and a JSON round trip that gives the same trace."""
    name, conv = case.name, case.conv
    system, _ = case.built()
    turn_ids = {t.turn_id for t in conv.turns}
    for q in conv.questions:
        tr = system.retrieve(q)
        require(isinstance(tr, Trace) and tr.system == name and tr.question == q.text, f"{name}: trace header")
        require(tr.items, f"{name} retrieved nothing for {q.text!r}")
        require(any(i.turn_ids for i in tr.items), f"{name}: no retrieved item points at a turn")
        for it in tr.items:
            require(set(it.turn_ids) <= turn_ids, f"{name}: item on unknown turns: {it}")
        require(len(set(tr.stages)) == len(tr.stages), f"{name}: repeated stages {tr.stages}")
        for c in tr.candidates:
            require(c.stage in tr.stages, f"{name}: candidate stage {c.stage!r} not in {tr.stages}")
            require(set(c.turn_ids) <= turn_ids and c.rank >= 1, f"{name}: candidate {c}")
            require(c.kept or c.reason, f"{name}: dropped candidate {c.id} at {c.stage} without a reason")
        require(Trace.from_dict(json.loads(json.dumps(tr.to_dict(), default=str))) == tr,
                f"{name}: the trace does not survive a JSON round trip")


def check_every_registered_retriever_works(case: ContractCase) -> None:
    """With each registered retriever the system retrieves items and the trace names that retriever."""
    name, wb, conv = case.name, case.workbench, case.conv
    wb.ingest(name, conv)
    for retriever in retriever_names():
        tr = wb.system(name, conv, retriever=retriever).retrieve(conv.questions[1])
        require(tr.retriever == retriever and tr.items, f"{name} with the {retriever} retriever")


def check_answer_has_text_trace_and_usage(case: ContractCase) -> None:
    """An answer has text, a trace with items and context, and usage by stage with an "answer" stage."""
    name, conv = case.name, case.conv
    system, _ = case.built()
    ans = system.answer(conv.questions[0])
    require(isinstance(ans, Answer) and isinstance(ans.text, str) and ans.text.strip(), f"{name}: no answer text")
    require(ans.trace.items and ans.trace.context, f"{name}: the answer's trace has no items or no context")
    require("answer" in ans.usage and ans.usage["answer"].calls >= 1, f"{name}: no 'answer' usage: {ans.usage}")
    require(set(ans.usage) <= {"construction", "retrieval", "answer", "judge"}, f"{name}: stages {set(ans.usage)}")
    json.dumps(ans.to_dict(), default=str)


def check_restore_gives_the_same_retrieval(case: ContractCase) -> None:
    """A system restored from the store retrieves the same items, turns and context as the one that built it."""
    name, wb, conv = case.name, case.workbench, case.conv
    system, _ = case.built()
    restored = wb.system(name, conv)
    require(restored is not system, f"{name}: the workbench returned the building instance")
    for q in conv.questions:
        a, b = system.retrieve(q), restored.retrieve(q)
        require([i.id for i in b.items] == [i.id for i in a.items], f"{name}: restored items differ for {q.text!r}")
        require(b.context_turn_ids() == a.context_turn_ids(), f"{name}: restored context turns differ")
        require((b.context or "") == (a.context or ""), f"{name}: restored context differs for {q.text!r}")


def check_view_draws_and_exports(case: ContractCase) -> None:
    """The system's view (its own or the default) turns a real trace into titled sections that the
    standalone HTML export writes."""
    name, conv = case.name, case.conv
    system, _ = case.built()
    texts = {t.turn_id: f"{t.speaker}: {t.content}" for t in conv.turns}
    sections = structure_sections(name, system.retrieve(conv.questions[0]), texts)
    require(sections and all(isinstance(t, str) for t, _ in sections), f"{name}: view sections {sections!r}")
    html = standalone_html(f"{name} structure", sections)
    missing = [t for t, _ in sections if t and f"<h2>{esc(t)}</h2>" not in html]
    require(not missing, f"{name}: the export lost the sections {missing}")


CHECKS: dict[str, Callable[[ContractCase], None]] = {
    "registered_and_configurable": check_registered_and_configurable,
    "ingest_emits_well_formed_events": check_ingest_emits_well_formed_events,
    "stop_and_resume_through_the_protocol": check_stop_and_resume_through_the_protocol,
    "retrieve_returns_a_consistent_trace": check_retrieve_returns_a_consistent_trace,
    "every_registered_retriever_works": check_every_registered_retriever_works,
    "answer_has_text_trace_and_usage": check_answer_has_text_trace_and_usage,
    "restore_gives_the_same_retrieval": check_restore_gives_the_same_retrieval,
    "view_draws_and_exports": check_view_draws_and_exports,
}


def run_contract(name: str, checks: list[str] | None = None) -> list[str]:
    """Run the contract's checks (all by default) on system `name`, each on a fresh temporary store.
    Returns the checks that passed; raises ContractViolation listing every check that failed."""
    failed, passed = [], []
    for check in checks or list(CHECKS):
        with tempfile.TemporaryDirectory(prefix=f"memcore-contract-{name}-") as tmp:
            try:
                CHECKS[check](contract_case(name, tmp))
            except Exception as e:
                failed.append(f"{check}: {type(e).__name__}: {e}")
            else:
                passed.append(check)
    if failed:
        raise ContractViolation(f"{name} breaks the MemorySystem contract:\n" + "\n".join(failed))
    return passed
