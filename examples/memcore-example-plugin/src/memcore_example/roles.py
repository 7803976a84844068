"""recent_k's LLM role: `recent_k_focus` names the window turn that answers the question.

A Role (memcore.llm.roles) with its prompt, its output model and its offline rule (offline.py): memcore's
role registry finds it once this module is imported (memcore_example.system imports it; memcore's systems
registry imports the system through the `memcore.systems` entry point), and the offline engine runs its rule
through the role, never by name."""

from __future__ import annotations

from pydantic import BaseModel

from memcore.llm.roles import Role, register
from memcore_example.offline import offline_focus


class FocusOutput(BaseModel):
    """The window turn that answers the question ("" for none) and why."""

    turn_id: str = ""
    reason: str = ""


FOCUS = register(Role(
    name="recent_k_focus",
    system=("You read the latest turns of a conversation between two people and name the one turn that best "
            "answers a question about it.\nFields: turn_id (the dialogue id of that turn, e.g. \"D2:7\"; \"\" "
            "when no turn helps), reason (one short sentence)."),
    user="Question: {question}\nThe latest turns (id [date] speaker: text):\n{turns}\n",
    output=FocusOutput,
    offline=lambda inputs: FocusOutput(**offline_focus(inputs)),
    max_tokens=120,
    description="recent_k focus: the window turn that answers the question (example plugin)",
    tags=("recent_k",),
    offline_note="the turn sharing the most word stems with the question instead of judgement",
))
