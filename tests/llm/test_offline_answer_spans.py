"""The offline reader's learned span ranker: candidates, features, the stored model, best_span."""

from __future__ import annotations

import json

from memcore.llm.offline import answer_spans
from memcore.llm.offline.answer_spans import (
    MODEL_PATH,
    best_span,
    candidates,
    feature_names,
    load_model,
    wh_of,
)
from memcore.text.terms import STOPWORDS


def test_model_file_is_readable_json_with_a_weight_for_every_feature_the_code_computes() -> None:
    body = json.loads(MODEL_PATH.read_text())
    weights = load_model()
    assert weights == {k: float(v) for k, v in body["weights"].items()} and "intercept" in weights
    questions = ["What did Nate make?", "Where did Joanna go on her road trip?", "Who taught Maria's class?",
                 "How many pets does Andrew have?", "What kind of beer does John like?", "Why did Jon quit?",
                 "Which running club did Gina join?", "How did Melanie feel after the accident?"]
    sentences = ["I made vegan ice cream for the party, and my friends in Boston loved it!",
                 "Last Friday I went to the lake with my 3 dogs - they're called Max and Bo.",
                 "a photo of a castle on a hill"]
    seen = {name for q in questions for _, _, f in candidates(q, sentences, ["Nate", "Joanna"]) for name in f}
    assert seen <= set(feature_names()) <= set(weights), sorted(seen - set(feature_names()))


def test_candidates_do_not_start_or_end_with_stopwords_or_repeat_only_question_words() -> None:
    for text, _, _ in candidates("What did Nate make for the party?",
                                 ["I made vegan ice cream for the party, and it was a hit."]):
        words = text.lower().split()
        assert words[0] not in STOPWORDS and words[-1].strip(",.!?") not in STOPWORDS
        assert text.lower() not in ("party", "made")
        assert len(words) <= answer_spans.MAX_WORDS


def test_best_span_finds_what_was_made() -> None:
    span, score = best_span("What did Nate make?", ["I made vegan ice cream for the party"], ["Nate", "Joanna"])
    assert "vegan ice cream" in span and score > float("-inf")


def test_best_span_prefers_a_name_for_who_and_a_place_for_where() -> None:
    who, _ = best_span("Who taught the pottery class?",
                       ["The pottery class was taught by Ruth Okafor and it was so much fun"])
    assert "Ruth Okafor" in who
    where, _ = best_span("Where did Joanna go on her road trip?",
                         ["I just got back from a road trip to Woodhaven with my family"], ["Joanna", "Nate"])
    assert "Woodhaven" in where


def test_best_span_is_deterministic_and_empty_without_sentences() -> None:
    q, s = "What did Caroline research?", ["I researched adoption agencies all week.", "It was great!"]
    assert best_span(q, s) == best_span(q, list(s))
    assert best_span(q, []) == ("", float("-inf"))


def test_wh_classes() -> None:
    assert wh_of("How many kids does Melanie have?") == "howmany"
    assert wh_of("What kind of pot did Mel make?") == "kind"
    assert wh_of("Did Caroline go?") == "yesno"
    assert wh_of("In what activity did Maria participate?") == "what"
