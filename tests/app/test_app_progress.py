"""Build progress in the app (issue 23 item 6): a build job reports the shared embedding per batch and each
system's turns one by one with a time estimate; Ask and Compare offer "Build all selected"."""

from __future__ import annotations

import pytest

from memcore.datasets import load_demo
from memcore.ingest import EMBED_BATCH
from memcore.settings import Settings
from memcore.workbench import Workbench
from tests.app.test_app_pages import errors, home_with_demo
from ui import jobs, state

pytestmark = pytest.mark.usefixtures("app_env")  # temp store, hashing embedder, offline engine


def test_a_build_job_reports_each_batch_and_each_turn_as_it_goes(monkeypatch):
    wb = Workbench(Settings())
    conv = wb.load_demo()
    n = len(conv.turns)
    seen: list[tuple] = []
    real = jobs.Job.report

    bar: list[float] = []

    def spy(self, step, done, total, unit):
        real(self, step, done, total, unit)
        seen.append((self.message, step, done, total, unit, self.progress_text()))
        bar.append(self.fraction)

    monkeypatch.setattr(jobs.Job, "report", spy)
    state.start_ingest(wb, ["naive_rag", "com"], conv)
    job = jobs.wait(state.ingest_job_id(conv), 180)
    assert job.status == jobs.DONE, job.error
    embedding = [d for _, s, d, *_ in seen if s.startswith("embedding turns")]
    assert embedding == [*range(EMBED_BATCH, n, EMBED_BATCH), n]
    for i, name in enumerate(["naive_rag", "com"]):
        turns = [(d, t, u) for m, s, d, t, u, _ in seen if m.startswith(name) and s == "building memory"]
        assert turns == [(d, n, "turns") for d in range(1, n + 1)], name  # one report per turn
        assert any(m == f"{name} (system {i + 1} of 2)" for m, *_ in seen)
    texts = [t for *_, t in seen if "building memory" in t]
    assert texts[0].endswith("estimating time left…")  # no estimate from the first turns
    assert job.fraction == 1.0
    assert bar[0] > 0 and bar == sorted(bar)  # the bar moves from the first embedded batch on, never back


def test_job_eta_and_text():
    job = jobs.Job("j", "t", message="xmemory (system 2 of 3)")
    job.report("building memory", 10, 90, "turns")
    assert job.eta() is None and job.progress_text().endswith("estimating time left…")
    job.step_started -= 40  # 40 s for 20 more turns: 2 s a turn, 60 turns left
    job.report("building memory", 30, 90, "turns")
    assert 119 <= job.eta() <= 121
    assert job.progress_text() == "xmemory (system 2 of 3) · building memory: 30/90 turns · about 2 min left"
    job.report("answering", 0, 10, "questions")
    job.report("answering", 5, 10, "questions")
    assert job.eta() is None  # 5 questions in a burst, under ETA_MIN_S: no estimate yet
    assert jobs.duration(3725) == "1 h 2 min" and jobs.duration(75) == "1 min 15 s" and jobs.duration(8) == "8 s"


@pytest.mark.parametrize(("page", "key"), [("pages/ask.py", "ask"), ("pages/compare.py", "cmp")])
def test_ask_and_compare_build_all_selected_with_one_click(page, key):
    at = home_with_demo()
    at.switch_page(page).run()
    at.multiselect(key=f"{key}_systems").set_value(["naive_rag", "com", "memcot"]).run()
    button = next(b for b in at.button if b.label == "Build all selected (3 systems)")
    button.click().run()
    assert not errors(at), errors(at)
    job = jobs.wait(f"ingest:{load_demo().id}", 180)
    assert job.status == jobs.DONE, job.error
    wb = Workbench(Settings())
    conv = wb.conversation("demo")
    assert all(wb.is_ingested(s, conv) for s in ["naive_rag", "com", "memcot"])
    at.run()
    assert not any(b.label.startswith("Build all selected") for b in at.button)


def test_the_time_left_names_the_step_and_the_whole_bar():
    """Issue 37 minor 2: the bar shows the whole build (3 systems) while the estimate was the current system's; the
    text names both, and the whole build's estimate is the bar's remaining units at the build's rate."""
    job = jobs.Job("j", "t", message="xmemory (system 2 of 3)", total=270)
    job.done = 90
    job.report("building memory", 0, 90, "turns")
    job.step_started -= 40
    job.first_report -= 40  # 40 s for 60 units: 1.5 units a second, in this system and in all
    job.done = 150
    job.report("building memory", 60, 90, "turns")
    text = job.progress_text()
    assert "about 20 s left in this step" in text  # 30 turns of this system at 1.5 a second
    assert text.endswith("all: 56% done, about 1 min 20 s left")  # 120 units of the bar at 1.5 a second
    assert job.fraction == 150 / 270
    one = jobs.Job("k", "t", total=90)  # a one-step job: the step is the bar, one estimate
    one.report("building memory", 0, 90, "turns")
    one.step_started -= 10
    one.first_report -= 10
    one.done = 30
    one.report("building memory", 30, 90, "turns")
    assert one.progress_text() == "building memory: 30/90 turns · about 20 s left"
