"""The offline `answer` and `judge` roles: typed answers, dates, abstention, prompts."""

from __future__ import annotations

from typing import Any

from memcore.eval.judge_role import JUDGE
from memcore.llm import LLMClient, OfflineEngine
from memcore.llm.offline.answer import ABSTAIN, offline_answer
from memcore.llm.offline.answer_types import question_kind
from memcore.llm.roles import get_role

D1 = "1:56 pm on 8 May, 2023"
D2 = "1:14 pm on 25 May, 2023"


def turn(speaker: str, text: str, date: str = D1, score: float = 0.5) -> dict[str, Any]:
    return {"text": f"{speaker}: {text}", "date": date, "score": score, "speaker": speaker}


def ask(question: str, *passages: dict[str, Any]) -> str:
    return offline_answer({"question": question, "context": "", "question_date": "",
                           "passages": list(passages)}).text


CHAT = [
    turn("Caroline", "Hey Mel! Good to see you! How have you been?"),
    turn("Melanie", "Hey Caroline! I'm swamped with the kids & work. What's up with you?"),
    turn("Caroline", "I went to a LGBTQ support group yesterday and it was so powerful."),
    turn("Melanie", "Yeah, I painted that lake sunrise last year! It's special to me."),
    turn("Caroline", "I'm off to go do some research on adoption agencies."),
    turn("Melanie", "I ran a charity race for mental health last Saturday.", D2),
    turn("Melanie", "We have three kids and two cats at home.", D2),
    turn("Caroline", "My friend Matt Patterson sang at the concert. It was amazing!", D2),
    turn("Melanie", "We went camping at Yosemite National Park last summer.", D2),
    turn("Caroline", "I just signed up for a pottery class, so exciting!", D2),
    turn("Melanie", 'I loved reading "Charlotte\'s Web" as a kid.', D2),
]


def test_when_resolves_yesterday_against_the_passage_date() -> None:
    assert ask("When did Caroline go to the LGBTQ support group?", *CHAT) == "7 May 2023"


def test_when_last_year_gives_the_year() -> None:
    assert ask("When did Melanie paint a sunrise?", *CHAT) == "2022"


def test_when_last_weekday_in_locomo_style() -> None:
    assert ask("When did Melanie run a charity race?", *CHAT) == "the Saturday before 25 May 2023"


def test_when_plain_event_is_the_session_date() -> None:
    assert ask("When did Caroline sign up for a pottery class?", *CHAT) == "25 May 2023"


def test_who_picks_a_person() -> None:
    assert ask("Who sang at the concert?", *CHAT) == "Matt Patterson"


def test_how_many_picks_a_number() -> None:
    assert ask("How many kids does Melanie have?", *CHAT) == "three"


def test_where_picks_a_place() -> None:
    assert ask("Where did Melanie go camping?", *CHAT) == "Yosemite National Park"


def test_what_book_picks_the_title() -> None:
    assert ask("What book did Melanie love as a kid?", *CHAT) == "Charlotte's Web"


def test_what_gives_the_new_words_after_the_matched_verb() -> None:
    assert ask("What did Caroline research?", *CHAT) == "adoption agencies"


def test_no_support_abstains() -> None:
    assert ask("What is Caroline's favourite football team?", *CHAT) == ABSTAIN
    assert ask("When did Caroline go to the support group?") == ABSTAIN
    assert ask("", *CHAT) == ABSTAIN


def test_fact_about_the_other_speaker_abstains() -> None:
    # Melanie ran the race; a question putting it on Caroline is unanswerable (LoCoMo category 5).
    assert ask("What did Caroline raise money for at the charity race?", *CHAT) == ABSTAIN
    assert ask("What did Melanie raise money for at the charity race?", *CHAT) != ABSTAIN


def test_context_lines_without_passages() -> None:
    ctx = "[8 May, 2023] Caroline: I went to a LGBTQ support group yesterday.\n[9 May, 2023] Melanie: Nice!"
    out = offline_answer({"question": "When did Caroline go to the LGBTQ support group?", "context": ctx})
    assert out.text == "7 May 2023"


def test_question_kinds() -> None:
    assert question_kind("How long ago was Caroline's 18th birthday?")["sub"] == "ago"
    assert question_kind("What books has Melanie read?")["list"] is True
    assert question_kind("What book did Caroline recommend?")["sub"] == "title"
    assert question_kind("Would Caroline pursue writing?")["hedge"] is True


