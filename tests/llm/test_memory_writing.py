"""The shared memory-writing roles on the offline engine: episode_summary and semantic_facts."""

from __future__ import annotations

from memcore.llm import FakeLLM, LLMClient, OfflineEngine
from memcore.llm.offline.memory_writing import clean, fact_type, informative, rewrite
from memcore.llm.roles import get_role
from memcore.llm.roles.memory_writing import FACT_TYPES, Fact

MSGS = [
    {"speaker": "Caroline", "text": "Hey Mel! Good to see you! How have you been?", "date": "1:56 pm on 8 May, 2023",
     "turn_id": "D1:1"},
    {"speaker": "Melanie", "text": "Hey Caroline! Good to see you! What's up with you?",
     "date": "1:56 pm on 8 May, 2023", "turn_id": "D1:2"},
    {"speaker": "Caroline", "text": "I went to a LGBTQ support group yesterday and it was so powerful.",
     "date": "1:56 pm on 8 May, 2023", "turn_id": "D1:3"},
    {"speaker": "Melanie", "text": "Wow, that's cool, Caroline! Thanks for sharing!", "date": "1:56 pm on 8 May, 2023",
     "turn_id": "D1:4"},
]


def episodes(messages: list[dict], max_episodes: int = 3) -> list:
    return get_role("episode_summary").offline({"messages": messages, "max_episodes": max_episodes}).episodes


def facts(content: str, **kw: object) -> list:
    inputs = {"content": content, "date": "8 May 2023", "speakers": ["Caroline", "Melanie"], "existing_facts": [],
              "turn_ids": ["D1:1", "D1:2"], **kw}
    return get_role("semantic_facts").offline(inputs).facts


def test_episode_is_a_dated_third_person_rewrite_without_greetings():
    [ep] = episodes(MSGS)
    assert ep.content.startswith("On 8 May 2023, Caroline went to a LGBTQ support group yesterday (7 May 2023)")
    assert "Good to see you" not in ep.content and "Hey" not in ep.content and "Thanks" not in ep.content
    assert " I " not in f" {ep.content} " and "my " not in ep.content
    assert ep.timestamp == "8 May 2023" and ep.turn_ids == ["D1:1", "D1:2", "D1:3", "D1:4"]
    assert "support" in ep.title and ep.title.startswith("Caroline & Melanie")


def test_episode_dates_change_with_the_messages_and_budget_keeps_central_sentences():
    later = {"speaker": "Caroline", "text": "The support group asked me to lead a session next week.",
             "date": "25 May, 2023", "turn_id": "D2:1"}
    [ep] = episodes(MSGS + [later])
    assert "On 25 May 2023, Caroline said the support group asked Caroline to lead a session next week " \
           "(the week after 25 May 2023)." in ep.content
    assert ep.content.index("8 May 2023") < ep.content.index("25 May 2023")


def test_max_episodes_splits_only_disjoint_topics():
    pottery = [{"speaker": s, "text": t, "date": "9 May, 2023", "turn_id": f"D2:{i}"} for i, (s, t) in enumerate([
        ("Melanie", "I started a pottery class at the community center."),
        ("Caroline", "A pottery class at the community center sounds great."),
        ("Melanie", "My pottery teacher says my first bowl was the best in class."),
        ("Caroline", "A pottery bowl for the class, nice."),
    ], start=1)]
    group = [dict(m, turn_id=f"D1:{i}") for i, m in enumerate([
        {"speaker": "Caroline", "text": "The LGBTQ support group meets every Tuesday downtown.", "date": "8 May, 2023"},
        {"speaker": "Melanie", "text": "Does the support group meet downtown every week?", "date": "8 May, 2023"},
        {"speaker": "Caroline", "text": "Yes, the support group meets downtown weekly, with new people.",
         "date": "8 May, 2023"},
        {"speaker": "Melanie", "text": "A weekly support group downtown is great.", "date": "8 May, 2023"},
    ], start=1)]
    split = episodes(group + pottery, max_episodes=3)
    assert len(split) == 2 and [e.turn_ids[0] for e in split] == ["D1:1", "D2:1"]
    assert "pottery" in split[1].content and "pottery" not in split[0].content
    assert len(episodes(group + pottery, max_episodes=1)) == 1


