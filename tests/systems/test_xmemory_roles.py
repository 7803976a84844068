"""xMemory's paper prompts (App. C), their offline implementations, and the named construction options."""

from __future__ import annotations

import numpy as np
import pytest

from memcore.llm.roles import get_role
from memcore.systems.xmemory import XMemoryConfig, theme_label_of
from memcore.systems.xmemory.offline import offline_semantics, offline_xepisode, semantic_category


def _prompt(role: str, **inputs: object) -> str:
    return "\n".join(m["content"] for m in get_role(role).messages(inputs))


# ------------------------------------------------------------- templates carry the paper's instructions
def test_boundary_prompt_is_the_papers() -> None:
    p = _prompt("episode_boundary", history=["Ana: hi"], new_messages=["Ben: by the way"], gap_minutes=30,
                max_messages=15)
    for key in ("dialogue boundary detection expert", "**Topic Change** (Highest Priority)", "**Intent Transition**",
                "more than 30 minutes", "\"speaking of which\"", "Consider splitting if relevance < 30%",
                "**When in doubt, split**", "shouldn't exceed 10-15 messages",
                "If conversation history is empty, this is the first message, return false",
                "Newly added messages:\n1. Ben: by the way"):
        assert key in p, key


def test_episode_prompt_is_the_papers() -> None:
    p = _prompt("xmemory_episode", conversation=["[2023-05-08T10:00:00] Ana: I adopted a puppy"],
                boundary_reason="time gap 45 min > 30 min")
    for key in ("episodic memory generation expert", "(10-20 words)", "third-person narrative",
                "what emotions were expressed", "precise to the hour", "YYYY-MM-DDTHH:MM:SS",
                "convert them to absolute dates", "Write the converted time in parentheses",
                "not the current time", "Boundary detection reason:\ntime gap 45 min > 30 min"):
        assert key in p, key


def test_semantic_prompt_is_the_papers_persistence_test() -> None:
    p = _prompt("xmemory_semantic", episodes=["[2023-05-08] Puppy: Ana adopted Biscuit."])
    for key in ("HIGH-VALUE, PERSISTENT semantic memories", "not temporary conversation details",
                "**Persistence Test**: Will this still be true in 6 months?", "**Specificity Test**",
                "**Utility Test**", "**Independence Test**", "Identity & Professional", "Persistent Preferences",
                "Relationships", "Goals & Plans", "Patterns & Habits", "The user thanked the assistant",
                "Any temporary emotions or reactions", "Quality over quantity", "Ana adopted Biscuit"):
        assert key in p, key
    assert "USER_EVENT" not in p and "Known facts" not in p  # not RecMem's typed-fact prompt


def test_theme_prompt_is_the_papers() -> None:
    p = _prompt("xmemory_theme", facts=["Ana adopted Biscuit.", "Biscuit is a golden retriever."])
    assert "stable high-level theme summary that captures recurring facts" in p
    assert "write a concise abstract theme that names the topic" in p and "Return only the summary." in p
    assert "1. Ana adopted Biscuit." in p and not get_role("xmemory_theme").json_output


def test_probe_prompt_is_the_papers_locomo_answer_prompt() -> None:
    p = _prompt("xmemory_probe", semantic="[8 May 2023] Ana adopted Biscuit.", episodic="(none)",
                question="Who adopted Biscuit?")
    for key in ("prioritize the most recent memory", "calculate the actual date based on the memory timestamp",
                "Do not answer temporal questions in timestamp", "less than 5-8 words",
                "Semantic Memories:\n[8 May 2023] Ana adopted Biscuit.", "Question: Who adopted Biscuit?\nAnswer:"):
        assert key in p, key
    assert get_role("xmemory_probe").max_tokens == 20


# ---------------------------------------------------------------------- offline implementations
def test_offline_episode_is_a_third_person_narrative_with_an_iso_timestamp() -> None:
    msgs = [{"speaker": "Ana", "text": "I adopted a puppy named Biscuit yesterday!", "date": "8 May, 2023",
             "turn_id": "D1:1", "timestamp": "2023-05-08T10:00:00"},
            {"speaker": "Ben", "text": "Congrats! I started a pottery class.", "date": "8 May, 2023",
             "turn_id": "D1:2", "timestamp": "2023-05-08T10:01:00"}]
    ep = offline_xepisode({"messages": msgs})
    assert ep["timestamp"] == "2023-05-08T10:00:00"
    assert "Ana adopted a puppy named Biscuit" in ep["content"] and "(7 May 2023)" in ep["content"]
    assert "I adopted" not in ep["content"] and ep["title"]


def test_offline_semantics_keep_persistent_knowledge_and_skip_transient_details() -> None:
    episode = ("On 8 May 2023, Ana thanked Ben for the advice. Ana works as a nurse at the city hospital. "
               "Ana felt so happy about the sunny weather. Ana's sister Mia lives in Porto. "
               "Ben shared a photo of a sunset over the lake. Ben loves pottery and goes to class every Tuesday. "
               "Ana plans to run the Lisbon half-marathon in October 2023. Ben had a sandwich.")
    facts = offline_semantics({"episodes": [episode], "speakers": ["Ana", "Ben"]})
    texts = [f["text"] for f in facts]
    assert "Ana works as a nurse at the city hospital." in texts
    assert "Ana's sister Mia lives in Porto." in texts
    assert any("Lisbon half-marathon" in t for t in texts)
    assert any(t.startswith("Ben loves pottery") for t in texts)
    for transient in ("thanked", "happy", "photo", "sandwich"):
        assert not any(transient in t for t in texts), transient
    assert {f["category"] for f in facts} <= {"identity_professional", "relationships", "persistent_preferences",
                                              "goals_plans", "patterns_habits", "technical_knowledge", ""}
    assert semantic_category("Ana works as a nurse") == "identity_professional"
    assert get_role("xmemory_semantic").offline({"episodes": [episode], "speakers": ["Ana", "Ben"]}).facts


