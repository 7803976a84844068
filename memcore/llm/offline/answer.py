"""Offline answering: pick the best-supported evidence sentence and extract a short answer.

1. The question's expected answer type (date, number, person, place, yes/no, reason, thing),
   its content words (stemmed) and the speaker it is about.
2. Every passage sentence is scored by the idf-weighted share of question words it and its
   passage cover, the retrieval score, a bonus when it holds a span of the expected type, a
   penalty for questions, and a penalty when it is neither by nor about the asked-about speaker.
3. From the best sentence: a date resolved against the passage date (LoCoMo style: "7 May
   2023", "the Friday before 15 July 2023"), a number, a name, a place, or the shortest
   fragment after the matched words. "No information available" when nothing supports an answer.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from memcore.llm.offline.answer_fragments import FragmentSource, best_fragment, matches
from memcore.llm.offline.answer_types import extract_typed, question_kind
from memcore.llm.offline.text import (
    SENTENCE_STARTERS,
    STOPWORDS,
    capitalised_spans,
    parse_date,
    sentences,
    stems,
)
from memcore.llm.roles import TextOutput

ABSTAIN = "No information available"
MIN_COVER = 0.25  # share of the question's (idf-weighted) words the best passage must cover
OTHER_SPEAKER = 0.45  # support factor for passages neither by nor about the asked-about speaker
QUESTION_SENT = 0.5  # support factor for sentences that are themselves questions
TYPE_BONUS = 0.15  # added when a sentence holds a span of the expected answer type
MIN_SUPPORT = 0.4  # the best sentence by or about the asked-about person must score this much

_PREFIX = re.compile(r"^\s*(?:\[[^\]]{0,60}\]\s*)?([A-Z][\w .'\-]{0,40}?):\s+")
_CAPTION = re.compile(r"\[shares? (?:a |an )?(?:photo|picture|image|pic) of ([^\]]+)\]", re.I)


@dataclass
class Sent:
    """One sentence of a passage with its stems."""

    text: str
    passage: int
    pos: int
    stems: frozenset[str]
    question: bool
    caption: bool = False


@dataclass
class Passage:
    """One evidence passage: body text, speaker, date, retrieval score and sentences."""

    text: str
    speaker: str
    date: str
    score: float
    sents: list[Sent] = field(default_factory=list)
    stems: frozenset[str] = frozenset()


def offline_answer(inputs: dict[str, Any]) -> TextOutput:
    """A short answer of the expected type from the best-supported passage, or an abstention."""
    question = str(inputs.get("question", "")).strip()
    passages = _passages(inputs)
    return TextOutput(text=answer_question(question, passages))


@dataclass
class Cand:
    """A scored sentence: support, the passage's and sentence's coverage, and aboutness."""

    score: float
    sent: Sent
    pcov: float
    scov: float
    about: bool


def answer_question(question: str, passages: list[Passage]) -> str:
    """The answer text for a question over parsed passages."""
    if not question or not passages:
        return ABSTAIN
    kind = question_kind(question)
    speakers = _speakers(passages)
    subject = _subject(question, speakers)
    qstems = [s for s in stems(question) if s not in {stems_one(n) for n in speakers}]
    if subject:
        qstems = [s for s in qstems if s != stems_one(subject)]
    if not qstems:
        return ABSTAIN
    weights = _idf(qstems, passages)
    vocab = _vocab(passages)
    ranked = _rank(passages, weights, kind, subject, question)
    if not ranked or ranked[0].pcov < MIN_COVER:
        return ABSTAIN
    best = ranked[0]
    if subject and not best.about:
        about = [c for c in ranked if c.about]
        if not about or about[0].score < OTHER_SPEAKER * best.score or about[0].pcov < MIN_COVER:
            return ABSTAIN
        best = about[0]
    if best.score < MIN_SUPPORT:
        return ABSTAIN
    if kind.get("list"):
        parts: list[str] = []
        seen: set[int] = set()
        for c in ranked:
            if c.sent.passage in seen or c.pcov < MIN_COVER or c.score < 0.6 * best.score or len(parts) >= 3 \
                    or (subject and not c.about):
                continue
            ans = _extract(kind, c, passages, weights, question, speakers, vocab)
            if ans and ans.lower() not in (p.lower() for p in parts):
                parts.append(ans)
                seen.add(c.sent.passage)
        if parts:
            return ", ".join(parts)
    return _extract(kind, best, passages, weights, question, speakers, vocab) or ABSTAIN


def stems_one(word: str) -> str:
    """The stem of one (lower-cased) word."""
    out = stems(word)
    return out[0] if out else word.lower()


_DEMONSTRATIVE = re.compile(r"\b(this|these|here's|here is|here are|that one|them|it)\b", re.I)


def _extract(kind: dict, c: Cand, passages: list[Passage], weights: dict[str, float], question: str,
             speakers: list[str], vocab: frozenset[str]) -> str:
    p = passages[c.sent.passage]
    total = sum(weights.values()) or 1.0

    def cover(x: Sent) -> float:
        return sum(w for t, w in weights.items() if matches(x.stems, t)) / total

    ordered = sorted(p.sents, key=lambda x: (x is not c.sent, -cover(x), abs(x.pos - c.sent.pos)))
    ans = extract_typed(kind, [x.text for x in ordered], p.date, set(weights), question, common=vocab)
    if ans or kind["type"] in ("date", "number", "yesno"):
        return ans
    shows = bool(_DEMONSTRATIVE.search(c.sent.text))
    sources = [FragmentSource(x.text, max(cover(x), c.scov if x.caption and shows else 0.0) + (0.3 if x is c.sent
                              else 0.0), x.caption, x.question) for x in ordered]
    return best_fragment(sources, set(weights), speakers)


def _vocab(passages: list[Passage]) -> frozenset[str]:
    """Lower-case words of all passages (sentence-initial capitals of these are not names)."""
    return frozenset(w for p in passages for w in re.findall(r"\b[a-z][a-z'\-]*", p.text))


def _passages(inputs: dict[str, Any]) -> list[Passage]:
    raw = inputs.get("passages")
    if not raw:
        raw = []
        for line in str(inputs.get("context", "")).splitlines():
            m = re.match(r"^\s*\[([^\]]{4,60})\]\s*(.*)$", line)
            if line.strip():
                raw.append({"text": m.group(2) if m else line, "date": m.group(1) if m else "", "score": 0.0})
    out: list[Passage] = []
    for i, r in enumerate(raw):
        text, speaker = str(r.get("text", "")), str(r.get("speaker", "") or "")
        m = _PREFIX.match(text)
        if m and (not speaker or m.group(1) == speaker):
            speaker, text = m.group(1), text[m.end():]
        date = str(r.get("date", "") or "")
        p = Passage(text=text, speaker=speaker, date=date if parse_date(date) else date, score=float(r.get("score") or 0))
        body = _CAPTION.sub("", text).strip()
        for j, sent in enumerate(sentences(body)):
            p.sents.append(Sent(sent, i, j, frozenset(stems(sent)), sent.rstrip().endswith("?")))
        for cap in _CAPTION.findall(text):
            p.sents.append(Sent(cap.strip(), i, len(p.sents), frozenset(stems(cap)), False, caption=True))
        p.stems = frozenset().union(*(s.stems for s in p.sents)) if p.sents else frozenset()
        if p.sents:
            out.append(p)
    for i, p in enumerate(out):
        for s in p.sents:
            s.passage = i
    return out


_INTERJECTION = re.compile(r"(?:^|[,!.?]\s*|\b(?:hey|hi|hello|thanks|thank you|wow|congrats|oh|yeah|yes|sorry|aw+|"
                           r"yay|woohoo|bye|dear|omg|haha|ha|so|well|ok|okay|great|cool|awesome|yep|nice)\W*)$", re.I)


def vocatives(text: str) -> set[str]:
    """Names used to address someone: "Thanks, Caroline!", "Hey Mel," -> {"Caroline", "Mel"}."""
    out = set()
    for m in re.finditer(r"\b([A-Z][a-z]{2,})(?=\s*[,!?])", text):
        word = m.group(1)
        if word.lower() not in STOPWORDS and word.lower() not in SENTENCE_STARTERS and \
                _INTERJECTION.search(text[max(0, m.start() - 16):m.start()]):
            out.add(word)
    return out


def _speakers(passages: list[Passage]) -> list[str]:
    names = {p.speaker for p in passages if p.speaker}
    for p in passages:  # names addressed in the text ("Thanks, Caroline!") are participants too
        names |= vocatives(p.text)
    names = {n for n in names if n.lower() not in {"i", "you"}}
    return sorted(n for n in names if not any(o != n and o.lower().startswith(n.lower()) for o in names))


def _subject(question: str, speakers: list[str]) -> str:
    known = [s for s in speakers if _mentions(question, s)]
    if known:
        return known[0] if len(known) == 1 else ""
    persons = [s for s in capitalised_spans(question) if " " not in s and not s.isupper()]
    return persons[0] if len(persons) == 1 else ""


def _mentions(text: str, name: str) -> bool:
    first = name.split()[0]
    return bool(re.search(rf"\b{re.escape(first[:3])}[a-z]*\b", text)) and any(
        first.lower().startswith(w.lower().removesuffix("'s")) and len(w) >= 3
        for w in re.findall(r"[A-Z][a-z']+", text))


_FIRST = re.compile(r"\b(I|I'm|I've|I'd|I'll|me|my|mine|myself|we|we're|we've|our|us)\b", re.I)
_SECOND = re.compile(r"\b(you|your|yours|you're|you've|you'd|you'll|yourself)\b", re.I)


def _about(p: Passage, s: Sent, name: str) -> bool:
    """Whether a sentence is by or about a person (first person by them, second person to them, or names them)."""
    first = re.escape(name.split()[0])
    if any(not re.match(r"\s*[,!?]", s.text[m.end():]) for m in re.finditer(rf"\b{first}\b", s.text)):
        return True
    by = bool(p.speaker) and (p.speaker == name or name.lower().startswith(p.speaker.lower())
                              or p.speaker.lower().startswith(name.lower()))
    if not p.speaker:  # a memory item, not a turn: about whoever it names
        return any(not re.match(r"\s*[,!?]", p.text[m.end():]) for m in re.finditer(rf"\b{first}\b", p.text))
    me = bool(_FIRST.search(s.text))
    addressed = any(not name.lower().startswith(v.lower()) for v in vocatives(s.text))
    to_other = not me and (bool(_SECOND.search(s.text)) or s.question or addressed)
    return by != to_other if not s.caption else by


def _has(stem_set: frozenset[str], term: str) -> bool:
    return matches(stem_set, term)


def _idf(qstems: list[str], passages: list[Passage]) -> dict[str, float]:
    n = len(passages)
    out: dict[str, float] = {}
    for t in dict.fromkeys(qstems):
        df = sum(1 for p in passages if _has(p.stems, t))
        out[t] = 1.0 + math.log((n + 1) / (df + 1)) if df else 1.0
    return out


def _rank(passages: list[Passage], weights: dict[str, float], kind: dict, subject: str,
          question: str) -> list[Cand]:
    total = sum(weights.values())
    top = max((p.score for p in passages), default=0.0) or 1.0
    out: list[Cand] = []
    for p in passages:
        pcov = sum(w for t, w in weights.items() if _has(p.stems, t)) / total
        if pcov <= 0:
            continue
        for s in p.sents:
            scov = sum(w for t, w in weights.items() if _has(s.stems, t)) / total
            score = 0.7 * scov + 0.3 * pcov + 0.05 * max(0.0, p.score) / top
            if kind["type"] not in ("thing", "yesno", "reason") and extract_typed(kind, [s.text], p.date, set(),
                                                                                   question, strict=True):
                score += TYPE_BONUS
            if s.question:
                score *= QUESTION_SENT
            about = not subject or _about(p, s, subject)
            out.append(Cand(score * (1.0 if about else OTHER_SPEAKER), s, pcov, scov, about))
    out.sort(key=lambda c: (-c.score, c.sent.passage, c.sent.pos))
    return out
