"""Each paper's own prompts: the templates carry the paper's key instructions and temperatures, and every
system answers with its paper's reader (the shared short-answer prompt is a named option)."""

from __future__ import annotations

import pytest

from memcore.embed import HashingEmbedder
from memcore.llm.roles import get_role, load_all
from memcore.llm.roles.readers import reader_choices, reader_for
from memcore.settings import Settings
from memcore.systems.recmem.roles import MAINTENANCE, RECMEM_EPISODES, RECMEM_MERGE, RECMEM_REFINE
from memcore.workbench import Workbench


def template(role: str) -> str:
    r = get_role(role)
    return f"{r.system}\n{r.user}"


# role -> (temperature, key instructions of the paper's prompt)
KEY = {
    "answer_com_locomo": (0.0, ["Memory-Based Question Answering Agent", "EXACT ABSOLUTE date",
                                "\"last year before 4 May 2022\"", "List ALL activities",
                                "If memories conflict, use the most recent one", "<Memories>", "<Question>"]),
    "answer_com_longmemeval": (0.0, ["helpful expert assistant", "briefly answer the question",
                                     "abstain from answering"]),
    "answer_locomo_standard": (1.0, ["Below is a conversation between two people", "short phrase",
                                     "exact words from the context whenever possible", "Short answer:"]),
    "answer_locomo_standard_adversarial": (1.0, ["answer the following question", "No information available"]),
    "answer_longmemeval_standard": (1.0, ["several history chats between you and a user", "History Chats:",
                                          "Current Date: {question_date}"]),
    "answer_recmem_locomo": (0.0, ["episodic memories", "semantic memories", "raw memories",
                                   "do not count the same evidence twice", "prefer the most recent one",
                                   "went to India last year", "less than 5-6 words"]),
    "answer_recmem_longmemeval": (0.0, ["do not count the same evidence twice", "Current date"]),
    "answer_xmemory_locomo": (0.0, ["prioritize the most recent memory", "\"7 May 2023\"",
                                    "Do not confuse character names", "less than 5-8 words"]),
    "answer_memweaver": (0.7, ["only the information the context supports", "shortest possible phrase",
                               "copy its words"]),
    "answer_memweaver_temporal": (0.7, ["Use DATE of CONVERSATION to answer with an approximate date"]),
    "answer_memweaver_open_domain": (0.7, ["\"Likely yes\"", "\"Likely no\"", "Do not discuss uncertainty"]),
    "answer_memweaver_adversarial": (0.01, ["Not mentioned in the conversation"]),
    "memcot_zoom_in": (1.0, ["Temporal check", "Descriptive matches", "Partial information",
                             "missing_information", "useful_ids"]),
    "memcot_zoom_out": (1.0, ["Contextual clues", "thinking_choice", "useful_ids"]),
    "memcot_judge": (0.0, ["can_answer", "\"Break\"", "\"Delete\"", "never repeat a failed query",
                           "{queries_num}"]),
    "recmem_merge": (0.0, ["exactly two inputs", "same ongoing topic or episode", "If uncertain, do not merge",
                           "temporal order", "never leave an unanchored relative time"]),
    "recmem_episodes": (0.0, ["topic threads", "prefer 1-3", "at least two message dates", "3 to 6 sentences",
                              "not always when the event happened"]),
    "recmem_refine": (0.0, ["Raw Reference", "Episodic Memory", "leaves out or compresses", "fewer than 10 facts",
                            "USER_EVENT", "USER_CONSTRAINT_OR_PREFERENCE", "TIME_ANCHORED_UPDATE",
                            "ENTITY_RELATION", "Novelty", "{maintenance}"]),
}


@pytest.mark.parametrize("role", sorted(KEY))
def test_template_carries_the_papers_key_instructions(role: str) -> None:
    temperature, phrases = KEY[role]
    text = template(role)
    missing = [p for p in phrases if p not in text]
    assert not missing, f"{role} lacks {missing}"
    assert get_role(role).temperature == temperature


