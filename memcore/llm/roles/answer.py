"""The `answer` role: answer a question from the retrieved context.

inputs  {"question", "context", "question_date", "passages": [{"text", "date", "score", "speaker"}]}
output  free text: a short phrase, or "No information available" (LoCoMo's abstention phrase)

Real models read the rendered `context`; the offline engine (memcore.llm.offline.answer) reads
the structured `passages` (or the dated lines of `context` when there are none).
"""

from __future__ import annotations

from memcore.llm.offline.answer import offline_answer
from memcore.llm.roles import Role, TextOutput, register

ANSWER = register(Role(
    name="answer",
    system=(
        "You are a helpful assistant answering questions about a long conversation between two people, "
        "using only the memories below. Each memory line starts with its date. Answer in a short phrase "
        "(a few words), not a sentence. Convert relative times (\"last year\", \"yesterday\") to absolute "
        "dates using the memory's date, written like \"7 May 2023\". If the memories do not contain the answer, "
        "reply exactly: "
        "No information available."
    ),
    user="Memories:\n{context}\n\nQuestion: {question}\nShort answer:",
    output=TextOutput,
    offline=offline_answer,
    fallback=lambda inputs: TextOutput(text="No information available"),
    json_output=False,
    max_tokens=64,
    description="final answer from context",
))
