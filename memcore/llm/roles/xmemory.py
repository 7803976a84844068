"""xMemory's roles: episode boundary detection, theme labels, and the Stage II uncertainty probe.

Episode summaries and semantic facts use the shared `episode_summary` / `semantic_facts` roles.
Prompts follow the paper's Appendix C (boundary detection, theme generation, LoCoMo answer).
"""

from __future__ import annotations

from pydantic import BaseModel

from memcore.llm.offline.xmemory import offline_boundary, offline_probe, offline_theme_label
from memcore.llm.roles import Role, TextOutput, register


class BoundaryDecision(BaseModel):
    """Whether the new message starts a new episode, and why."""

    should_end: bool = False
    reason: str = ""


class ThemeLabel(BaseModel):
    """A theme's short label and one-sentence abstract summary."""

    label: str = ""
    summary: str = ""


EPISODE_BOUNDARY = register(Role(
    name="episode_boundary",
    system=(
        "You are a dialogue boundary detection expert. Decide whether the newly added message should end "
        "the current episode and start a new one. Check, in order of priority:\n"
        "1. Topic change (highest priority): a completely different topic, a shift from one event to "
        "another, or an unrelated new question.\n"
        "2. Intent transition: the purpose of the conversation changed, or the current topic has been "
        "fully discussed.\n"
        "3. Temporal markers: transition markers (\"earlier\", \"by the way\", \"oh right\") or a time gap "
        "of more than {gap_minutes} minutes between messages.\n"
        "4. Structural signals: explicit transition phrases (\"changing topics\", \"speaking of which\", "
        "\"quick question\") or statements concluding the topic.\n"
        "5. Content relevance: the new message involves different people, places or events.\n"
        "Each episode should revolve around one core topic or event and be understandable on its own; "
        "when in doubt, split; an episode should not exceed {max_messages} messages. If the current "
        "episode is empty, answer should_end = false."
    ),
    user="Current episode:\n{history}\n\nNewly added message:\n{new_messages}\n\nShould a new episode begin?",
    output=BoundaryDecision,
    offline=lambda inputs: BoundaryDecision(**offline_boundary(inputs)),
    fallback=lambda inputs: BoundaryDecision(**offline_boundary(inputs)),
    max_tokens=96,
    description="xMemory: does the new message start a new episode?",
    tags=("xmemory", "construction"),
))

THEME_LABEL = register(Role(
    name="theme_label",
    system=(
        "You are building a stable high-level theme summary that captures recurring facts. Given the "
        "factual statements below, name the topic with a short label (2-5 words) and write a concise "
        "abstract summary of the theme in one sentence."
    ),
    user="Facts:\n{facts}",
    output=ThemeLabel,
    offline=lambda inputs: ThemeLabel(**offline_theme_label(inputs)),
    fallback=lambda inputs: ThemeLabel(**offline_theme_label(inputs)),
    max_tokens=128,
    description="xMemory: label and summary of a theme from its member facts",
    tags=("xmemory", "construction"),
))

XMEMORY_PROBE = register(Role(
    name="xmemory_probe",
    system=(
        "You are an intelligent memory assistant answering questions from conversation memories. The "
        "memories below come from two speakers and carry timestamps. Use the timestamps to resolve "
        "relative times (\"last year\", \"two months ago\") into absolute dates, prefer the most recent "
        "memory when memories conflict, and answer in 5-8 words at most."
    ),
    user="Semantic memories:\n{semantic}\n\nEpisodic memories:\n{episodic}\n\nQuestion: {question}\nAnswer:",
    output=TextOutput,
    offline=offline_probe,
    fallback=lambda inputs: TextOutput(text=""),
    json_output=False,
    max_tokens=20,
    description="xMemory Stage II: greedy 20-token answer whose token logprobs measure uncertainty",
    tags=("xmemory", "retrieval"),
))
