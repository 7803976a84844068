"""Offline MemWeaver extraction precision: names vs sentence starts, things vs feelings and fragments."""

from __future__ import annotations

import pytest

from memcore.llm.offline.memweaver_extract import clauses, named_spans, offline_entities, offline_relations

SPEAKERS = ["Ann", "Bob"]


def ents(text: str, speaker: str = "Ann") -> list[str]:
    return offline_entities({"text": text, "speaker": speaker, "speakers": SPEAKERS})["entities"]


@pytest.mark.parametrize(("text", "name"), [
    ("Luna and Oliver! They are so cute.", "Luna"),
    ("Oliver's hilarious! He hid my slipper.", "Oliver"),
    ("Max looks so peaceful.", "Max"),
    ("It was Matt Patterson, he is so talented!", "Matt Patterson"),
    ("We went to Rome. Rome was lovely.", "Rome"),
])
def test_names_are_kept_wherever_they_stand(text: str, name: str) -> None:
    assert name in named_spans(text, SPEAKERS)


@pytest.mark.parametrize("text", [
    "Talk to you soon!",
    "Check out the crowd.",
    "Strong support really helps.",
    "Lucky you to have such a family!",
    "Yep, that was fun.",
    "Appreciate the kind words.",
])
def test_capitalised_sentence_starts_are_not_names(text: str) -> None:
    assert named_spans(text, SPEAKERS) == []
    assert ents(text) == ["Ann"]


def test_a_gerund_before_a_speaker_is_not_part_of_the_name() -> None:
    assert named_spans("Seeing Ann's kids smile was the best.", SPEAKERS) == ["Ann"]


@pytest.mark.parametrize(("text", "noise"), [
    ("The support group has made me feel accepted.", "accepted"),
    ("I totally agree with that.", "agree"),
    ("I felt so grateful for the support.", "grateful"),
    ("Max looks so peaceful.", "so peaceful"),
    ("I'm carving out some me-time each day.", "Ann-time each day"),
    ("It made me think how far I've come.", "how far Ann"),
    ("I ran a charity race for mental health last Saturday \u2013 it was great.", "mental health last Saturday \u2013"),
])
def test_feelings_adverbs_and_rewritten_fragments_are_not_entities(text: str, noise: str) -> None:
    found = [e.lower() for e in ents(text)]
    assert noise.lower() not in found
    assert all("ann" not in e.split() or e == "ann" for e in found)


def test_things_and_relations_are_still_extracted() -> None:
    text = ("I adopted a puppy named Bailey. The group made me feel accepted and I recently joined a pottery "
            "class. I ran a charity race for mental health last Saturday \u2013 it was rewarding.")
    found = ents(text)
    assert {"Ann", "Bailey", "puppy", "pottery class", "charity race", "mental health"} <= set(found)
    rels = offline_relations({"text": text, "speaker": "Ann", "speakers": SPEAKERS, "entities": found})["relations"]
    triples = {(r["source"], r["relation"], r["target"]) for r in rels}
    assert ("Ann", "adopted", "puppy") in triples and ("puppy", "named", "Bailey") in triples
    # the clause after a rejected object ("feel accepted") is still found
    assert ("Ann", "recently joined", "pottery class") in triples
    assert ("charity race", "for", "mental health") in triples


def test_time_words_are_trimmed_from_objects() -> None:
    objs = {c["target"] for c in clauses("Ann's camping trip last year was fun.", "Ann", SPEAKERS)}
    assert "camping trip" in objs and not any("last" in o for o in objs)
