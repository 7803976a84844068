"""Offline memory writing: episode summaries and semantic facts, extractive and rule-based.

Episodes are third-person rewrites of the most central informative sentences, dated and
with relative times resolved ("On 8 May 2023, Caroline went to a support group yesterday
(7 May 2023)."). Facts are the speakers' first-person declaratives rewritten with their
names. Greetings, thanks, questions and content-free emotions are skipped.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from memcore.llm.offline.text import (
    MONTHS,
    RELATIVE,
    STOPWORDS,
    capitalised_spans,
    fmt_day,
    keywords,
    overlap,
    parse_date,
    resolve_dates,
    sentences,
    term_set,
    terms,
)

_LEAD = re.compile(r"^(?:(?:oh|wow|yeah|yes|yep|haha+|ha|hah|lol|well|so|hey|hi|aw+|omg|ok|okay|thanks|thank you|"
                   r"awesome|cool|great|nice|totally|absolutely|definitely|sure|true|hmm+|um+|ah+|ooh|whoa|"
                   r"honestly|actually|anyway|also|and|but)\b[\s,!.\-]*)+", re.I)
_GREETING = re.compile(r"^(hi|hey|hello|hiya|good (morning|afternoon|evening|night)|(it'?s |it was )?(so |really )?"
                       r"(good|great|nice|lovely) (to|talking|chatting|catching)|long time|bye|goodbye|see (you|ya)|"
                       r"talk (to you )?(soon|later)|take care|catch you|have a (good|great|nice|lovely))\b", re.I)
_THANKS = re.compile(r"\b(thanks|thank you|thx|appreciate (it|that|you))\b", re.I)
EMOTION = frozenset("""wow cool awesome great amazing love loved loving lovely glad happy sad sorry proud excited exciting
fun nice good sounds sound super totally absolutely definitely incredible wonderful fantastic beautiful cute sweet
inspiring powerful hear heard hope thrilled feel feeling felt stuff tough hard awful terrible bad best better
congrats congratulations glad blast keep keeping cheers luck wish hug hugs care wonderful gorgeous stunning
interesting cool neat rad kind thoughtful supportive appreciate awesome pretty special means mean
something anything everything always never totally true agree happen happens happened yay woohoo couldn't can't
don't won't wouldn't didn't done without lucky thankful grateful wanna gonna kinda really lot glad""".split())
_YOU = [(r"\byou are\b", "{o} is"), (r"\byou were\b", "{o} was"), (r"\byou're\b", "{o} is"),
        (r"\byou've\b", "{o} has"), (r"\byou'll\b", "{o} will"), (r"\byour\b", "{o}'s"), (r"\byourself\b", "{o}"),
        (r"(?<!thank )(?<!see )(?<!love )\byou\b(?! know| guys| all)", "{o}")]
_WE = [(r"\b[Ww]e're\b", "{s} and others are"), (r"\b[Ww]e've\b", "{s} and others have"),
       (r"\b[Ww]e'll\b", "{s} and others will"), (r"\b[Ww]e'd\b", "{s} and others would"),
       (r"\b[Ww]e\b", "{s} and others"), (r"\b[Oo]ur\b", "{s}'s"), (r"\bus\b", "{s} and others")]
_VERBS = frozenset("""paint play write cook volunteer teach study believe mean miss guess remember prefer adore
hate swim dance sing draw collect own use keep spend watch visit want need hope plan love like enjoy think feel
know see get make take try run work live go do have bake hike ride drive travel attend practice support help
cherish value appreciate admire wonder agree understand recommend suggest find say tell ask look bring call give
hang stay walk participate celebrate listen care own teach learn wish""".split())
_NEG = {"don't": "doesn't", "haven't": "hasn't", "aren't": "isn't", "weren't": "wasn't"}
_FIRST = re.compile(r"^(I|I'm|I've|I'd|I'll|My|We|We're|We've|Our|Me and|Myself)\b")
_TAGGED = re.compile(r"^\s*\[([^\]]+)\]\s*(?:\(([^)]*)\)\s*)?([^:\n]{1,40}):\s*(.*)$")
_SPEAKER_LINE = re.compile(r"^\s*([^:\n\[\]]{1,40}):\s*(.+)$")
_PHOTO = re.compile(r"\[shares a photo of (.+?)\]")
_ON_DATE = re.compile(r"^On [^,]{3,30}, ")


# ------------------------------------------------------------------ sentences
def clean(sentence: str, names: Sequence[str] = ()) -> str:
    """A sentence without leading interjections and addressee names ("Wow, Mel! I ..." -> "I ...")."""
    s = sentence.strip()
    for _ in range(3):
        s2 = _LEAD.sub("", s).strip()
        for n in names:
            s2 = re.sub(rf"^{re.escape(n.split()[0])}\b[\s,!.]*", "", s2).strip()
        if s2 == s:
            break
        s = s2
    return s[:1].upper() + s[1:] if s else s


def informative(sentence: str, names: Sequence[str] = ()) -> bool:
    """False for greetings, thanks, questions, fragments and content-free emotions."""
    s = sentence.strip()
    if not s or s.endswith("?") or _GREETING.match(s):
        return False
    if _THANKS.search(s) and len(content_terms(s, names)) < 3:
        return False
    return len(content_terms(s, names)) >= 2


def fact_worthy(sentence: str, names: Sequence[str] = ()) -> bool:
    """An informative sentence that says something concrete (3+ content words, or a name/number)."""
    concrete = len(set(content_terms(sentence, names))) >= 3 or re.search(r"\d", sentence)
    return informative(sentence, names) and bool(concrete or entities(sentence, names))


def entities(sentence: str, names: Sequence[str] = ()) -> list[str]:
    """Capitalised spans other than the speakers' names and "I'm", "I've", ..."""
    return [e for e in capitalised_spans(sentence, skip=names) if not re.match(r"I'|I\b", e)]


