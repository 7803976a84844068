"""Offline memory writing: episode summaries and semantic facts, extractive and rule-based.

Episodes are third-person rewrites of the most central informative sentences, dated and
with relative times resolved ("On 8 May 2023, Caroline went to a support group yesterday
(7 May 2023)."). Facts are the speakers' first-person declaratives rewritten with their
names. Greetings, thanks, questions and content-free emotions are skipped.
Sentence quality: sentence_quality; third-person rewriting: narration.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from memcore.llm.offline.narration import narrate, other_speaker, photo_of, rewrite, strip_photo
from memcore.llm.offline.sentence_quality import (
    EMOTION,
    FIRST_PERSON,
    clean,
    content_terms,
    entities,
    fact_worthy,
    info_score,
    informative,
)
from memcore.text.dates import RELATIVE, day_of
from memcore.text.sentences import sentences
from memcore.text.terms import keywords, overlap, term_set, terms

__all__ = ["clean", "content_terms", "entities", "fact_type", "informative", "narrative",
           "offline_episodes", "offline_facts", "parse_lines", "rewrite", "title_of"]

_TAGGED = re.compile(r"^\s*\[([^\]]+)\]\s*(?:\(([^)]*)\)\s*)?([^:\n]{1,40}):\s*(.*)$")
_SPEAKER_LINE = re.compile(r"^\s*([^:\n\[\]]{1,40}):\s*(.+)$")
_ON_DATE = re.compile(r"^On [^,]{3,30}, ")


# ------------------------------------------------------------------ episodes
def _picked(messages: list[dict], names: list[str], budget: int) -> list[tuple[int, int, str]]:
    """(message index, sentence index, sentence) of the most central informative sentences."""
    kws = keywords([m.get("text", "") for m in messages], k=8)
    # keyword weights 1.0, 0.9, ... 0.3 kept in integer tenths and summed as integers: a float sum over a set runs
    # in the set's order, which follows the process's string hash seed (PYTHONHASHSEED), so equally central
    # sentences scored 14.15 or 14.149999999999999 by the run and the tie went another way (issue 38: two
    # memories of one chat); integer sums are exact, ties are real and break by position
    tenths = {w: 10 - i for i, w in enumerate(kws)}
    cands = []
    for i, m in enumerate(messages):
        for j, raw in enumerate(sentences(m.get("text", ""))):
            s = clean(raw, names)
            if informative(s, names):
                central = sum(tenths.get(t, 0) for t in set(terms(s))) / 10
                user_side = 0.5 if str(m.get("speaker", "")).lower() == "assistant" else 1.0
                cands.append(((info_score(s, names) + 1.5 * central) * user_side, i, j, s))
    cands.sort(key=lambda c: (-c[0], c[1], c[2]))
    return sorted((i, j, s) for _, i, j, s in cands[:budget])


def narrative(messages: list[dict], speakers: Sequence[str], budget: int) -> str:
    """Dated third-person narrative of the messages' most central sentences."""
    names = list(dict.fromkeys(list(speakers) + [m.get("speaker", "") for m in messages]))
    out, last_day = [], None
    for i, _, s in _picked(messages, names, budget):
        m = messages[i]
        spk, date = m.get("speaker", ""), m.get("date", "")
        line = narrate(s, spk, other_speaker(spk, names), date)
        day = day_of(date)
        if day and day != last_day:
            line = f"On {day}, {line}"
            last_day = day
        out.append(line)
    return " ".join(out)


