"""Page names and files in one place: the navigation, page links and tests all use these."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

HOME = "Home"
REPLAY = "Replay"
EXPLORE = "Explore"
ASK = "Ask"
COMPARE = "Compare"
LIVE = "Live"
BENCHMARK = "Benchmark"
COMPARE_RUNS = "Compare runs"
ANNOTATE = "Annotate"  # built by another helper: shown once pages/annotate.py exists
ANNOTATION_RESULTS = "Annotation results"
EXPORT = "Export"


@dataclass(frozen=True)
class PageSpec:
    """One page of the app."""

    title: str
    path: str  # relative to app.py
    icon: str
    url_path: str
    section: str = "Workbench"

    @property
    def exists(self) -> bool:
        """Whether the page's file is present."""
        return (ROOT / self.path).is_file()


PAGES: tuple[PageSpec, ...] = (
    PageSpec(HOME, "pages/home.py", ":material/home:", "home", "Start"),
    PageSpec(REPLAY, "pages/replay.py", ":material/slow_motion_video:", "replay"),
    PageSpec(EXPLORE, "pages/explore.py", ":material/travel_explore:", "explore"),
    PageSpec(ASK, "pages/ask.py", ":material/question_answer:", "ask"),
    PageSpec(COMPARE, "pages/compare.py", ":material/compare:", "compare"),
    PageSpec(LIVE, "pages/live.py", ":material/sensors:", "live"),
    PageSpec(BENCHMARK, "pages/benchmark.py", ":material/leaderboard:", "benchmark", "Evaluate"),
    PageSpec(COMPARE_RUNS, "pages/compare_runs.py", ":material/difference:", "compare-runs", "Evaluate"),
    PageSpec(ANNOTATE, "pages/annotate.py", ":material/rate_review:", "annotate", "Evaluate"),
    PageSpec(ANNOTATION_RESULTS, "pages/annotation_results.py", ":material/fact_check:", "annotation-results",
             "Evaluate"),
    PageSpec(EXPORT, "pages/export.py", ":material/download:", "export", "Evaluate"),
)


def page(title: str) -> PageSpec:
    """The page spec with this title."""
    return next(p for p in PAGES if p.title == title)
