"""The built-in demo conversation: Maya and Jonas over four sessions (90 turns), with 21 questions.

Stored in LoCoMo's single-conversation layout (memcore/datasets/demo/demo.json, sample_id
"demo"), so loading it also exercises the LoCoMo loader. It is written to exercise the
memory systems: recurring topics across sessions (Maya's half-marathon and her dog Pepper,
Jonas's pottery class and job change, a Lisbon trip planned then taken), relative dates,
named people, places and organisations, a shared photo, a plan that changes later and
facts that need turns from two sessions. Session 4 returns to the half-marathon training
several exchanges in a row, so RecMem consolidates at the paper's LoCoMo thresholds
(theta_count 5 exchanges at cos >= 0.7 with the MiniLM embedder) and its episode and facts
have something to show. Questions cover all five LoCoMo categories; every question's
evidence lists exactly the turns that hold its answer.
"""

from __future__ import annotations

from pathlib import Path

from memcore.datasets.locomo import load_locomo
from memcore.types import Conversation

DEMO_PATH = Path(__file__).resolve().parent / "demo" / "demo.json"


def load_demo() -> Conversation:
    """The demo conversation (source "demo"), ready to replay and question."""
    conv = load_locomo(DEMO_PATH)[0]
    conv.source = "demo"
    return conv
