"""Content measures (memcore.eval.content): the threshold is chosen on hand-labelled (turn, context) cases."""

from __future__ import annotations

import random

import pytest

from memcore.eval.content import (
    CONTENT_THRESHOLD,
    MIN_STEMS,
    answer_in_context,
    content_measures,
    context_stems,
    turn_content_share,
    turns_present,
    window_size,
)
from memcore.eval.metrics import context_token_set, stem_tokens
from memcore.text.terms import stems

T = {
 "D1:3": "I went to a LGBTQ support group yesterday and it was so powerful.",
 "D2:8": "Researching adoption agencies — it's been a dream to have a family and give a loving home to kids who need it.",
 "D2:1": "Hey Caroline, since we last chatted, I've had a lot of things happening to me. I ran a charity race for mental health last Saturday – it was really rewarding. Really made me think about taking care of our minds.",
 "D3:13": "Yeah, I'm really lucky to have them. They've been there through everything, I've known these friends for 4 years, since I moved from my home country. Their love and help have been so important especially after that tough breakup. I'm super thankful. Who supports you, Mel?",
 "D4:3": "Thanks, Melanie! This necklace is super special to me - a gift from my grandma in my home country, Sweden. She gave it to me when I was young, and it stands for love, faith and strength. It's like a reminder of my roots and all the love and support I get from my family.",
 "D2:7": "Thanks, Caroline. It's still a work in progress, but I'm doing my best. My kids are so excited about summer break! We're thinking about going camping next month. Any fun plans for the summer?",
 "D1:11": "I'm keen on counseling or working in mental health - I'd love to support those with similar issues.",
 "D1:5": "The transgender stories were so inspiring! I was so happy and thankful for all the support.",
 "D12:14": "I appreciate our friendship too, Caroline. You've always been there for me.",
 "D13:8": "Wow, that sounds great - I agree, they're awesome. Here's a photo of my horse painting I did recently.",
}
OTHER = [  # other conv-26 turns (neighbours and same-topic turns), none restating the cases' turns
 "[D1:4] Melanie: Wow, that's cool, Caroline! What happened that was so awesome? Did you hear any inspiring stories?",
 "[D1:7] Melanie: Wow, love that painting! So cool you found such a helpful group. What's it done for you?",
 "[D2:2] Caroline: That charity race sounds great, Mel! Making a difference & raising awareness for mental health is super rewarding - I'm really proud of you for taking part!",
 "[D2:9] Melanie: Wow, Caroline! That's great! Looking forward to seeing that happen. Any tips on how you're staying motivated?",
 "[D3:12] Melanie: Wow, that's great! Family and friends make a big difference. How long have you known them?",
 "[D4:4] Melanie: That's gorgeous, Caroline! It's awesome what items can mean to us. Do you have any other objects that remind you of your family?",
 "[D5:2] Melanie: Wow Caroline, sounds like you had a blast at the pride parade! I'm so happy for you and your friends.",
 "[D6:5] Caroline: I'm excited to start working with kids and helping them feel supported and loved in a family.",
]
# (turn id, context, present?) labelled by reading: True when a reader of the context learns what the turn says
CASES = [
 ("D1:3", "\n".join(OTHER[:3] + ["[D1:3] Caroline: " + T["D1:3"]] + OTHER[3:]), True),
 ("D1:3", "- Caroline attended an LGBTQ support group on 7 May 2023 and found it powerful.", True),
 ("D1:3", "\n".join(OTHER), False),
 ("D2:8", "- Caroline is researching adoption agencies; she dreams of having a family and giving kids a loving home.", True),
 ("D2:8", "\n".join(OTHER), False),
 ("D2:1", "Episode (25 May 2023): Melanie ran a charity race for mental health the Saturday before; she found it "
          "rewarding and it made her think about taking care of her mind. Caroline was proud of her.", True),
 ("D2:1", "\n".join(OTHER), False),
 ("D3:13", "- Caroline has known her friends for 4 years, since she moved from her home country.\n"
           "- Caroline went through a tough breakup; her friends' love and help were important.", True),
 ("D3:13", "\n".join(OTHER), False),
 ("D4:3", "- Caroline's necklace was a gift from her grandma in Sweden, her home country; it stands for love, faith "
          "and strength and reminds her of her roots.", True),
 ("D4:3", "\n".join(OTHER), False),
 ("D2:7", "- Melanie's kids are excited about summer break; the family is thinking about going camping next month.", True),
 ("D2:7", "\n".join(OTHER), False),
 ("D1:11", "- Caroline is keen on counseling or working in mental health, to support people with similar issues.", True),
 ("D1:11", "\n".join(OTHER), False),
 ("D1:11", "- Caroline wants to start working with kids.\n- Melanie ran a race for mental health.", False),
 # three real contexts of the conv-26 offline run where 0.5 counted a short, generic turn as present
 ("D1:5", "[12:09 am on 13 September, 2023] Caroline: I'm inspired seeing my work make a difference for the LGBTQ+ "
          "community. Knowing I'm helping create a more loving world is amazing. I'm really thankful for my friends, "
          "family and mentors' support.", False),
 ("D12:14", "[9:55 am on 22 October, 2023] Caroline: Glad you agree, Caroline. Appreciate the support of those close "
            "to me. Their encouragement made me who I am.", False),
 ("D13:8", "[2:31 pm on 17 July, 2023] Melanie: Wow, Caroline, that sounds awesome! Can't wait to see your art - got "
           "any previews? [shares a photo of a painting with a blue and yellow design]", False),
]


