"""Evidence passages for the offline `answer` role: parsing, speakers, and who a sentence is about.

A passage is one retrieved item (a dialogue turn "Caroline: ..." or a memory item) with its
date (its date field, else the "[date]" its text starts with: "[8 May, 2023] Caroline: ...", so
every context format keeps its dates), retrieval score and sentences (an image caption "[shares a photo of X]" becomes its own
sentence "X"). Speakers are the passages' speakers plus names used to address someone
("Thanks, Caroline!"). A sentence is about a person when it names them (not as a form of
address), when they say it in the first person, or when the other speaker says it to them
("you ...", a question, or addressing them by name).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from memcore.text.sentences import SENTENCE_STARTERS, capitalised_spans, sentences
from memcore.text.terms import STOPWORDS, stems

_PREFIX = re.compile(r"^\s*(?:\[([^\]]{0,60})\]\s*)?([A-Z][\w .'\-]{0,40}?):\s+")
_CAPTION = re.compile(r"\[shares? (?:a |an )?(?:photo|picture|image|pic) of ([^\]]+)\]", re.I)
# a photo's caption is what the speaker "shared a photo of": those words match it too
CAPTION_STEMS = frozenset(stems("shared photo"))
_DATED_LINE = re.compile(r"^\s*(?:[-*\u2022]\s+)?\[([^\]]{4,60})\]\s*(.*)$")  # "- [date] text" in a list too
_INTERJECTION = re.compile(r"(?:^|[,!.?]\s*|\b(?:hey|hi|hello|thanks|thank you|wow|congrats|oh|yeah|yes|sorry|aw+|"
                           r"yay|woohoo|bye|dear|omg|haha|ha|so|well|ok|okay|great|cool|awesome|yep|nice)\W*)$", re.I)
_GREETING = re.compile(r"^\W*(?:hey|hi|hello|hiya|yo|morning|evening)\b[\s,!]*[A-Z][a-z]+\W*", re.I)
_FIRST = re.compile(r"\b(I|I'm|I've|I'd|I'll|me|my|mine|myself|we|we're|we've|our|us)\b", re.I)
_SECOND = re.compile(r"\b(you|your|yours|you're|you've|you'd|you'll|yourself)\b", re.I)


@dataclass(frozen=True)
class Sent:
    """One sentence of a passage with its stems."""

    text: str
    passage: int
    pos: int
    stems: frozenset[str]
    question: bool
    caption: bool = False
    pairs: frozenset[tuple[str, str]] = frozenset()


@dataclass(frozen=True)
class Passage:
    """One evidence passage: body text, speaker, date, retrieval score and sentences."""

    text: str
    speaker: str
    date: str
    score: float
    sents: tuple[Sent, ...] = ()
    stems: frozenset[str] = frozenset()


def parse_passages(inputs: dict[str, Any]) -> list[Passage]:
    """Passages from the role inputs ("passages", else the dated lines of "context"), in order.

    Parsed once per distinct input (a full-context reader gets the same context for every question); passages
    and sentences are frozen, so the cached ones cannot be changed by a caller."""
    raw = inputs.get("passages")
    if raw:
        try:
            key = json.dumps(raw, sort_keys=True)  # exact for JSON values (floats round-trip)
        except (TypeError, ValueError):  # other values (numpy numbers): parsed as they are, not cached
            return list(_parse(raw))
        return list(_parsed_passages(key))
    return list(_parsed_context(str(inputs.get("context", ""))))


@lru_cache(maxsize=32)
def _parsed_passages(raw_json: str) -> tuple[Passage, ...]:
    return _parse(json.loads(raw_json))


@lru_cache(maxsize=32)
def _parsed_context(context: str) -> tuple[Passage, ...]:
    raw = []
    for line in context.splitlines():
        m = _DATED_LINE.match(line)
        if line.strip():
            raw.append({"text": m.group(2) if m else line, "date": m.group(1) if m else "", "score": 0.0})
    return _parse(raw)


def _parse(raw: list[dict[str, Any]]) -> tuple[Passage, ...]:
    out: list[Passage] = []
    for r in _split_dialogues(raw):
        text, speaker = str(r.get("text", "") or ""), str(r.get("speaker", "") or "")
        date = str(r.get("date", "") or "")
        m = _PREFIX.match(text)
        if m and (not speaker or m.group(2) == speaker):
            speaker, text = m.group(2), text[m.end():]
            date = date or (m.group(1) or "")  # "[date] Speaker: text" carries its date in the text
        elif not date and (d := _DATED_LINE.match(text)):  # "[date] text" without a speaker
            date, text = d.group(1), d.group(2)
        try:
            score = float(r.get("score") or 0.0)
        except (TypeError, ValueError):
            score = 0.0
        i = len(out)
        sents = tuple(Sent(t, i, j, st, q, caption=c, pairs=pr) for j, (t, st, q, c, pr) in enumerate(_sentences_of(text)))
        if sents:
            out.append(Passage(text=text, speaker=speaker, date=date, score=score, sents=sents,
                               stems=frozenset().union(*(s.stems for s in sents))))
    return tuple(out)


@lru_cache(maxsize=65536)
def _sentences_of(text: str) -> tuple[tuple[str, frozenset[str], bool, bool, frozenset[tuple[str, str]]], ...]:
    """(sentence, stems, is-question, is-caption, stem pairs) of a passage body; cached, as full contexts
    repeat every turn."""
    out = [(sent, sent.rstrip().endswith("?"), False) for sent in sentences(_CAPTION.sub("", text).strip())]
    out += [(cap.strip(), False, True) for cap in _CAPTION.findall(text)]
    return tuple((t, frozenset(st := stems(t)) | (CAPTION_STEMS if c else frozenset()), q, c, pairs(st)) for t, q, c in out)


def pairs(seq: list[str]) -> frozenset[tuple[str, str]]:
    """Consecutive content-word stems of a text, as unordered pairs ("upside-down yoga", "cooking show")."""
    return frozenset((a, b) if a < b else (b, a) for a, b in zip(seq, seq[1:], strict=False) if a != b)


def _split_dialogues(raw: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A passage holding several "Speaker: text" lines (a whole session) becomes one passage per line."""
    out: list[dict[str, Any]] = []
    for r in raw:
        lines = [ln for ln in str(r.get("text", "") or "").splitlines() if ln.strip()]
        if len(lines) > 1 and sum(1 for ln in lines if _PREFIX.match(ln)) >= 2:
            out += [{**r, "text": ln, "speaker": ""} for ln in lines]
        else:
            out.append(r)
    return out


