"""Building a batch of result rows: the embedding similarity of the batch's answers is embedded in one call."""

from __future__ import annotations

import sys

from memcore.embed import CachedEmbedder, HashingEmbedder
from memcore.eval.evaluate import prefetch_similarity
from memcore.eval.metrics import similarity
from memcore.types import Answer, Question, Trace


class Counting(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__(dim=32)
        self.calls: list[list[str]] = []

    def embed(self, texts):
        self.calls.append(list(texts))
        return super().embed(texts)


def _answered() -> list[tuple[Question, Answer]]:
    qs = [Question("c:q1", "c", "When?", "7 May 2023", ["D1:3"], 2),
          Question("c:q2", "c", "Where?", "Sweden", ["D1:4"], 4),
          Question("c:q3", "c", "Who?", "Not mentioned in the conversation", [], 5),  # abstention: no similarity
          Question("c:q4", "c", "What?", "a dog", ["D1:5"], 1)]
    texts = ["on 7 May 2023", "Sweden", "Not mentioned", ""]  # an empty answer: similarity 0, nothing embedded
    return [(q, Answer(t, Trace(system="s", question=q.text))) for q, t in zip(qs, texts, strict=True)]


def test_a_batch_embeds_its_similarity_texts_in_one_call_and_the_rows_read_the_cache(tmp_path) -> None:
    inner = Counting()
    cached = CachedEmbedder(inner, tmp_path)
    answered = _answered()
    prefetch_similarity(cached, answered)
    assert inner.calls == [["on 7 May 2023", "7 May 2023", "Sweden"]]  # each text once, abstention left out
    got = [similarity(a.text, q.answer, cached) for q, a in answered if str(q.category) != "5"]
    assert len(inner.calls) == 1  # every row's pair came from the cache
    plain = [similarity(a.text, q.answer, Counting()) for q, a in answered if str(q.category) != "5"]
    assert got == plain  # the same values as embedding each pair on its own


def test_no_prefetch_without_a_cache_or_on_failure(tmp_path) -> None:
    inner = Counting()
    prefetch_similarity(inner, _answered())
    prefetch_similarity(None, _answered())
    assert inner.calls == []  # without the cache the vectors would be computed twice

    class Broken(HashingEmbedder):
        def embed(self, texts):
            raise RuntimeError("endpoint down")

    prefetch_similarity(CachedEmbedder(Broken(), tmp_path), _answered())  # left to each row's own call


def test_a_conversations_questions_and_golds_are_embedded_in_one_call_before_the_systems(tmp_path) -> None:
    from memcore.eval.evaluate import prefetch_questions

    inner = Counting()
    cached = CachedEmbedder(inner, tmp_path)
    qs = [q for q, _ in _answered()]
    prefetch_questions(cached, qs + qs[:1])  # a question asked of two systems: once
    assert inner.calls == [["When?", "Where?", "Who?", "What?", "7 May 2023", "Sweden", "a dog"]]  # no abstention gold
    vecs = cached.embed(["What?", "Sweden"])  # a system's query vector, a row's gold: from the cache
    assert len(inner.calls) == 1
    assert (vecs == Counting().embed(["What?", "Sweden"])).all()  # the vectors of embedding them on their own
    prefetch_questions(inner, qs)
    prefetch_questions(None, qs)
    assert len(inner.calls) == 1  # without the cache nothing is embedded ahead

    class Broken(HashingEmbedder):
        def embed(self, texts):
            raise RuntimeError("endpoint down")

    prefetch_questions(CachedEmbedder(Broken(), tmp_path / "b"), qs)  # left to the systems and rows, which meet it


def test_offline_rows_are_saved_in_batches_bounded_by_time_a_hosted_models_every_twenty(tmp_path, monkeypatch) -> None:
    import memcore.eval.evaluate as evaluate
    from memcore.eval.runner import run_eval
    from memcore.settings import Settings
    from memcore.store import LanceStore

    batches: list[int] = []
    save = LanceStore.save_results
    monkeypatch.setattr(LanceStore, "save_results", lambda self, run_id, rows: batches.append(len(rows))
                        or save(self, run_id, rows))
    monkeypatch.setattr(evaluate, "FLUSH_ROWS", 3)  # a hosted model's batch size, scaled to the demo
    monkeypatch.setattr(evaluate, "FLUSH_SECONDS", 3600.0)  # no time-based flush in this test
    res = run_eval(Settings(store_uri=str(tmp_path / "s"), llm_provider="offline", embedder="hashing"), "demo",
                   systems=["naive_rag"])
    assert res["complete"] and sum(batches) == res["questions_done"] > 3
    assert batches == [res["questions_done"]]  # offline: one batch (at most FLUSH_SECONDS of answers), not 3 a time


def test_one_conversations_systems_split_over_two_processes_equal_the_sequential_run(tmp_path) -> None:
    """workers=2 on one conversation: this process and a spawned one each take some of its systems (the
    parent's Workbench ingests only its share); the results equal one process's, and a stopped split run
    resumes (split again) to the same results."""
    from memcore.eval.report import strip_timing
    from memcore.eval.runner import run_eval
    from memcore.settings import Settings
    from memcore.workbench import Workbench

    def settings(name: str) -> Settings:
        return Settings(store_uri=str(tmp_path / name), llm_provider="offline", embedder="hashing")

    def comparable(res: dict) -> dict:
        return {k: v for k, v in strip_timing(res).items() if k != "store"}

    systems = ["naive_rag", "com", "recmem"]
    one = run_eval(settings("one"), "demo", systems=systems, limit=4)
    wb = Workbench(settings("two"))
    here: list[str] = []
    ingest = wb.ingest
    wb.ingest = lambda name, *a, **k: here.append(name) or ingest(name, *a, **k)
    two = run_eval(settings("two"), "demo", systems=systems, limit=4, workers=2, workbench=wb)
    assert two["complete"] and not two["errors"]
    assert comparable(two) == comparable(one)
    assert here and set(here) < set(systems)  # the rest were built and answered in the spawned process
    assert set(two["timing"]["systems_seconds"]) == set(systems)  # every system's timing reached this process

    answered = []
    part = run_eval(settings("three"), "demo", systems=systems, limit=4, workers=2,
                    progress=lambda d, t, info: answered.append(d), should_stop=lambda: len(answered) > 2)
    assert not part["complete"]
    final = run_eval(settings("three"), "demo", systems=systems, limit=4, workers=2)
    assert final["complete"] and comparable(final) == comparable(one)


# ------------------------------------------------------------------ the default: how many processes, and where
def _settings(tmp_path, name: str):
    from memcore.settings import Settings

    return Settings(store_uri=str(tmp_path / name), llm_provider="offline", embedder="hashing")


def _comparable(res: dict) -> dict:
    from memcore.eval.report import strip_timing

    return {k: v for k, v in strip_timing(res).items() if k != "store"}


def test_auto_workers_are_the_usable_cores_for_one_conversations_systems_offline_else_one(monkeypatch) -> None:
    import threading

    import pytest

    import memcore.eval.processes as workers
    from memcore.errors import ConfigError
    from memcore.eval.processes import WORKERS_ENV, choose_workers

    monkeypatch.delenv(WORKERS_ENV, raising=False)
    monkeypatch.setattr(workers, "usable_cores", lambda: 4)
    assert choose_workers("auto", offline=True, systems=9)[0] == 4
    assert choose_workers("auto", offline=True, systems=3)[0] == 3  # at most one process per system
    assert choose_workers("auto", offline=True, systems=1)[0] == 1
    assert choose_workers("auto", offline=False, systems=9) == (1, "auto: one process (a hosted model: its calls "
                                                                   "overlap, LLM concurrency)")
    assert choose_workers("auto", offline=True, systems=9, conversations=2)[0] == 1
    assert choose_workers("auto", offline=True, systems=9, engine="ray")[0] == 1  # Ray's own default: all cores
    assert choose_workers(1, offline=True, systems=9) == (1, "given")  # 1 forces one process
    assert choose_workers("3", offline=False, systems=9) == (3, "given")  # a number is taken as given
    got: list = []
    thread = threading.Thread(target=lambda: got.append(choose_workers("auto", offline=True, systems=9)))
    thread.start()
    thread.join()
    assert got[0][0] == 1  # a server's background job (the app's Benchmark page) keeps one process
    monkeypatch.setattr(workers, "usable_cores", lambda: 1)
    assert choose_workers("auto", offline=True, systems=9)[0] == 1
    monkeypatch.setenv(WORKERS_ENV, "2")
    assert choose_workers("auto", offline=True, systems=9) == (2, f"${WORKERS_ENV}")
    monkeypatch.setenv(WORKERS_ENV, "auto")
    assert choose_workers("auto", offline=True, systems=9)[0] == 1  # auto again: one usable core here
    for bad in ("0", "two", -1):
        with pytest.raises(ConfigError, match="workers must be"):
            choose_workers(bad, offline=True, systems=9)


def test_run_evals_default_splits_an_offline_run_and_keeps_a_fake_models_in_one_process(tmp_path, monkeypatch) -> None:
    import memcore.eval.processes as workers
    from memcore.eval.processes import WORKERS_ENV
    from memcore.eval.runner import run_eval
    from memcore.llm.fake import FakeLLM
    from memcore.workbench import Workbench

    monkeypatch.delenv(WORKERS_ENV, raising=False)
    monkeypatch.setattr(workers, "usable_cores", lambda: 2)
    systems = ["naive_rag", "com"]
    one = run_eval(_settings(tmp_path, "one"), "demo", systems=systems, limit=3, workers=1)
    assert one["timing"]["workers"] == {"processes": 1, "why": "given"}
    auto = run_eval(_settings(tmp_path, "auto"), "demo", systems=systems, limit=3)
    placed = auto["timing"]["workers"]
    assert placed["processes"] == 2 and placed["why"].startswith("auto: offline engine")
    assert sorted(placed["here"] + placed["spawned"]) == sorted(systems) and placed["spawned"]
    assert _comparable(auto) == _comparable(one)

    wb = Workbench(_settings(tmp_path, "fake"), provider=FakeLLM(fallback="offline"))
    fake = run_eval(wb.settings, "demo", systems=systems, limit=3, workbench=wb)
    assert fake["timing"]["workers"]["processes"] == 1  # a scripted model cannot be copied into another process


def test_a_system_registered_at_run_time_is_evaluated_here_with_the_rows_of_one_process(tmp_path) -> None:
    """A spawned process sees the installed systems only: one registered here is handed back and evaluated in
    this process, never dropped or failed; the results equal a one-process run's."""
    from memcore.eval.runner import run_eval
    from memcore.systems import register_system, unregister_system
    from memcore.systems.naive_rag import NaiveRAGSystem

    class RuntimeRag(NaiveRAGSystem):
        name = "test_runtime_rag"

    register_system(RuntimeRag)
    try:
        systems = ["recmem", RuntimeRag.name]  # recmem (3 memory kinds) here first, the other to the spawned one
        one = run_eval(_settings(tmp_path, "one"), "demo", systems=systems, limit=3, workers=1)
        two = run_eval(_settings(tmp_path, "two"), "demo", systems=systems, limit=3, workers=2)
    finally:
        unregister_system(RuntimeRag.name)
    assert two["complete"] and not two["errors"]
    assert _comparable(two) == _comparable(one)
    placed = two["timing"]["workers"]
    assert placed["here"] == systems and placed["spawned"] == []
    assert f"system:{RuntimeRag.name}" in placed["handed_back"][RuntimeRag.name]


def test_process_needs_name_who_registered_the_system_its_retriever_and_the_metrics() -> None:
    from memcore.eval.processes import process_needs
    from memcore.retrievers import Retriever, dense_search, register_retriever, unregister_retriever

    job = {"variants": {"naive_rag[retriever=mine]": "naive_rag"},
           "configs": {"naive_rag[retriever=mine]": {"retriever": "mine"}}}
    register_retriever(Retriever("mine", dense_search))
    try:
        here = process_needs(job, "naive_rag[retriever=mine]")
    finally:
        unregister_retriever("mine")
    assert here["system:naive_rag"] == "memcore.systems.naive_rag" and here["metric:f1"]
    assert here["retriever:mine"] == __name__  # registered by this test: a spawned process would not have it
    assert process_needs(job, "naive_rag[retriever=mine]") != here  # as a process without it sees it
    assert process_needs({"configs": {}}, "no_such_system") == {"system:no_such_system": ""}


def test_a_killed_worker_fails_the_run_and_the_same_call_resumes_it(tmp_path) -> None:
    """The spawned process is killed while this one embeds the turns (before any system: deterministic): the run
    fails naming the dead worker, its record says failed, and the same call again completes it with the rows of
    one process."""
    import multiprocessing as mp
    import os
    import signal

    import pytest

    from memcore.eval.run_record import list_runs
    from memcore.eval.runner import run_eval
    from memcore.store import LanceStore

    systems = ["naive_rag", "com", "recmem"]
    one = run_eval(_settings(tmp_path, "one"), "demo", systems=systems, limit=4, workers=1)
    killed: list[int] = []

    def kill_the_worker(done: int, total: int, info: dict) -> None:
        if not killed:
            for p in mp.active_children():
                killed.append(p.pid)
                os.kill(p.pid, signal.SIGKILL)

    with pytest.raises(RuntimeError, match="a worker process died") as died:
        run_eval(_settings(tmp_path, "two"), "demo", systems=systems, limit=4, workers=2, progress=kill_the_worker)
    assert killed and "the same call resumes" in str(died.value)
    runs = list_runs(LanceStore(str(tmp_path / "two")))
    assert [r["state"] for r in runs] == ["failed"] and "worker process died" in runs[0]["message"]
    again = run_eval(_settings(tmp_path, "two"), "demo", systems=systems, limit=4, workers=2)
    assert again["complete"] and _comparable(again) == _comparable(one)


def test_several_conversations_over_workers_hand_a_run_time_system_back_too(tmp_path, two_demo_chats) -> None:
    """workers=2 on two conversations (each process takes whole ones): the system only this process registers
    is evaluated here after them, with the rows of one process."""
    from memcore.eval.runner import run_eval
    from memcore.systems import register_system, unregister_system
    from memcore.systems.naive_rag import NaiveRAGSystem

    path = two_demo_chats

    class RuntimeRag(NaiveRAGSystem):
        name = "test_runtime_rag2"

    register_system(RuntimeRag)
    try:
        systems = ["naive_rag", RuntimeRag.name]
        one = run_eval(_settings(tmp_path, "one"), "jsonl", path, systems, limit=2, workers=1)
        two = run_eval(_settings(tmp_path, "two"), "jsonl", path, systems, limit=2, workers=2)
    finally:
        unregister_system(RuntimeRag.name)
    assert two["complete"] and not two["errors"] and two["conversations"] == ["demo", "demo2"]
    assert _comparable(two) == _comparable(one)
    assert list(two["timing"]["workers"]["handed_back"]) == [RuntimeRag.name]


def test_workers_start_without_re_running_this_process_main(tmp_path, monkeypatch, two_demo_chats) -> None:
    """A main module that fails when run again (a Streamlit page AppTest or a server left in sys.modules, a script
    with top-level work): spawn re-ran it in each worker, which died; the workers start without it, for one
    conversation's systems (run_split) and for several conversations (run_parallel), with one process's rows."""
    import types

    from memcore.eval.runner import run_eval

    script = tmp_path / "page.py"
    script.write_text("raise SystemExit('re-ran the parent main module')\n")
    page = types.ModuleType("__main__")
    page.__file__ = str(script)
    monkeypatch.setitem(sys.modules, "__main__", page)
    systems = ["naive_rag", "com"]
    one = run_eval(_settings(tmp_path, "one"), "demo", systems=systems, limit=2, workers=1)
    split = run_eval(_settings(tmp_path, "split"), "demo", systems=systems, limit=2, workers=2)
    assert split["timing"]["workers"]["processes"] == 2 and split["timing"]["workers"]["spawned"]
    assert _comparable(split) == _comparable(one)
    both = run_eval(_settings(tmp_path, "both"), "jsonl", two_demo_chats, systems=systems, limit=2, workers=2)
    assert both["complete"] and sys.modules["__main__"] is page