def test_answer_is_deterministic() -> None:
    q = "What did Caroline research?"
    assert {ask(q, *CHAT) for _ in range(3)} == {"adoption agencies"}


def test_answer_role_through_the_client() -> None:
    llm = LLMClient(OfflineEngine())
    inputs = {"question": "When did Caroline go to the LGBTQ support group?", "context": "[8 May, 2023] ...",
              "question_date": "", "passages": CHAT}
    res = llm.run("answer", inputs, stage="answer")
    assert res.ok and res.output.text == "7 May 2023"
    assert res.prompt_tokens > 0 and res.completion_tokens > 0
    msgs = get_role("answer").messages(inputs)
    assert "No information available" in msgs[0]["content"] and inputs["question"] in msgs[1]["content"]


def judge(prediction: str, gold: str, category: Any = 4, question_type: str = "") -> Any:
    llm = LLMClient(OfflineEngine())
    res = llm.run(JUDGE.name, {"question": "When did Caroline go to the support group?", "gold": gold,
                               "prediction": prediction, "category": category, "question_type": question_type},
                  stage="judge")
    assert res.ok
    return res.output


def test_judge_offline_is_lexical() -> None:
    ok = judge("7 May 2023", "7 May 2023", 2)
    assert ok.label == "CORRECT" and "lexical judge" in ok.reason
    assert judge("She went on 7 May 2023, a Sunday", "7 May 2023", 2).label == "CORRECT"  # gold contained
    bad = judge("June 2023", "7 May 2023", 2)
    assert bad.label == "WRONG" and "lexical judge" in bad.reason


def test_judge_offline_abstention_questions() -> None:
    assert judge("No information available", "Not mentioned in the conversation", 5).label == "CORRECT"
    assert judge("Sweden", "Not mentioned in the conversation", 5).label == "WRONG"
    assert judge("Not mentioned.", "The user never said", "", "single-session-user_abs").label == "CORRECT"


def test_judge_role_renders_the_benchmark_prompt() -> None:
    role = JUDGE
    inputs = {"question": "When did Caroline go to the support group?", "gold": "7 May 2023",
              "prediction": "May 7", "category": 2, "question_type": ""}
    msgs = role.messages(inputs)
    user = msgs[1]["content"]
    assert "Question: When did Caroline go to the support group?" in user
    assert "Gold answer: 7 May 2023" in user and "Generated answer: May 7" in user
    assert "JSON" in msgs[0]["content"]
    lme = role.messages({**inputs, "question_type": "temporal-reasoning", "category": ""})[1]["content"]
    assert "off-by-one" in lme and "Correct Answer: 7 May 2023" in lme


def test_judge_role_reads_model_labels() -> None:
    from memcore.llm.client import parse_output

    role = JUDGE
    assert parse_output(role, '{"label": "INCORRECT", "reason": "different date"}').label == "WRONG"
    assert parse_output(role, '{"label": "CORRECT"}').label == "CORRECT"
    assert role.default({})[0].label == "WRONG"


def test_memory_item_passages_without_speakers() -> None:
    items = [
        {"text": "On 8 May 2023, Caroline said she went to a LGBTQ support group yesterday (7 May 2023).",
         "date": "2023-05-08", "score": 0.6, "speaker": ""},
        {"text": "On 25 May 2023, Melanie said she ran a charity race last Saturday.", "date": "", "score": 0.5,
         "speaker": ""},
        {"text": "Caroline is researching adoption agencies.", "date": "2023-05-25", "score": 0.4, "speaker": ""},
    ]
    assert ask("When did Caroline go to the LGBTQ support group?", *items) == "7 May 2023"
    assert ask("When did Melanie run a charity race?", *items) == "the Saturday before 25 May 2023"
    assert ask("What is Caroline researching?", *items) == "adoption agencies"
    assert ask("What is Melanie researching?", *items) == ABSTAIN


def test_question_time_restriction_prefers_passages_from_that_time() -> None:
    chat = [turn("Melanie", "We painted a lake together.", D1), turn("Melanie", "We painted a sunset together.", D2)]
    # both fall in May 2023 and answer equally well: both answers (a list since MULTI)
    assert ask("What did Melanie paint in May 2023?", *chat) in ("lake", "sunset", "lake, sunset")
    assert ask("What did Melanie paint on 25 May, 2023?", *chat) == "sunset"