def _accuracy(threshold: float, window: bool = True) -> int:
    right = 0
    for tid, ctx, label in CASES:
        if window:
            share = turn_content_share(T[tid], stems(ctx))
        else:  # the whole context as one bag of stems
            own = set(stems(T[tid]))
            share = len(own & set(stems(ctx))) / len(own)
        right += (share >= threshold) == label
    return right


def test_threshold_is_best_on_the_labelled_cases() -> None:
    # 18 of 19 right at 0.55 and 0.6; 0.55 keeps the D2:7 paraphrase (share 0.57) that 0.6 loses, and its
    # one error is D2:2 echoing D2:1's "charity race for mental health ... rewarding" (0.53 would need a
    # rule that knows who said it). 0.5 counted three short generic turns of the conv-26 run as present.
    scores = {t: _accuracy(t) for t in (0.4, 0.5, 0.55, 0.6, 0.7)}
    assert scores[CONTENT_THRESHOLD] == max(scores.values()) == 18
    assert scores[0.5] < 18 and scores[0.7] < 18


def test_the_window_matters() -> None:
    # the same stems scattered over eight other turns are not the turn: as one bag they reach 0.5 often
    assert _accuracy(CONTENT_THRESHOLD, window=False) < _accuracy(CONTENT_THRESHOLD)


def test_turn_share_hand_computed() -> None:
    # "LGBTQ support group powerful" -> stems go, lgbtq, support, group, yesterday, power (6);
    # the fact holds lgbtq, support, group, power within one window: 4/6
    assert turn_content_share(T["D1:3"], stems(CASES[1][1])) == pytest.approx(4 / 6)
    assert turn_content_share("Thanks!", stems("thanks a lot")) is None  # under MIN_STEMS: not judged


def test_turns_present_and_unknown_ids() -> None:
    ctx = "[D1:3] Caroline: " + T["D1:3"]
    got = turns_present(["D1:3", "D2:8", "D9:9"], {"D1:3": T["D1:3"], "D2:8": T["D2:8"]}, ctx)
    assert got == {"D1:3": True, "D2:8": False, "D9:9": None}


def test_answer_in_context_locomo_normalisation() -> None:
    ctx = "Caroline moved from Sweden four years ago; she went to the LGBTQ support group on 7 May, 2023."
    assert answer_in_context("7 May 2023", ctx, 2) == 1.0  # the comma is dropped, as in LoCoMo's normalisation
    assert answer_in_context("Psychology, counseling certification", ctx, 3) == 0.0
    assert answer_in_context("Sweden; from her home country", ctx, 3) == 1.0  # category 3: gold up to ';'
    assert answer_in_context("painting sunrises", "She paints a sunset", 1) == pytest.approx(0.5)  # paint, not sunris
    assert answer_in_context("anything", ctx, 5) is None


def test_content_measures_row_fields() -> None:
    ctx = "- Caroline attended an LGBTQ support group on 7 May 2023 and found it powerful."
    row = content_measures("7 May 2023", ["D1:3", "D2:8"], 2, ctx, {"D1:3": T["D1:3"], "D2:8": T["D2:8"]})
    assert row == {"content_recall": 0.5, "all_content_hit": False, "content_present": {"D1:3": True, "D2:8": False},
                   "answer_in_context": True, "answer_token_recall": 1.0}
    assert content_measures("x", [], 5, ctx, {}, abstain=True)["answer_in_context"] is None


def _share_by_every_window(turn_text: str, ctx: list[str]) -> float | None:
    """The rule read literally: the most distinct turn stems in any run of window_size consecutive context stems."""
    own = set(stems(turn_text))
    if len(own) < MIN_STEMS:
        return None
    w = window_size(len(own))
    return max((len(own & set(ctx[max(0, end - w):end])) for end in range(1, len(ctx) + 1)), default=0) / len(own)


def test_fast_measures_equal_the_plain_ones_on_real_contexts() -> None:
    # the eval's content measures are computed from cached per-line stems and a window slid over the hits only
    # (issue 28: they were most of full context's answering time); they must give exactly the plain results
    rng = random.Random(7)
    turns = list(T.values()) + [o.split(": ", 1)[1] for o in OTHER]
    for _ in range(300):
        sep = rng.choice(["\n", "\n", " ", "\n\n", "\r\n", ", "])
        ctx = sep.join(rng.sample(turns, rng.randint(0, len(turns))))
        assert context_stems(ctx) == stems(ctx)
        assert context_token_set(ctx) == set(stem_tokens(ctx))
        seq = stems(ctx)
        for t in rng.sample(turns, 3) + ["Thanks!"]:
            assert turn_content_share(t, seq) == _share_by_every_window(t, seq)