def test_theme_label_is_the_summary_head() -> None:
    assert theme_label_of("pottery / class / bowl: 3 fact(s) about pottery") == "pottery / class / bowl"
    assert theme_label_of("Ana's dog Biscuit and his training. More text.") == "Ana's dog Biscuit and his training"
    assert theme_label_of("one two three four five six seven eight nine ten").endswith("...")


def test_a_colon_inside_a_word_stays_in_the_theme_label_and_its_hover() -> None:
    """Issue 37 minor 13: 'javascript:alert' became 'javascript,alert' (the offline rule replaced every colon, as
    the system read the label up to the first one). A label ends at a colon ending a word; others are kept, and the
    hover escapes HTML without changing a character."""
    from types import SimpleNamespace

    from memcore.systems.xmemory.offline import offline_theme_summary
    from memcore.systems.xmemory.view import hierarchy_sunburst

    assert theme_label_of("meeting at 10:30: 2 fact(s) about meeting") == "meeting at 10:30"
    assert theme_label_of("see https://x.org/a: 2 fact(s)") == "see https://x.org/a"
    facts = ["Mel pasted javascript:alert(1) into the chat at 10:30", "Mel said javascript:alert(1) is a test",
             "Mel tested javascript:alert links again"]
    summary = offline_theme_summary({"facts": facts, "other_themes": ["Ana likes pottery", "Bob runs"]})
    label = theme_label_of(summary)
    assert "javascript:alert" in label and "," not in label, label
    theme = SimpleNamespace(id="t1", kind="theme", text=summary, sources=[], metadata={"label": label + " <b>x</b>"})
    fig = hierarchy_sunburst([theme])
    hover = fig.data[0].hovertext[0]
    assert "javascript:alert" in hover and "&lt;b&gt;x&lt;/b&gt;" in hover and "javascript,alert" not in hover


# --------------------------------------------------------------------------- the named options
def _roles(wb, conv) -> list[str]:
    return list(wb.llm_calls(system="xmemory", conv_id=conv.id, stage="construction")["role"])


def test_default_construction_uses_the_papers_prompts_and_episode_text_vectors(workbench, tiny_conv) -> None:
    workbench.ingest("xmemory", tiny_conv)
    roles = set(_roles(workbench, tiny_conv))
    assert {"episode_boundary", "xmemory_episode", "xmemory_semantic", "xmemory_theme"} <= roles
    assert not roles & {"episode_summary", "semantic_facts", "theme_label"}
    sys_ = workbench.system("xmemory", tiny_conv)
    eps, sems = sys_.memory.of_kind("episode"), sys_.memory.of_kind("semantic")
    assert eps and sems
    for ep in eps:
        want = workbench.embedder.embed([ep.text])[0]
        assert float(sys_.memory.vector(ep.id) @ (want / np.linalg.norm(want))) == pytest.approx(1.0, abs=1e-5)
    for s in sems:  # paper provenance: the episode; memcore cites the episode's turns it shares terms with
        ep = sys_.memory.get(s.sources[0])
        assert set(s.turn_ids) <= set(ep.turn_ids)
    tr = workbench.ask("xmemory", tiny_conv, tiny_conv.questions[0]).trace
    assert tr.structure["fidelity"]["semantic_prompt"].startswith("paper")
    assert tr.structure["fidelity"]["episode_vector"].startswith("paper")


def test_recmem_typed_and_mean_vector_options_keep_the_earlier_behaviour(workbench, tiny_conv) -> None:
    cfg = {"semantic_prompt": "recmem_typed", "episode_prompt": "shared", "episode_vector": "mean_messages"}
    workbench.ingest("xmemory", tiny_conv, **cfg)
    roles = set(_roles(workbench, tiny_conv))
    assert {"episode_summary", "semantic_facts"} <= roles and not roles & {"xmemory_episode", "xmemory_semantic"}
    sys_ = workbench.system("xmemory", tiny_conv, **cfg)
    for ep in sys_.memory.of_kind("episode"):
        vecs = np.stack([sys_.turn_vector(t) for t in ep.turn_ids])
        vecs = vecs / np.linalg.norm(vecs, axis=1, keepdims=True)
        mean = vecs.mean(axis=0)
        assert np.allclose(sys_.memory.vector(ep.id), mean / np.linalg.norm(mean), atol=1e-5)
    tr = workbench.ask("xmemory", tiny_conv, tiny_conv.questions[0], **cfg).trace
    assert tr.structure["fidelity"]["semantic_prompt"].startswith("option: RecMem's typed facts")


def test_misspelt_option_names_the_allowed_values() -> None:
    with pytest.raises(ValueError, match="paper, recmem_typed"):
        XMemoryConfig(semantic_prompt="typed").validate()