def content_terms(text: str, names: Sequence[str] = ()) -> list[str]:
    """Content words that are neither emotion/filler words nor the speakers' names."""
    skip = {p.lower() for n in names for p in n.split()}
    return [t for t in terms(text) if t not in EMOTION and t not in skip and len(t) > 1 and not _filler_contraction(t)]


def _filler_contraction(term: str) -> bool:
    """"that's", "i'm", "don't": contractions of function words."""
    head = term.split("'")[0]
    return "'" in term and (head in STOPWORDS or term.endswith("n't") or head in ("i", "you", "we", "they"))


def info_score(sentence: str, names: Sequence[str] = ()) -> float:
    """How much a sentence says: content words, named entities, numbers, dates, first person."""
    ct = content_terms(sentence, names)
    ents = entities(sentence, names)
    score = min(len(set(ct)), 8) + 2.0 * len(ents) + (1.0 if re.search(r"\d", sentence) else 0.0)
    score += 1.0 if RELATIVE.search(sentence) or has_date(sentence) else 0.0
    return score + (1.0 if _FIRST.match(sentence) else 0.0)


def has_date(text: str) -> bool:
    """Whether a text names a month or a year."""
    low = text.lower()
    return bool(re.search(r"\b(19|20)\d\d\b", low)) or any(re.search(rf"\b{m}\b", low) for m in MONTHS[:4] + MONTHS[5:])


# ------------------------------------------------------------------ rewriting
# the speaker as subject is marked with \x00 so that only its verb is conjugated
_SUBJ = [(r"\bI am\b", "\x00 is"), (r"\bI'm\b", "\x00 is"), (r"\bI was\b", "\x00 was"), (r"\bI have\b", "\x00 has"),
         (r"\bI've\b", "\x00 has"), (r"\bI'll\b", "\x00 will"), (r"\bI'd\b", "\x00 would"), (r"\bI\b", "\x00")]
_ADV = r"(?:(?:really|also|still|just|totally|usually|often|always|never|sometimes|actually|definitely) )?"
_GONNA = re.compile(r"^(going to|planning|thinking|hoping|trying|looking forward|working on|about to)\b", re.I)
_PAST = re.compile(r"^(lost|got|went|had|made|took|saw|just|finally|started|finished|bought|found|met|visited|tried|"
                   r"learned|been|spent|joined|won|signed|moved)\b", re.I)