def _segments(messages: list[dict], max_episodes: int) -> list[list[int]]:
    """Split message indexes into <= max_episodes topical groups (connected by shared keywords)."""
    n = len(messages)
    if max_episodes <= 1 or n < 6:
        return [list(range(n))]
    kws = set(keywords([m.get("text", "") for m in messages], k=12))
    sets = [term_set(m.get("text", "")) & kws for m in messages]
    parent = list(range(n))

    def find(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    for a in range(n):
        if a + 1 < n and messages[a].get("date") == messages[a + 1].get("date"):
            parent[find(a + 1)] = find(a)  # an exchange partner belongs with its message
        for b in range(a + 1, n):
            if len(sets[a] & sets[b]) >= 2:
                parent[find(b)] = find(a)
    groups: dict[int, list[int]] = {}
    for i in range(n):
        groups.setdefault(find(i), []).append(i)
    big = sorted(groups.values(), key=lambda g: (-len(g), g[0]))
    keep = [g for g in big if len(g) >= 4][:max_episodes] or [big[0]]
    for g in big:
        if g not in keep:
            keep[0] = keep[0] + g
    return sorted((sorted(g) for g in keep), key=lambda g: g[0])


def title_of(messages: list[dict], speakers: Sequence[str]) -> str:
    """A short title: who, and the top keywords."""
    names = list(dict.fromkeys(m.get("speaker", "") for m in messages if m.get("speaker")))
    everyone = list(dict.fromkeys(list(speakers) + names))
    skip = {p.lower() for n in everyone for p in n.split()}
    texts = [" ".join(s for s in (clean(x, everyone) for x in sentences(strip_photo(str(m.get("text", "")))))
                      if informative(s, everyone)) for m in messages]
    texts = [t for t in texts if t] or [str(m.get("text", "")) for m in messages]
    kws = [k for k in keywords(texts, k=10) if k not in skip and k not in EMOTION and "'" not in k][:3]
    who = " & ".join(names[:2])
    return f"{who}: {', '.join(kws)}" if kws else (who or "episode")


def offline_episodes(inputs: dict[str, Any]) -> list[dict]:
    """Episodes {title, content, timestamp, turn_ids} for the `episode_summary` role."""
    messages = [m for m in inputs.get("messages", []) if str(m.get("text", "")).strip()]
    if not messages:
        return []
    speakers = list(dict.fromkeys(m.get("speaker", "") for m in messages))
    out = []
    for seg in _segments(messages, int(inputs.get("max_episodes", 3) or 1)):
        msgs = [messages[i] for i in seg]
        budget = max(2, min(10, round(len(msgs) * 0.6)))
        content = narrative(msgs, speakers, budget)
        if not content:  # nothing informative: keep the gist of the longest message
            m = max(msgs, key=lambda x: len(str(x.get("text", ""))))
            content = f"On {day_of(m.get('date', ''))}, {m.get('speaker', '')} said: {m.get('text', '')}".strip()
        out.append({"title": title_of(msgs, speakers), "content": content,
                    "timestamp": day_of(msgs[0].get("date", "")),
                    "turn_ids": [str(m.get("turn_id")) for m in msgs if m.get("turn_id") is not None]})
    return out


# --------------------------------------------------------------------- facts
_PREF = re.compile(r"\b(lov(e|es|ed)|lik(es|ed)|enjoy(s|ed)?|prefer(s|red)?|favou?rite|hate[sd]?|dislike|can't stand|"
                   r"allergic|avoid|vegan|vegetarian|passionate|(is|am|'m|are) into|fan of|dream|wish|goal|"
                   r"wants? to)\b", re.I)
_UPDATE = re.compile(r"\b(now|recently|just|no longer|anymore|started|starting|stopped|quit|switched|moved|finally|"
                     r"changed|became|new|decided|planning|plans|next|soon|upcoming|will)\b", re.I)
_RELATION = re.compile(r"\b(sister|brother|mom|mother|dad|father|parents?|husband|wife|partner|boyfriend|girlfriend|"
                       r"kids?|children|son|daughter|friends?|family|grandma|grandmother|grandpa|cousin|aunt|uncle|"
                       r"dog|cat|pet|pup|puppy|kitty|kitten|named|called|works? (at|for|as)|lives? in|is from|married|"
                       r"colleague|boss|neighbou?r|team|member of)\b", re.I)


def fact_type(text: str) -> str:
    """USER_CONSTRAINT_OR_PREFERENCE, TIME_ANCHORED_UPDATE, ENTITY_RELATION or USER_EVENT, by rules."""
    if _PREF.search(text):
        return "USER_CONSTRAINT_OR_PREFERENCE"
    if _UPDATE.search(text) or (RELATIVE.search(text) and re.search(r"\b(will|going to|plan)", text, re.I)):
        return "TIME_ANCHORED_UPDATE"
    if _RELATION.search(text):
        return "ENTITY_RELATION"
    return "USER_EVENT"


def parse_lines(content: str, speakers: Sequence[str], turn_ids: Sequence[str],
                date: str = "") -> list[tuple[list[str], str, str, str]]:
    """(turn ids, speaker, text, date) per line; "[D1:3] (8 May 2023) Ann: ..." cites turns; Summary skipped."""
    out = []
    known = set(speakers)
    for line in content.splitlines():
        if not line.strip() or re.match(r"^\s*(summary|episode( summary)?)\s*:", line, re.I):
            continue
        m = _TAGGED.match(line)
        if m:
            out.append(([t.strip() for t in m[1].split(",")], m[3].strip(), m[4], m[2] or date))
            continue
        m = _SPEAKER_LINE.match(line)
        if m and (m[1].strip() in known or not known):
            out.append((list(turn_ids), m[1].strip(), m[2], date))
        else:
            out.append((list(turn_ids), "", line, date))
    return out


def offline_facts(inputs: dict[str, Any], limit: int = 16) -> list[dict]:
    """New facts {text, type, turn_ids} for the `semantic_facts` role."""
    speakers = [str(s) for s in inputs.get("speakers", [])]
    seen = [str(f) for f in inputs.get("existing_facts", [])]
    cands: list[tuple[float, int, dict]] = []
    lines = parse_lines(str(inputs.get("content", "")), speakers, [str(t) for t in inputs.get("turn_ids", [])],
                        str(inputs.get("date", "")))
    for n, (tids, spk, text, date) in enumerate(lines):
        names = list(dict.fromkeys(speakers + ([spk] if spk else [])))
        for raw in sentences(strip_photo(text)):
            s = clean(raw, names)
            if not fact_worthy(s, names):
                continue
            if spk and spk.lower() != "assistant" and FIRST_PERSON.match(s):
                fact = rewrite(s, spk, other_speaker(spk, names), date)
            elif not spk and any(_ON_DATE.sub("", s).startswith(x) for x in speakers):
                fact = _ON_DATE.sub("", s).rstrip(".") + "."
            else:
                continue
            cands.append((info_score(s, names), n, {"text": fact, "type": fact_type(fact), "turn_ids": tids}))
        photo = photo_of(text)
        if spk and photo and len(content_terms(photo, names)) >= 2:
            fact = f"{spk} shared a photo of {photo}."
            cands.append((1.0, n, {"text": fact, "type": "USER_EVENT", "turn_ids": tids}))
    out: list[tuple[int, dict]] = []
    for _, n, f in sorted(cands, key=lambda c: (-c[0], c[1])):
        if any(overlap(f["text"], s) >= 0.6 for s in seen):
            continue
        seen.append(f["text"])
        out.append((n, f))
        if len(out) >= limit:
            break
    return [f for _, f in sorted(out, key=lambda x: x[0])]