def test_facts_are_third_person_first_person_declaratives_with_their_turns():
    content = "\n".join([
        "Summary: On 8 May 2023, Caroline went to a support group.",
        "[D1:1] Caroline: Hey Mel! Good to see you! How have you been?",
        "[D1:2] Melanie: I'm swamped with the kids & work. My sister Anna moved to Boston last month.",
        "[D1:3] Caroline: I love painting sunsets with watercolors. Thanks so much!",
        "[D1:4] Melanie: That's so cool! I'm so happy for you!",
        "[D1:5] Caroline: I went to a LGBTQ support group yesterday and it was so powerful.",
    ])
    out = facts(content)
    texts = [f.text for f in out]
    assert "Caroline's sister" not in " ".join(texts)
    assert "Melanie's sister Anna moved to Boston last month (April 2023)." in texts
    assert "Caroline loves painting sunsets with watercolors." in texts
    assert "Caroline went to a LGBTQ support group yesterday (7 May 2023) and it was so powerful." in texts
    assert not any(t.startswith(("Hey", "Caroline said", "Melanie is so happy")) or "?" in t for t in texts)
    by_text = {f.text: f for f in out}
    assert by_text["Caroline loves painting sunsets with watercolors."].turn_ids == ["D1:3"]
    assert by_text["Caroline loves painting sunsets with watercolors."].type == "USER_CONSTRAINT_OR_PREFERENCE"
    assert by_text["Melanie's sister Anna moved to Boston last month (April 2023)."].type == "TIME_ANCHORED_UPDATE"
    assert all(f.type in FACT_TYPES for f in out)
    assert "support group." not in " ".join(t for t in texts if t.startswith("On 8 May"))  # summary line skipped


def test_facts_skip_known_ones_and_untagged_lines_get_all_turn_ids():
    content = "Caroline: I adopted a golden retriever named Biscuit."
    [f] = facts(content)
    assert f.text == "Caroline adopted a golden retriever named Biscuit." and f.turn_ids == ["D1:1", "D1:2"]
    assert facts(content, existing_facts=["Caroline adopted a golden retriever named Biscuit."]) == []


def test_line_dates_resolve_relative_times_per_line():
    content = "[D3:1] (25 May 2023) Melanie: I ran a charity race for mental health yesterday."
    [f] = facts(content)
    assert f.text == "Melanie ran a charity race for mental health yesterday (24 May 2023)."


def test_sentence_filters_and_rewrites():
    assert clean("Wow, Mel! I got a new job.", ["Mel"]) == "I got a new job."
    assert not informative("Hey Caroline, good to see you!", ["Caroline"])
    assert not informative("What did you paint?")
    assert not informative("That's so awesome, I'm so proud!")
    assert informative("I adopted a puppy named Biscuit.")
    assert rewrite("I don't paint but my son plays guitar with you.", "Ana", "Ben") == \
        "Ana doesn't paint but Ana's son plays guitar with Ben."
    assert rewrite("We went camping last year.", "Ana", "", "8 May 2023") == \
        "Ana and others went camping last year (2022)."
    assert fact_type("Ana has a dog named Rex.") == "ENTITY_RELATION"
    assert fact_type("Ana ran a marathon in Lisbon.") == "USER_EVENT"


def test_fact_type_is_normalised_and_roles_run_through_clients():
    assert Fact(text="x", type="entity relation").type == "ENTITY_RELATION"
    assert Fact(text="x", type="something else").type == "USER_EVENT"
    res = LLMClient(OfflineEngine()).run("episode_summary", {"messages": MSGS, "max_episodes": 2},
                                         stage="construction")
    assert res.ok and res.prompt_tokens > 0 and res.output.episodes
    bad = LLMClient(FakeLLM(by_role={"episode_summary": ["not json", "still not json"]}), unusable="fallback")
    res = bad.run("episode_summary", {"messages": MSGS, "max_episodes": 2}, stage="construction")
    assert not res.ok and res.output.episodes[0].turn_ids == ["D1:1", "D1:2", "D1:3", "D1:4"]  # verbatim fallback
    prompt = get_role("semantic_facts").messages({"content": "c", "date": "d", "speakers": ["A"],
                                                  "existing_facts": [], "turn_ids": []})
    assert "USER_CONSTRAINT_OR_PREFERENCE" in prompt[0]["content"]