def test_session_passages_are_split_into_turns() -> None:
    session = {"text": "Caroline: I went to a LGBTQ support group yesterday.\nMelanie: Wow, that's cool!\n"
                       "Melanie: I ran a charity race last Saturday.", "date": D2, "score": 0.7, "speaker": ""}
    assert ask("When did Caroline go to the LGBTQ support group?", session) == "24 May 2023"
    assert ask("When did Caroline run a charity race?", session) == ABSTAIN


# ---------------------------------------------------------------- the demo's questions (issue 15, item 1)
def _demo_passages(conv: Any, turn_ids: Any) -> list[dict[str, Any]]:
    out = []
    for tid in turn_ids:
        t = conv.turn(tid)
        if t is not None:
            out.append({"text": f"{t.speaker}: {t.content}", "date": t.session_date, "score": 1.0,
                        "speaker": t.speaker, "turn_ids": [t.turn_id]})
    return out


def test_name_question_kind() -> None:
    assert question_kind("What is the name of Maya's dog?")["sub"] == "name"
    assert question_kind("What is Maya's dog called?")["sub"] == "name"
    assert question_kind("What is Maya's dog's name?")["sub"] == "name"
    assert question_kind("What did Maya name her dog?")["sub"] != "title"


def test_demo_flagship_question_from_the_gold_turn_alone_and_in_the_whole_conversation() -> None:
    from memcore.datasets.demo import load_demo

    conv = load_demo()
    q = "What is the name of Maya's dog?"
    assert ask(q, *_demo_passages(conv, ["D1:7"])) == "Pepper"
    # the whole conversation: "my sister Lena came with Pepper" names the sister too; the dog wins the vote
    assert ask(q, *_demo_passages(conv, [t.turn_id for t in conv.turns])) == "Pepper"
    # and from D1:7 among other turns in retrieval order, in any order
    others = ["D1:5", "D1:3", "D1:9", "D1:14"]
    for ids in (["D1:7", *others], [*others, "D1:7"]):
        assert ask(q, *_demo_passages(conv, ids)) == "Pepper"


def test_demo_questions_from_their_gold_evidence() -> None:
    from memcore.datasets.demo import load_demo

    conv = load_demo()
    expect = {  # extraction by expected type: a name, a place with its noun, a person, a year, a resolved day
        "What is the name of Maya's dog?": "Pepper",
        "Where did Maya adopt her dog from?": "Happy Paws shelter",
        "Who teaches Jonas's pottery class?": "Ruth Okafor",
        "When did Maya adopt Pepper?": "2022",
        "When did Maya run her first 10K race?": "7 May 2023",
    }
    by_text = {q.text: q for q in conv.questions}
    for text, answer in expect.items():
        assert ask(text, *_demo_passages(conv, by_text[text].evidence)) == answer, text


def test_name_vote_skips_names_labelled_as_something_else() -> None:
    chat = [turn("Maya", "My sister Lena came with Pepper to the race."),
            turn("Maya", "I adopted Pepper from the shelter last year. She's a beagle mix.")]
    assert ask("What is the name of Maya's dog?", *chat) == "Pepper"
    assert ask("What is the name of Maya's sister?", *chat) == "Lena"


def test_person_prefers_a_name_not_after_a_place_preposition() -> None:
    chat = [turn("Jonas", "I started a pottery class at Clay Corner. It's taught by a ceramicist called Ruth Okafor.")]
    assert ask("Who teaches Jonas's pottery class?", *chat) == "Ruth Okafor"


def test_demo_flagship_question_for_every_system_that_retrieves_the_gold_turn(workbench: Any) -> None:
    conv = workbench.load_demo()
    q = next(q for q in conv.questions if q.text == "What is the name of Maya's dog?")
    checked = 0
    for name in ("full_context", "naive_rag_session", "memcot", "naive_rag", "com"):
        a = workbench.ask(name, conv, q)
        if "D1:7" in {t for item in a.trace.items for t in item.turn_ids}:
            assert a.text == "Pepper", name
            checked += 1
    assert checked >= 2  # full context and the session baseline always hold D1:7


def test_distance_weekday_and_which_noun_questions() -> None:
    chat = [turn("Maya", "I joined the Northside Running Club. The club's long run next Saturday is 20 km along the canal."),
            turn("Maya", "Pepper only comes on my short easy runs on Tuesdays.")]
    assert ask("How far is the club's long run next Saturday?", *chat) == "20 km"
    assert ask("On which day of the week does Pepper join Maya's easy runs?", *chat) == "Tuesdays"
    assert ask("Which running club did Maya join?", *chat) == "Northside Running Club"
    assert question_kind("How far did Maya run?")["sub"] == "distance"


