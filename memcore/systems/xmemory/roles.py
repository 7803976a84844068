"""xMemory's roles, with the paper's prompts (paper 001, Appendix C "Prompt Design").

episode_boundary   inputs {history, new_messages, gap_minutes, max_messages}   -> {should_end, reason}
xmemory_episode    inputs {conversation, boundary_reason}                       -> {title, content, timestamp}
xmemory_semantic   inputs {episodes}                                            -> {facts: [{text, category}]}
xmemory_theme      inputs {facts}                                               -> text (the theme summary)
xmemory_probe      inputs {semantic, episodic, question}                        -> text (20 greedy tokens)

The boundary, episodic, semantic and theme prompts are the paper's "Prompt for Boundary Detect",
"Episodic Generation", "Semantic Generation" and "Theme Generation"; the probe asks what the
reader is asked (the paper's "Answer Generation in LOCOMO Dataset"), since Stage II measures the
reader's uncertainty (one text, shared with the reader role `answer_xmemory_locomo` in
reader.py). Only the output schema lines are memcore's (the paper shows no JSON schema for the
semantic step). Other inputs (messages, speakers, ...) feed the offline engine only: no template
names them, so a real model never sees them; what the rules compute from the inputs (the boundary's
cosine to the episode centroid) they compute themselves, with the runtime's embedder. The paper
gives one temperature, 0 (greedy) for answering; construction is run at the client's 0 too.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, field_validator

from memcore.llm.roles import Role, TextOutput, register
from memcore.systems.xmemory.offline import (
    offline_boundary,
    offline_probe,
    offline_semantics,
    offline_theme_summary,
    offline_xepisode,
)
from memcore.systems.xmemory.reader import XMEMORY_LOCOMO

SEMANTIC_CATEGORIES = ("identity_professional", "persistent_preferences", "technical_knowledge", "relationships",
                       "goals_plans", "patterns_habits")


class BoundaryDecision(BaseModel):
    """Whether the new message starts a new episode, and why."""

    should_end: bool  # required: a reply without the decision is not a "no"
    reason: str = ""


class XEpisode(BaseModel):
    """xMemory's episodic memory record (paper: title, third-person content, timestamp)."""

    title: str = ""
    content: str = ""
    timestamp: str = ""


class XSemantic(BaseModel):
    """One high-value, persistent semantic memory and its paper category."""

    text: str
    category: str = Field("", json_schema_extra={"enum": list(SEMANTIC_CATEGORIES)})  # the schema's choices

    @field_validator("category", mode="before")
    @classmethod
    def _category(cls, v: Any) -> str:
        c = str(v or "").strip().lower().replace(" & ", "_").replace(" ", "_").replace("-", "_")
        return c if c in SEMANTIC_CATEGORIES else ""


class XSemanticsOutput(BaseModel):
    """Output of `xmemory_semantic`."""

    facts: list[XSemantic] = Field(default_factory=list)


BOUNDARY_SYSTEM = (
    "You are a dialogue boundary detection expert. You need to determine if the newly added dialogue should end "
    "the current episode and start a new one.\n"
    "Please carefully analyze the following aspects to determine if a new episode should begin:\n"
    "1. **Topic Change** (Highest Priority): - Do the new messages introduce a completely different topic? - Is "
    "there a shift from one specific event to another? - Has the conversation moved from one question to an "
    "unrelated new question?\n"
    "2. **Intent Transition**: - Has the purpose of the conversation changed? (e.g., from casual chat to seeking "
    "help, from discussing work to discussing personal life) - Has the core question or issue of the current topic "
    "been answered or fully discussed?\n"
    "3. **Temporal Markers**: - Are there temporal transition markers (\"earlier\", \"before\", \"by the way\", "
    "\"oh right\", \"also\", etc.)? - Is the time gap between messages more than {gap_minutes} minutes?\n"
    "4. **Structural Signals**: - Are there explicit topic transition phrases (\"changing topics\", \"speaking of "
    "which\", \"quick question\", etc.)? - Are there concluding statements indicating the current topic is "
    "finished?\n"
    "5. **Content Relevance**: - How related is the new message to the previous discussion? (Consider splitting "
    "if relevance < 30%) - Does it involve completely different people, places, or events?\n"
    "Decision Principles: - **Prioritize topic independence**: Each episode should revolve around one core topic "
    "or event - **When in doubt, split**: When uncertain, lean towards starting a new episode - **Maintain "
    "reasonable length**: A single episode typically shouldn't exceed 10-{max_messages} messages\n"
    "Note: - If conversation history is empty, this is the first message, return false - When a clear topic "
    "change is detected, split even if the conversation flows naturally - Each episode should be a "
    "self-contained conversational unit that can be understood independently\n"
    "Answer with should_end (true to start a new episode) and a short reason."
)

