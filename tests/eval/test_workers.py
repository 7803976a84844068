"""Building a batch of result rows: the embedding similarity of the batch's answers is embedded in one call."""

from __future__ import annotations

from memcore.embed import CachedEmbedder, HashingEmbedder
from memcore.eval.metrics import similarity
from memcore.eval.workers import prefetch_similarity
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
    from memcore.eval.workers import prefetch_questions

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
    import memcore.eval.workers as workers
    from memcore.eval.runner import run_eval
    from memcore.settings import Settings
    from memcore.store import LanceStore

    batches: list[int] = []
    save = LanceStore.save_results
    monkeypatch.setattr(LanceStore, "save_results", lambda self, run_id, rows: batches.append(len(rows))
                        or save(self, run_id, rows))
    monkeypatch.setattr(workers, "FLUSH_ROWS", 3)  # a hosted model's batch size, scaled to the demo
    monkeypatch.setattr(workers, "FLUSH_SECONDS", 3600.0)  # no time-based flush in this test
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