def rewrite(sentence: str, speaker: str, other: str = "", date: str = "") -> str:
    """Third person with names, relative dates resolved against `date` (in parentheses)."""
    s = re.sub(r"\bwanna\b", "want to", re.sub(r"\bgonna\b", "going to", sentence.strip()))
    s = _PAST.sub(lambda m: "I " + m[1].lower(), _GONNA.sub(lambda m: "I'm " + m[1].lower(), s))
    for pat, rep in _SUBJ:
        s = re.sub(pat, rep, s)
    s = re.sub(r"\x00 (don't|haven't|aren't|weren't)\b", lambda m: f"\x00 {_NEG[m[1]]}", s)
    s = re.sub(rf"\x00 ({_ADV})([a-z]+)\b", lambda m: f"\x00 {m[1]}{_s3(m[2]) if m[2] in _VERBS else m[2]}", s)
    s = s.replace("\x00", speaker)
    for pat, rep in [(r"\bmyself\b", "{s}"), (r"\b[Mm]y\b", "{s}'s"), (r"\bme\b", "{s}"), (r"\bmine\b", "{s}'s"),
                     *_WE]:
        s = re.sub(pat, rep.format(s=speaker), s)
    if other:
        for pat, rep in _YOU:
            s = re.sub(pat, rep.format(o=other), s, flags=re.I)
    s = resolve_dates(s, date) if date else s
    s = s.strip()
    return s if s.endswith((".", "!", "?", ")")) else s + "."


def _s3(verb: str) -> str:
    if verb in ("have", "do", "go") or verb.endswith(("ch", "sh", "ss", "x")):
        return {"have": "has", "do": "does", "go": "goes"}.get(verb, verb + "es")
    return verb[:-1] + "ies" if verb.endswith("y") and verb[-2:-1] not in "aeiou" else verb + "s"


def narrate(sentence: str, speaker: str, other: str, date: str) -> str:
    """One episode sentence: "Caroline went ..." or "Caroline said the ..."."""
    photo = _photo(sentence)
    if photo and not _strip_photo(sentence):
        return f"{speaker} shared a photo of {photo}."
    s = re.sub(r"\s*\[shares a photo of (.+?)\]", r" (shared a photo of \1)", sentence)
    s = rewrite(s, speaker, other, date)
    if s.startswith(speaker) or s.startswith(f"{speaker}'s"):
        return s
    return f"{speaker} said {s[:1].lower() + s[1:] if not s[:2].isupper() else s}"


def day_of(date: str) -> str:
    """"8 May 2023" for any date string memcore knows, else the string itself."""
    m = re.match(r"^(\d{4})/(\d{1,2})/(\d{1,2})\b", date)  # LongMemEval: "2023/05/20 (Sat) 02:21"
    d = parse_date(f"{m[1]}-{int(m[2]):02d}-{int(m[3]):02d}" if m else date) if date else None
    return fmt_day(d) if d else date


def other_speaker(speaker: str, speakers: Sequence[str]) -> str:
    """The listener in a two-person conversation ("" otherwise)."""
    rest = [s for s in dict.fromkeys(speakers) if s != speaker]
    return rest[0] if len(rest) == 1 else ""


# ------------------------------------------------------------------ episodes
def _picked(messages: list[dict], names: list[str], budget: int) -> list[tuple[int, int, str]]:
    """(message index, sentence index, sentence) of the most central informative sentences."""
    kws = keywords([m.get("text", "") for m in messages], k=8)
    weight = {w: 1.0 - i / 10 for i, w in enumerate(kws)}
    cands = []
    for i, m in enumerate(messages):
        for j, raw in enumerate(sentences(m.get("text", ""))):
            s = clean(raw, names)
            if informative(s, names):
                central = sum(weight.get(t, 0.0) for t in set(terms(s)))
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
    texts = [" ".join(s for s in (clean(x, everyone) for x in sentences(_strip_photo(str(m.get("text", "")))))
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
        for raw in sentences(_strip_photo(text)):
            s = clean(raw, names)
            if not fact_worthy(s, names):
                continue
            if spk and spk.lower() != "assistant" and _FIRST.match(s):
                fact = rewrite(s, spk, other_speaker(spk, names), date)
            elif not spk and any(_ON_DATE.sub("", s).startswith(x) for x in speakers):
                fact = _ON_DATE.sub("", s).rstrip(".") + "."
            else:
                continue
            cands.append((info_score(s, names), n, {"text": fact, "type": fact_type(fact), "turn_ids": tids}))
        photo = _photo(text)
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


def _photo(text: str) -> str:
    m = _PHOTO.search(text)
    return m.group(1).strip() if m else ""


def _strip_photo(text: str) -> str:
    return _PHOTO.sub("", text).strip()