EPISODE_SYSTEM = (
    "You are an episodic memory generation expert. Please convert the following conversation into an episodic "
    "memory.\n"
    "Please analyze the conversation to extract time information and generate a structured episodic memory. "
    "Return containing the following three fields: \"title\": \"A concise, descriptive title that accurately "
    "summarises the theme (10-20 words)\", \"content\": \"A detailed description of the conversation in "
    "third-person narrative. It must include all important information: who participated in the conversation at "
    "what time, what was discussed, what decisions were made, what emotions were expressed, and what plans or "
    "outcomes were formed. Write it as a coherent story so that the reader can clearly understand what happened. "
    "Ensure that time information is precise to the hour, including year, month, day, and hour.\", "
    "\"timestamp\": \"YYYY-MM-DDTHH:MM:SS format timestamp representing when this episode occurred (analyse from "
    "message timestamps or content)\"\n"
    "Time Analysis Instructions: 1. **Primary Source**: Look for explicit timestamps in the message metadata or "
    "content 2. **Secondary Source**: Analyze temporal references in the conversation content (\"yesterday\", "
    "\"last week\", \"this morning\", etc.) 3. **Fallback**: If no time information is available, use a "
    "reasonable estimate based on context 4. **Format**: Always return timestamp in ISO format: "
    "\"2024-01-15T14:30:00\"\n"
    "Requirements: 1. The title should be specific and easy to search (including key topics/activities). 2. The "
    "content must include all important information from the conversation. 3. Convert the dialogue format into a "
    "narrative description. 4. Maintain chronological order and causal relationships. 5. Use third-person unless "
    "explicitly first-person. 6. Include specific details that aid keyword search. 7. Notice the time "
    "information, and write the time information in the content. 8. When relative times (e.g., last week, next "
    "month, etc.) are mentioned in the conversation, you need to convert them to absolute dates (year, month, "
    "day). Write the converted time in parentheses after the original time reference. 9. **IMPORTANT**: Analyze "
    "the actual time when the conversation happened from the message timestamps or content, not the current "
    "time.\n"
    "Example: If the conversation is about someone planning to go hiking and the messages have timestamps from "
    "March 14, 2024 at 3:00 PM: \"title\": \"Weekend Hiking Plan March 16, 2024: Sunrise Trip to Mount Rainier\", "
    "\"content\": \"On March 14, 2024 at 3:00 PM, the user expressed interest in going hiking on the upcoming "
    "weekend (March 16, 2024) and sought advice. ... The user decided to leave at 4:00 AM on Saturday, March 16, "
    "2024 to catch the sunrise and planned to invite friends for the adventure.\", \"timestamp\": "
    "\"2024-03-14T15:00:00\""
)

SEMANTIC_SYSTEM = (
    "You are an AI memory system. Extract HIGH-VALUE, PERSISTENT semantic memories from the following episodes. "
    "CRITICAL: Focus on extracting LONG-TERM VALUABLE KNOWLEDGE, not temporary conversation details.\n"
    "## HIGH-VALUE Knowledge Criteria\nExtract ONLY knowledge that passes these tests:\n"
    "- **Persistence Test**: Will this still be true in 6 months?\n"
    "- **Specificity Test**: Does it contain concrete, searchable information?\n"
    "- **Utility Test**: Can this help predict future user needs?\n"
    "- **Independence Test**: Can be understood without conversation context?\n"
    "## HIGH-VALUE Categories (FOCUS ON THESE):\n"
    "1. **Identity & Professional** - Names, titles, companies, roles - Education, qualifications, skills\n"
    "2. **Persistent Preferences** - Favorite books, movies, music, tools - Technology preferences with reasons "
    "- Long-term likes and dislikes\n"
    "3. **Technical Knowledge** - Technologies used (with versions) - Architectures, methodologies - Technical "
    "decisions and rationales\n"
    "4. **Relationships** - Names of family, colleagues, friends - Team structure, reporting lines - "
    "Professional networks\n"
    "5. **Goals & Plans** - Career objectives - Learning goals - Project plans\n"
    "6. **Patterns & Habits** - Regular activities - Workflows, schedules - Recurring challenges\n"
    "## Examples:\nHIGH-VALUE (Extract these):\n"
    "- \"Caroline's favorite book is 'Becoming Nicole' by Amy Ellis Nutt\"\n"
    "- \"The user works at ByteDance as a senior ML engineer\"\n"
    "- \"The user prefers PyTorch over TensorFlow for debugging\"\n"
    "- \"The user's team lead is named Sarah\"\n"
    "- \"The user is learning Rust for systems programming\"\n"
    "- \"The user has been practicing yoga since March 2021\"\n"
    "- \"The user joined Amazon in August 2020 as a data scientist\"\n"
    "- \"The user plans to relocate to Seattle in January 2025\"\n"
    "LOW-VALUE (Skip these):\n"
    "- \"The user thanked the assistant\"\n- \"The user was confused about X\"\n"
    "- \"The user appreciated the help\"\n- \"The conversation was productive\"\n"
    "- Any temporary emotions or reactions\n"
    "Quality over quantity - extract only knowledge that truly helps understand the user long-term.\n"
    "For each memory give its text (one self-contained statement) and its category, one of: "
    + ", ".join(SEMANTIC_CATEGORIES) + "."
)