def test_participants_from_the_inputs_are_never_a_pet_name() -> None:
    items = [{"text": "Jonas looked after the beagle Pepper while Maya was in Lisbon.", "date": D1, "score": 0.5,
              "speaker": ""}]
    out = offline_answer({"question": "What is the name of Maya's dog?", "passages": items,
                          "speakers": ["Maya", "Jonas"]})
    assert out.text == "Pepper"


def test_what_did_x_verb_answers_the_object_after_that_verb_not_the_photo_caption() -> None:
    ev = turn("Nate", "Thanks! On another note, I made vegan ice cream last Friday and shared it with some people "
                      "in my vegan diet group. It was awesome! [shares a photo of a group of people sitting on a bench]")
    ans = ask("What did Nate make and share with his vegan diet group?", ev)
    assert ans == "vegan ice cream"


def test_list_question_joins_up_to_five_supported_passages() -> None:
    ans = ask("What instruments does Melanie play?", turn("Melanie", "I play the violin in an orchestra."),
              turn("Melanie", "I also play the clarinet since I was a kid."), turn("Melanie", "Lately I play the piano."),
              turn("Melanie", "I learned to play the drums this year!"), turn("Caroline", "Cool!"))
    parts = ans.split(", ")
    assert len(parts) == 4
    assert all(any(w in p for p in parts) for w in ("violin", "clarinet", "piano", "drums"))


def test_sentence_initial_adverb_is_not_a_title() -> None:
    # "Highly" starts a sentence capitalised; the book's title is the quoted one
    said = turn("Caroline", 'I loved "Becoming Nicole" by Amy Ellis Nutt. It is a true story. '
                            "Highly recommend it for sure!")
    assert ask("What book did Caroline recommend to Melanie?", said) == "Becoming Nicole"


def test_hedged_yes_no_question_is_answered_not_abstained() -> None:
    # "Would ...?" asks for an inference: a hedged yes/no even when no sentence matches the question words
    said = turn("Melanie", "We went camping in the mountains with the kids last summer.")
    assert ask("Would Melanie enjoy a theme park?", said) == "Likely yes"
    # a factual yes/no question keeps the abstention when nothing supports it
    assert ask("Did Melanie adopt a cat?", said) == ABSTAIN


def test_two_equally_supported_passages_give_both_answers() -> None:
    # not a plural "what" question, but two passages answer it equally well: both answers, comma-joined
    first = turn("Melanie", "I painted a sunset over the lake last week.")
    reply = turn("Caroline", "That sounds lovely!")
    second = turn("Melanie", "Yesterday I painted a horse for my daughter.")
    assert ask("What did Melanie paint?", first, reply, second) == "sunset over the lake, horse for my daughter"
    assert ask("What did Melanie paint?", first, reply) == "sunset over the lake"


def test_shared_photo_question_is_answered_from_the_caption() -> None:
    # "[shares a photo of X]": the caption matches "share a photo" questions (no abstention for want of those words)
    said = turn("Nate", "Seeing these figures just makes me feel invincible! I love his tech and that sarcastic humor. "
                        "[shares a photo of a toy iron man standing on a white surface]")
    assert ask("What did Nate share a photo of?", said) == "toy iron man standing on a white surface"


def test_how_did_x_feel_answers_the_feeling_words() -> None:
    said = turn("Joanna", "Last week someone wrote me a letter after reading my blog post. Their words touched me so much.")
    assert ask("How did Joanna feel when someone wrote her a letter?", said) == "touched"
    said = turn("John", "We visited the memorial with the kids. They were awestruck and humbled by it.")
    assert ask("How did John's kids feel at the memorial?", said) == "awestruck and humbled"


def test_why_answers_the_reason_before_so_or_after_wanted_to() -> None:
    said = turn("Jon", "My business needed a fresh start so I closed my bank account.")
    assert ask("Why did Jon close his bank account?", said) == "business needed a fresh start"
    said = turn("Maria", "Just yesterday I joined a nearby church. I wanted to feel closer to a community and my faith.")
    assert ask("Why did Maria join a nearby church?", said) == "feel closer to a community and my faith"


def test_favorite_noun_answers_its_modifier() -> None:
    said = turn("Gina", "Contemporary dance is so expressive and graceful - it really speaks to me.")
    assert ask("What is Gina's favorite style of dance?", said) == "Contemporary dance"