@lru_cache(maxsize=65536)
def vocatives(text: str) -> frozenset[str]:
    """Names used to address someone: "Thanks, Caroline!", "Hey Mel," -> {"Caroline", "Mel"}."""
    out = set()
    for m in re.finditer(r"\b([A-Z][a-z]{2,})\b", text):
        word = m.group(1)
        if word.lower() not in STOPWORDS and word.lower() not in SENTENCE_STARTERS and _is_vocative(text, m):
            out.add(word)
    return frozenset(out)


def _is_vocative(text: str, m: re.Match) -> bool:
    after = text[m.end():m.end() + 3]
    before = text[max(0, m.start() - 16):m.start()]
    return bool(re.match(r"\s*(?:[,!?]|\.(?:\s|$))|\s*$", after)) and bool(_INTERJECTION.search(before))


def speakers_of(passages: list[Passage]) -> list[str]:
    """Participants: passage speakers and addressed names, short forms ("Mel") folded into full ones."""
    names = {p.speaker for p in passages if p.speaker}
    for p in passages:
        names |= vocatives(p.text)
    names = {n for n in names if n.lower() not in {"i", "you"}}
    return sorted(n for n in names if not any(o != n and o.lower().startswith(n.lower()) for o in names))


def mentions(text: str, name: str) -> bool:
    """Whether a text names a person, by full name or a short form of at least 3 letters ("Mel")."""
    first = name.split()[0].lower()
    return any(len(w) >= 3 and first.startswith(w.lower().removesuffix("'s"))
               for w in re.findall(r"[A-Z][a-z']+", text))


def subject_of(question: str, speakers: list[str]) -> str:
    """The one person a question asks about ("" when none or several are named)."""
    known = [s for s in speakers if mentions(question, s)]
    if known:
        return known[0] if len(known) == 1 else ""
    persons = [s for s in capitalised_spans(question) if " " not in s and not s.isupper()]
    return persons[0] if len(persons) == 1 else ""


def _named(text: str, name: str) -> bool:
    first = re.escape(name.split()[0])
    return any(not _is_vocative(text, m) for m in re.finditer(rf"\b{first}\b", text))


@lru_cache(maxsize=256)
def _named_anywhere(text: str, name: str) -> bool:
    """_named over a whole passage, once per (passage, name): is_about asks it for every sentence of the passage
    (per sentence, a scan of a BEAM session's 160K characters made one answer quadratic: 25 s of CPU)."""
    return _named(text, name)


def is_about(p: Passage, s: Sent, name: str, participant: bool = True) -> bool:
    """Whether a sentence is by or about a person (see the module docstring); non-participants must be named."""
    if _named(s.text, name):
        return True
    if not p.speaker or not participant:  # a memory item, or a third party (a pet, a friend): named anywhere
        return _named_anywhere(p.text, name)
    by = p.speaker == name or name.lower().startswith(p.speaker.lower()) or p.speaker.lower().startswith(name.lower())
    if s.caption:
        return by
    me = bool(_FIRST.search(s.text))
    addressed = any(not name.lower().startswith(v.lower()) for v in vocatives(_GREETING.sub("", s.text)))
    to_other = not me and (bool(_SECOND.search(s.text)) or s.question or addressed)
    return by != to_other


def vocabulary(passages: list[Passage]) -> frozenset[str]:
    """Lower-case words of all passages (sentence-initial capitals of these are not names)."""
    return frozenset().union(*(_lower_words(p.text) for p in passages))


@lru_cache(maxsize=65536)
def _lower_words(text: str) -> frozenset[str]:
    return frozenset(re.findall(r"\b[a-z][a-z'\-]*", text))
