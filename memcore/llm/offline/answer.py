"""Offline answering: pick the best-supported evidence sentence and extract a short answer.

1. The question's expected answer type (date, number, person, place, yes/no, reason, title,
   thing), its content words (stemmed; the main verb after a named subject weighs more) and
   the person it asks about.
2. Every passage sentence is scored by the idf-weighted share of question words it and its
   passage cover, the retrieval score, a bonus when it holds a span of the expected type, a
   penalty when it is itself a question (the reply that follows it inherits its support), and
   a penalty when it is neither by nor about the asked-about person.
3. From the best sentence: a date resolved against the passage date (LoCoMo style: "7 May
   2023", "the Friday before 15 July 2023"), a number, a name, a place, a title, yes/no, or
   the shortest clause fragment carrying new information. List questions ("What books ...")
   join the answers of up to three passages. "No information available" (LoCoMo's
   abstention phrase) when nothing supports an answer well enough.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from memcore.llm.offline.answer_dates import in_period, question_period
from memcore.llm.offline.answer_feelings import FEELING_Q, feeling_span
from memcore.llm.offline.answer_fragments import FragmentSource, best_fragment, matches
from memcore.llm.offline.answer_names import name_votes
from memcore.llm.offline.answer_passages import (
    Passage,
    Sent,
    is_about,
    mentions,
    pairs,
    parse_passages,
    speakers_of,
    subject_of,
    vocabulary,
)
from memcore.llm.offline.answer_types import NAME_WORDS, extract_typed, question_kind
from memcore.llm.roles import TextOutput
from memcore.text.terms import stem, stems

ABSTAIN = "No information available"
MIN_COVER = 0.18  # share of the question's (idf-weighted) words the best passage must cover
MIN_SUPPORT = 0.3  # the best sentence by or about the asked-about person must score this much
# Among many passages some unrelated one covers a few question words by chance: stricter thresholds then
# (on LoCoMo's whole conversations they change categories 1-4 not at all and keep category 5's abstentions)
FEW_PASSAGES = 5
MIN_COVER_MANY = 0.25
MIN_SUPPORT_MANY = 0.4
OTHER_SPEAKER = 0.45  # support factor for sentences neither by nor about the asked-about person
QUESTION_SENT = 0.5  # support factor for sentences that are themselves questions
REPLY = 1.0  # share of a question sentence's coverage passed on to the reply that follows it
TYPE_BONUS = 0.15  # added when a sentence holds a span of the expected answer type
FOCUS = 1.5  # weight factor of the question's main verb ("What did Caroline *research*?")
LIST_PARTS = 5  # answers joined for list questions
LIST_SUPPORT = 0.4  # share of the best support a list part's sentence needs
# a "what" question that another passage supports almost as well as the best one gets a list answer too: the
# conversation mentions several answers ("What does Melanie do with her kids?": camping; painting)
MULTI = 0.9  # share of the best support that other passage's sentence needs
CAPTION_BONUS = 0.1  # fragment support of a shared photo's caption beyond the best sentence's coverage
PAIR_BONUS = 0.15  # times the share of the question's adjacent word pairs a sentence has side by side too
PERIOD_WEIGHT = 1.0  # the question period weighs as much as this many average terms
DATE_TERM = "@date"  # pseudo-term: the passage's date falls in the question's period ("in May 2023")
_TYPED = ("date", "number", "person", "place")
_CROSS = ("number", "person", "place")  # types looked for beyond the best passage


@dataclass
class Cand:
    """A scored sentence: support, the passage's and sentence's coverage, and aboutness."""

    score: float
    sent: Sent
    pcov: float
    scov: float
    about: bool


def offline_answer(inputs: dict[str, Any]) -> TextOutput:
    """A short answer of the expected type from the best-supported passage, or an abstention."""
    question = str(inputs.get("question", "")).strip()
    participants = [str(s) for s in inputs.get("speakers") or [] if str(s).strip()]
    return TextOutput(text=answer_question(question, parse_passages(inputs), participants))


def answer_question(question: str, passages: list[Passage], participants: list[str] | None = None) -> str:
    """The answer text for a question over parsed passages (participants: the conversation's speakers,
    which memory items without a speaker do not reveal)."""
    if not question or not passages:
        return ABSTAIN
    kind = question_kind(question)
    found = speakers_of(passages)
    speakers = found + [p for p in participants or [] if not any(p.lower().startswith(f.lower()) or
                                                                   f.lower().startswith(p.lower()) for f in found)]
    subject = subject_of(question, speakers)
    names = {stem(w.lower()) for n in speakers + ([subject] if subject else []) for w in n.split()}
    period = question_period(question)
    meta = {stem(w) for w in NAME_WORDS} if kind["sub"] == "name" else set()
    qstems = [s for s in stems(question) if s not in names and s not in meta and s not in set(stems(period[3]))]
    if not qstems:
        return ABSTAIN
    weights = _weights(qstems, passages, question, subject)
    if period[3]:  # the question's time restriction counts as one more (average) term
        weights[DATE_TERM] = PERIOD_WEIGHT * sum(weights.values()) / len(weights)
    ranked = _rank(passages, weights, kind, subject, question, period)
    few = len(passages) <= FEW_PASSAGES
    min_cover, min_support = (MIN_COVER, MIN_SUPPORT) if few else (MIN_COVER_MANY, MIN_SUPPORT_MANY)
    if kind["type"] == "yesno" and kind["hedge"]:  # "Would Melanie ...?" asks for an inference, not a fact: no abstention
        best_about = next((c for c in ranked if c.about), None)
        texts = [best_about.sent.text] if best_about and best_about.pcov >= min_cover else [""]
        return extract_typed(kind, texts, "", set(weights), question)
    if not ranked or ranked[0].pcov < min_cover:
        return ABSTAIN
    best = ranked[0]
    if subject and not best.about:
        about = [c for c in ranked if c.about]
        if not about or about[0].score < OTHER_SPEAKER * best.score or about[0].pcov < min_cover:
            return ABSTAIN
        best = about[0]
    if best.score < min_support:
        return ABSTAIN
    vocab = vocabulary(passages)
    multi = kind["list"] or (kind["type"] == "thing" and any(
        c.sent.passage != best.sent.passage and c.score >= MULTI * best.score and (not subject or c.about) for c in ranked))
    if multi:
        parts: list[str] = []
        seen: set[int] = set()
        for c in ranked:
            if len(parts) >= LIST_PARTS or c.sent.passage in seen or c.pcov < min_cover \
                    or c.score < LIST_SUPPORT * best.score or (subject and not c.about):
                continue
            ans = _extract(kind, c, passages, weights, question, speakers, vocab)
            if ans and ans.lower() not in (p.lower() for p in parts):
                parts.append(ans)
                seen.add(c.sent.passage)
        if parts:
            return ", ".join(parts)
    if kind["sub"] == "name":  # "What is the name of Maya's dog?": the best-supported name
        ans = name_votes(_supported(ranked, passages, best, subject), set(weights),
                         speakers + ([subject] if subject else []), vocab)
        if ans:
            return ans
    if kind["type"] in _CROSS or kind["sub"] in ("title", "named"):  # a span of the expected type from the best passages
        for c in ranked[:8]:
            if c.score < 0.6 * best.score or (subject and not c.about):
                continue
            ans = _typed_in(kind, c, passages, weights, question, vocab, strict=True)
            if ans:
                return ans
    return _extract(kind, best, passages, weights, question, speakers, vocab) or ABSTAIN


def _supported(ranked: list[Cand], passages: list[Passage], best: Cand, subject: str) -> list[tuple[float, str, bool]]:
    """(support, sentence, is-the-supported-sentence) for the sentences of the well-supported passages."""
    out: list[tuple[float, str, bool]] = []
    for c in ranked[:8]:
        if c.score < 0.6 * best.score or (subject and not c.about):
            continue
        out += [(c.score, x.text, x is c.sent) for x in passages[c.sent.passage].sents]
    return out


def _focus(question: str, subject: str) -> str:
    """The main verb after a named subject: "What did Caroline research?" -> "research"."""
    if not subject:
        return ""
    first = re.escape(subject.split()[0][:3])
    m = re.search(rf"\b(?:did|does|do|has|have|had|is|was|will|would|can|could)\s+{first}\w*(?:'s)?"
                  rf"(?:\s+and\s+(?:her|his|their)\s+\w+)?\s+(\w+)", question)
    return stem(m.group(1).lower()) if m else ""


def _weights(qstems: list[str], passages: list[Passage], question: str, subject: str) -> dict[str, float]:
    """idf of each question stem over the passages (1.0 for stems no passage has), focus verb boosted."""
    n = len(passages)
    focus = _focus(question, subject)
    out: dict[str, float] = {}
    for t in dict.fromkeys(qstems):
        df = sum(1 for p in passages if matches(p.stems, t))
        out[t] = (1.0 + math.log((n + 1) / (df + 1)) if df else 1.0) * (FOCUS if t == focus else 1.0)
    return out


def _cover(stem_set: frozenset[str], weights: dict[str, float], date_ok: bool = False) -> float:
    got = sum(w for t, w in weights.items() if t == DATE_TERM and date_ok or matches(stem_set, t))
    return got / (sum(weights.values()) or 1.0)


def _rank(passages: list[Passage], weights: dict[str, float], kind: dict, subject: str, question: str,
          period: tuple = (None, None, None, "")) -> list[Cand]:
    top = max((p.score for p in passages), default=0.0) or 1.0
    participant = bool(subject) and any(mentions(sp, subject) or mentions(subject, sp) for sp in speakers_of(passages))
    typed = kind["type"] in _TYPED or kind["sub"] in ("title", "named")
    qpairs = pairs([t for t in stems(question) if t in weights])
    inherited: dict[int, tuple[float, float]] = {}  # reply passage -> (pcov, scov) of the question before it
    out: list[Cand] = []
    for i, p in enumerate(passages):
        date_ok = bool(period[3]) and in_period(p.date, period)
        pcov = _cover(p.stems, weights, date_ok)
        q_cov = max((_cover(s.stems, weights, date_ok) for s in p.sents if s.question), default=0.0)
        if q_cov > 0 and i + 1 < len(passages):
            nxt = passages[i + 1]
            if nxt.speaker and nxt.speaker != p.speaker and nxt.date == p.date:
                inherited[i + 1] = (REPLY * pcov, REPLY * q_cov)
        pin, sin = inherited.get(i, (0.0, 0.0))
        pcov = max(pcov, pin)
        if pcov <= 0:
            continue
        for s in p.sents:
            scov = _cover(s.stems, weights, date_ok)
            if s.pos < 2 and not s.question and not s.caption:
                scov = max(scov, sin)
            score = 0.7 * scov + 0.3 * pcov + 0.05 * max(0.0, p.score) / top
            if qpairs:  # question words side by side in the sentence too ("upside-down yoga poses")
                score += PAIR_BONUS * len(qpairs & s.pairs) / len(qpairs)
            if typed and extract_typed(kind, [s.text], p.date, set(weights), question, strict=True):
                score += TYPE_BONUS
            if s.question:
                score *= QUESTION_SENT
            about = not subject or is_about(p, s, subject, participant)
            out.append(Cand(score * (1.0 if about else OTHER_SPEAKER), s, pcov, scov, about))
    out.sort(key=lambda c: (-c.score, c.sent.passage, c.sent.pos))
    return out


def _ordered(c: Cand, p: Passage, weights: dict[str, float]) -> list[Sent]:
    return sorted(p.sents, key=lambda x: (x is not c.sent, -_cover(x.stems, weights), abs(x.pos - c.sent.pos)))


def _typed_in(kind: dict, c: Cand, passages: list[Passage], weights: dict[str, float], question: str,
              vocab: frozenset[str], strict: bool = False) -> str:
    p = passages[c.sent.passage]
    texts = [x.text for x in _ordered(c, p, weights)]
    return extract_typed(kind, texts, p.date, set(weights), question, strict=strict, common=vocab)


_DEMONSTRATIVE = re.compile(r"\b(this|these|here's|here is|here are|that one|them|it|pic|photo|picture)\b", re.I)
# question words that ask about what a photo shows (not "make"/"share": "What did Nate make?" is answered by
# the sentence, "I made vegan ice cream", more often than by the caption of the photo shared with it)
_SHOW_VERB = re.compile(r"\b(photo|picture|pic|look like|paint|painted|draw|drew|drawn)\b", re.I)


def _extract(kind: dict, c: Cand, passages: list[Passage], weights: dict[str, float], question: str,
             speakers: list[str], vocab: frozenset[str]) -> str:
    ans = _typed_in(kind, c, passages, weights, question, vocab)
    if ans or kind["type"] in ("date", "number", "yesno"):
        return ans
    p = passages[c.sent.passage]
    if FEELING_Q.search(question):  # "How did Joanna feel ...?": the best sentence's (or the next one's) feeling
        ans = feeling_span([x.text for x in p.sents if x.pos in (c.sent.pos, c.sent.pos + 1) and not x.question])
        if ans:
            return ans
    shows = bool(_DEMONSTRATIVE.search(c.sent.text)) or bool(_SHOW_VERB.search(question))

    def support(x: Sent) -> float:
        own = _cover(x.stems, weights)
        if x.caption:  # the photo shared with the best sentence ("they made this! [a cup ...]")
            return max(own, c.scov + CAPTION_BONUS) if shows else own
        return own

    sources = [FragmentSource(x.text, support(x), x.caption, x.question) for x in _ordered(c, p, weights)]
    return best_fragment(sources, set(weights), speakers, question, _focus(question, subject_of(question, speakers)))