def _plugin_reader_roles() -> set[str]:
    """Reader roles of the families only installed plugin systems use (no paper prompt of memcore's to check)."""
    from memcore.llm.roles.readers import family_of, get_family
    from memcore.systems import load_all as systems

    fams = {name: family_of(name) for name in systems()}
    ours = {f for name, f in fams.items() if systems()[name].__module__.startswith("memcore.")}
    return {get_family(f).pick(src, cat).name for f in set(fams.values()) - ours
            for src in ("locomo", "longmemeval", "jsonl") for cat in (None, 1, 2, 3, 4, 5)}


def test_every_reader_role_is_checked() -> None:
    readers = {name for name, r in load_all().items() if "reader" in r.tags} - _plugin_reader_roles()
    assert readers == {r for r in KEY if r.startswith("answer_")}


def test_fact_maintenance_rules_name_their_mode() -> None:
    assert "`updates`" in MAINTENANCE["update"] and "give no updates" in MAINTENANCE["append"]
    assert {RECMEM_MERGE.name, RECMEM_EPISODES.name, RECMEM_REFINE.name} <= set(load_all())


@pytest.mark.parametrize(("system", "source", "category", "role"), [
    ("com", "locomo", 4, "answer_com_locomo"),
    ("com", "longmemeval", "temporal-reasoning", "answer_com_longmemeval"),
    ("com", "jsonl", None, "answer_com_locomo"),
    ("memcot", "locomo", 1, "answer_locomo_standard"),
    ("memcot", "locomo", 5, "answer_locomo_standard_adversarial"),
    ("memcot", "longmemeval", "multi-session", "answer_longmemeval_standard"),
    ("recmem", "locomo", 2, "answer_recmem_locomo"),
    ("recmem", "longmemeval", "knowledge-update", "answer_recmem_longmemeval"),
    ("xmemory", "locomo", 3, "answer_xmemory_locomo"),
    ("memweaver", "locomo", 1, "answer_memweaver"),
    ("memweaver", "locomo", 2, "answer_memweaver_temporal"),
    ("memweaver", "locomo", 3, "answer_memweaver_open_domain"),
    ("memweaver", "locomo", 5, "answer_memweaver_adversarial"),
    ("naive_rag", "locomo", 2, "answer"),
    ("full_context", "longmemeval", None, "answer"),
])
def test_each_system_reads_with_its_papers_prompt(system, source, category, role) -> None:
    r = reader_for(system, "paper", source, category, ["Ana", "Ben"])
    assert r.role == role and r.temperature == get_role(role).temperature


def test_reader_choices_are_named_options() -> None:
    assert reader_for("com", "short").role == "answer"
    assert reader_for("naive_rag", "com", "locomo").role == "answer_com_locomo"
    hint = reader_for("memcot", "paper", "locomo", 2, ["Ana", "Ben"]).extra
    assert hint["hint"].strip() == "Use DATE of CONVERSATION to answer with an approximate date."
    assert (hint["speaker_a"], hint["speaker_b"]) == ("Ana", "Ben")
    assert reader_for("memcot", "paper", "locomo", 4).extra["hint"] == ""
    with pytest.raises(ValueError, match="reader must be one of"):
        reader_for("com", "mine")
    assert "paper" in reader_choices() and "short" in reader_choices()


@pytest.mark.parametrize(("system", "config", "role"), [("com", {}, "answer_com_locomo"),
                                                        ("com", {"reader": "short"}, "answer"),
                                                        ("recmem", {}, "answer_recmem_locomo"),
                                                        ("naive_rag", {}, "answer"),
                                                        ("naive_rag", {"reader": "com"}, "answer_com_locomo")])
def test_the_reader_used_is_in_the_trace(tmp_path, tiny_conv, system, config, role) -> None:
    tiny_conv.source = "locomo"
    wb = Workbench(Settings(store_uri=str(tmp_path / "s"), embedder="hashing"), embedder=HashingEmbedder())
    wb.ingest(system, tiny_conv, **config)
    ans = wb.system(system, tiny_conv, **config).answer(tiny_conv.questions[0])
    assert ans.trace.reader["role"] == role and ans.trace.reader["choice"] == config.get("reader", "paper")
    assert ans.trace.reader["temperature"] == get_role(role).temperature and ans.text
    assert ans.to_dict()["trace"]["reader"]["role"] == role  # what eval results store per question