THEME_SYSTEM = (
    "You are building a stable high-level theme summary that captures recurring facts. Given the following "
    "factual statements, write a concise abstract theme that names the topic:\n{facts}\nReturn only the summary."
)

ANSWER_LOCOMO_SYSTEM = XMEMORY_LOCOMO.system  # the reader's prompt: Stage II measures the reader's uncertainty

EPISODE_BOUNDARY = register(Role(
    name="episode_boundary",
    system=BOUNDARY_SYSTEM,
    user="Current conversation history:\n{history}\n\nNewly added messages:\n{new_messages}",
    output=BoundaryDecision,
    offline=lambda inputs, embedder: BoundaryDecision(**offline_boundary(inputs, embedder)),
    offline_embedder=True,
    fallback=lambda inputs: BoundaryDecision(should_end=False, reason="fallback: unusable reply, the episode goes on"),
    max_tokens=128,
    description="xMemory: does the new message start a new episode? (paper: Prompt for Boundary Detect)",
    tags=("xmemory", "construction"),
))

XMEMORY_EPISODE = register(Role(
    name="xmemory_episode",
    system=EPISODE_SYSTEM,
    user="Conversation content:\n{conversation}\n\nBoundary detection reason:\n{boundary_reason}",
    output=XEpisode,
    offline=lambda inputs: XEpisode(**offline_xepisode(inputs)),
    max_tokens=900,
    description="xMemory: one episode's title, third-person content and timestamp (paper: Episodic Generation)",
    tags=("xmemory", "construction"),
))

XMEMORY_SEMANTIC = register(Role(
    name="xmemory_semantic",
    system=SEMANTIC_SYSTEM,
    user="Episodes to analyze:\n{episodes}",
    output=XSemanticsOutput,
    may_be_empty=True,  # an episode may hold no high-value persistent knowledge
    offline=lambda inputs: XSemanticsOutput(facts=[XSemantic(**f) for f in offline_semantics(inputs)]),
    fallback=lambda inputs: XSemanticsOutput(),
    max_tokens=900,
    description="xMemory: high-value persistent semantics of an episode (paper: Semantic Generation)",
    tags=("xmemory", "construction"),
))

XMEMORY_THEME = register(Role(
    name="xmemory_theme",
    system=THEME_SYSTEM,
    user="Write the theme summary.",
    output=TextOutput,
    offline=lambda inputs: TextOutput(text=offline_theme_summary(inputs)),
    fallback=lambda inputs: TextOutput(text=""),
    json_output=False,
    max_tokens=96,
    description="xMemory: a theme's abstract summary from its member facts (paper: Theme Generation)",
    tags=("xmemory", "construction"),
))

XMEMORY_PROBE = register(Role(
    name="xmemory_probe",
    system=ANSWER_LOCOMO_SYSTEM,
    user="Semantic Memories:\n{semantic}\n\nEpisodic Memories:\n{episodic}\n\nQuestion: {question}\nAnswer:",
    output=TextOutput,
    offline=offline_probe,
    fallback=lambda inputs: TextOutput(text=""),
    json_output=False,
    max_tokens=20,
    temperature=0.0,  # greedy decoding, as the paper's uncertainty measure requires
    description="xMemory Stage II: greedy 20-token answer (the paper's LoCoMo answer prompt) whose token "
                "logprobs measure uncertainty",
    tags=("xmemory", "retrieval"),
))
