"""The `answer` role: answer a question from the retrieved context."""

from __future__ import annotations

from memcore.llm.offline.answer import offline_answer
from memcore.llm.roles import Role, TextOutput, register

ANSWER = register(Role(
    name="answer",
    system=(
        "You are a helpful assistant answering questions about a long conversation between two people, "
        "using only the memories below. Each memory line starts with its date. Answer in a short phrase "
        "(a few words), not a sentence. Convert relative times (\"last year\", \"yesterday\") to absolute "
        "dates using the memory's date. If the memories do not contain the answer, reply exactly: "
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
