"""RecMem's own role: `recmem_merge` (merge-first episodic update, LLM_merge in the paper).

inputs  {"title": str, "content": str, "timestamp": str,   the nearest episode
         "unit": str,                                      the new exchange, "[D1:3] (date) Speaker: text" lines
         "messages": [{"speaker", "text", "date", "turn_id"}], "speakers": [str], "similarity": float}
output  {"merge": bool, "reason": str, "title": str, "content": str}  (content: the merged episode)
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from memcore.llm.offline.recmem import offline_merge
from memcore.llm.roles import Role, register


class MergeOutput(BaseModel):
    """The merge decision and, on yes, the rewritten episode."""

    merge: bool = False
    reason: str = ""
    title: str = ""
    content: str = ""


RECMEM_MERGE = register(Role(
    name="recmem_merge",
    system=(
        "You maintain episodic memories: dated third-person narratives of events in a conversation. Given an existing episode and a new exchange, decide whether the exchange continues "
        "the same event or topic. If it does, merge: rewrite the episode so that it integrates the new "
        "exchange into one coherent chronological narrative, keeping every concrete detail of both (names, "
        "places, numbers, plans) and converting relative times to absolute dates using the exchange's date. "
        "If it does not, set merge to false and leave title and content empty. Give a one-line reason."
    ),
    user=(
        "Speakers:\n{speakers}\n\nEpisode: {title} ({timestamp})\n{content}\n\nNew exchange:\n{unit}\n\n"
        "Does the new exchange belong to this episode? If yes, return the merged episode."
    ),
    output=MergeOutput,
    offline=lambda inputs: MergeOutput(**offline_merge(inputs)),
    fallback=lambda inputs: MergeOutput(merge=False, reason="unusable reply: not merged"),
    max_tokens=900,
    description="merge-first: does a new exchange belong to the nearest episode; merged text",
    tags=("recmem",),
))


def merge_inputs(title: str, content: str, timestamp: str, messages: list[dict[str, Any]],
                 speakers: list[str], similarity: float) -> dict[str, Any]:
    """The role's inputs for an episode and an exchange's messages."""
    unit = "\n".join(f"[{m['turn_id']}] ({m.get('date', '')}) {m['speaker']}: {m['text']}" for m in messages)
    return {"title": title, "content": content, "timestamp": timestamp, "unit": unit, "messages": messages,
            "speakers": speakers, "similarity": round(float(similarity), 4)}
