"""Offline MemWeaver graph extraction (`mw_entities`, `mw_relations`): rule-based entities and clauses.

Entities are the speaker, named speakers, capitalised spans and the objects of simple
subject-verb-object clauses (after a third-person rewrite); relations are those clauses,
"X named Y" and "X's Y" patterns.
"""

from __future__ import annotations

import re
from typing import Any

from memcore.text.dates import MONTHS, RELATIVE
from memcore.text.sentences import sentences, third_person
from memcore.text.terms import STOPWORDS, terms

_INTERJ = frozenset("""congrats congratulations wow thanks thank hey haha hahaha yeah awesome great cool nice
sounds glad sorry good omg lol absolutely definitely totally exactly sure love hope yes no well anyway btw
happy amazing hmm aw aww agreed true right luckily unfortunately honestly actually also plus speaking last next
welcome bye see take keep let let's wishing wish best dear bro man dude oops whoa yay ugh gosh hi hello wow
totally indeed really maybe perhaps sometimes exciting interesting fantastic wonderful brilliant lovely sweet
thats it's that's i'm i've you're you've we're what's how's super incredible now since here's fri lately later
tonight still long just even""".split())
_ADJ_ONLY = frozenset("best fave favorite favourite own new old last first next little big whole only".split())
_CONTRACTION = re.compile(r"'(?:d|ll|re|ve|m|t)$|n't$", re.I)
_WEEKDAYS = frozenset("monday tuesday wednesday thursday friday saturday sunday".split())
_PRONOUNS = frozenset("""anything something nothing everyone someone anyone everybody somebody nobody
it that this them you him her me something anything everything one ones those these
there here myself yourself himself herself themselves us lot bit""".split())
_AUX = (r"is|was|are|were|am|has|have|had|will|would|can|could|did|does|do|just|also|really|recently|finally|"
        r"been|never|always|still|not|actually|even|already|usually|often|totally|definitely|currently|"
        r"'s|'ve|'ll|'d|'re")
_PREPS = r"to|for|at|in|on|with|about|from|into|up|out|of|by|as|through|around|over|after"
_BOUNDARY = frozenset("""and but because which who that when while so since if as or then where though although
until unless whereas like than with for at in on from into about to by after before during over through around
is was are were can could will would should might must has have had do does did go goes went get gets got
- -- — i""".split())
_NOT_VERB = _BOUNDARY - frozenset("is was are were can could will would should might must has have had do does did go "
                                  "goes went get gets got".split())
_DETS = re.compile(r"^(?:(?:a|an|the|my|his|her|their|our|your|its|some|this|that|these|those|every|any|"
                   r"all|such|another|other|[A-Z][\w\-]*'s)\s+)+")
_TRAIL = re.compile(r"\s+(?:today|yesterday|tonight|recently|lately|again|now|too|already|together|soon|"
                    r"as well|so much|very much|a lot|last \w+|this \w+|next \w+|every \w+)$", re.I)
_COND = re.compile(r"\b(if|unless|whenever|as long as|when)\b\s+([^.,!?;]{3,60})", re.I)


# what follows a subject's name in a clause ("X [aux] verb [to verb] [prep] object") and in "X's object"
_CLAUSE = re.compile(rf"\s+(?P<aux>(?:(?:{_AUX})\s+){{0,3}})(?P<verb>[a-z][a-z\-]+)"
                     rf"(?:\s+(?P<to>to\s+[a-z][a-z\-]+))?(?:\s+(?P<prep>{_PREPS}))?\s+(?P<obj>[^.,!?;:()]+)")
_POSSESSIVE = re.compile(r"'s ([a-z][a-z\-]+(?: [a-z][a-z\-]+){0,2})")
_EDGE = re.compile(r"\b")


def name_then(tail: re.Pattern[str], text: str, names: list[str]) -> list[tuple[str, re.Match[str]]]:
    """The matches `re.finditer(r"\\b(" + "|".join(map(re.escape, names)) + ")" + tail.pattern, text)` finds, as
    (name, the tail's match), without compiling a pattern per list of names: a sentence's names differ from the
    next one's, so that compiled ~one pattern per sentence (and evicted the re module's cache of the static
    ones): 30-40% of MemWeaver's offline build on BEAM chats. Same order and overlap rules: the leftmost
    position first, the names in the given order there, the next match after the end of this one."""
    starts: set[int] = set()
    for n in names:
        i = text.find(n) if n else -1
        while i >= 0:
            starts.add(i)
            i = text.find(n, i + 1)
    out: list[tuple[str, re.Match[str]]] = []
    end = 0
    for p in sorted(starts):
        if p < end or not _EDGE.match(text, p):
            continue
        for n in names:
            if n and text.startswith(n, p):
                m = tail.match(text, p + len(n))
                if m:
                    out.append((n, m))
                    end = m.end()
                    break
    return out


def _clean_object(raw: str) -> tuple[str, str]:
    """(object phrase, rest after it) from the words following a verb."""
    words = raw.strip().split()
    obj: list[str] = []
    rest: list[str] = []
    for i, w in enumerate(words):
        if obj and (w.lower() in _BOUNDARY or (w.endswith("ed") and len(w) > 4 and w.islower())):
            rest = words[i:]
            break
        obj.append(w)
        if len(obj) >= 6:
            rest = words[i + 1:]
            break
    phrase = _DETS.sub("", " ".join(obj)).strip(" '\"-")
    phrase = _TRAIL.sub("", phrase).strip()
    phrase = " ".join(phrase.split()[:5])
    return phrase, " ".join(rest)


def _good_object(phrase: str, subj: str) -> bool:
    if not phrase or phrase.lower() in _PRONOUNS or phrase.lower() == subj.lower():
        return False
    if RELATIVE.fullmatch(phrase) or phrase.lower() in MONTHS:
        return False
    return bool([w for w in terms(phrase) if not w.isdigit()])


def clauses(text: str, speaker: str, speakers: list[str]) -> list[dict[str, str]]:
    """Subject-verb-object clauses of a turn: [{source, relation, target, condition, sentence}]."""
    out: list[dict[str, str]] = []
    for sent in sentences(text):
        s3 = third_person(sent, speaker)
        s3 = re.sub(r"\b[Ww]e\b", speaker, re.sub(r"\b[Oo]ur\b", f"{speaker}'s", s3))
        names = sorted({n for n in [speaker, *speakers, *named_spans(s3, speakers)] if n}, key=len, reverse=True)
        if not names:
            continue
        cond = _COND.search(sent)
        condition = f"{cond.group(1).lower()} {cond.group(2).strip()}" if cond else ""
        for subj, m in name_then(_CLAUSE, s3, names):
            verb = m.group("verb")
            if verb in _NOT_VERB:
                continue
            rel = " ".join(x for x in [m.group("aux").strip(), verb, m.group("to") or "", m.group("prep") or ""] if x)
            obj, rest = _clean_object(m.group("obj"))
            if not _good_object(obj, subj):
                continue
            out.append({"source": subj, "relation": rel.lower(), "target": obj,
                        "condition": condition, "sentence": sent})
            pm = re.match(r"(?P<prep>at|in|for|with|from|on)\s+(?P<obj>[^.,!?;:()]+)", rest)
            if pm:
                obj2, _ = _clean_object(pm.group("obj"))
                if _good_object(obj2, obj):
                    out.append({"source": obj, "relation": pm.group("prep"), "target": obj2,
                                "condition": condition, "sentence": sent})
        for m in re.finditer(r"\b([a-z][a-z\-]+) (named|called) ([A-Z][\w\-]+(?: [A-Z][\w\-]+)*)", s3):
            if m.group(1) not in STOPWORDS:
                out.append({"source": m.group(1), "relation": m.group(2), "target": m.group(3),
                            "condition": "", "sentence": sent})
        for subj, m in name_then(_POSSESSIVE, s3, names):
            obj, _ = _clean_object(m.group(1))
            if _good_object(obj, subj) and obj.split()[0] not in STOPWORDS and obj not in _ADJ_ONLY:
                out.append({"source": subj, "relation": "has", "target": obj, "condition": "",
                            "sentence": sent})
    for m in re.finditer(r"\[shares a photo of ([^\]]+)\]", text):
        obj, _ = _clean_object(m.group(1))
        if _good_object(obj, speaker):
            out.append({"source": speaker, "relation": "shared a photo of", "target": obj, "condition": "",
                        "sentence": m.group(0)})
    seen: set[tuple[str, str, str]] = set()
    uniq = []
    for c in out:
        key = (c["source"].lower(), c["relation"], c["target"].lower())
        if key not in seen:
            seen.add(key)
            uniq.append(c)
    return uniq


def named_spans(text: str, speakers: list[str]) -> list[str]:
    """Capitalised spans that look like names (leading interjections and contractions dropped)."""
    out = []
    for m in re.finditer(r"\b([A-Z][a-zA-Z'\-]*(?:\s+(?:of|de|the|van|von)?\s*[A-Z][a-zA-Z'\-]*)*)", text):
        words = m.group(1).split()
        while words and (words[0].lower() in _INTERJ or words[0].lower() in STOPWORDS or words[0] == "I"
                         or _CONTRACTION.search(words[0])):
            words = words[1:]
        if not words or any(_CONTRACTION.search(w) for w in words):
            continue
        if "I" in words:
            continue
        span = " ".join(words)
        span = span[:-2] if span.endswith("'s") else span
        initial = m.start() == 0 or text[:m.start()].rstrip()[-1:] in ".!?"
        if initial and len(words) == 1 and re.search(r"(ing|ed|ly|s)$", span.lower()) and span not in speakers:
            continue  # "Making ...", "Looks ...": a capitalised verb or adverb, not a name
        low = span.lower()
        if low in MONTHS or low in _WEEKDAYS or low in _PRONOUNS or RELATIVE.fullmatch(span) or len(span) < 2:
            continue
        out.append(span)
    return list(dict.fromkeys(out))


# ------------------------------------------------------------------------ roles
def offline_entities(inputs: dict[str, Any]) -> dict[str, list[str]]:
    """Entities of one turn: speaker, mentioned speakers, named spans, clause objects (<= 10)."""
    text, speaker = str(inputs.get("text", "")), str(inputs.get("speaker", ""))
    speakers = [str(s) for s in inputs.get("speakers", []) or []]
    ents = [speaker] if speaker else []
    ents += [s for s in speakers if s and s != speaker and re.search(rf"\b{re.escape(s)}\b", text)]
    ents += named_spans(text, speakers)
    for c in clauses(text, speaker, speakers):
        ents += [c["source"], c["target"]]
    seen: dict[str, str] = {}
    for e in ents:
        e = e.strip()
        if e and e.lower() not in seen and not RELATIVE.fullmatch(e) and e.lower() not in STOPWORDS:
            seen[e.lower()] = e
    return {"entities": list(seen.values())[:10]}


def offline_relations(inputs: dict[str, Any]) -> dict[str, list[dict[str, str]]]:
    """Clauses whose subject and object are both in the given entity list."""
    text, speaker = str(inputs.get("text", "")), str(inputs.get("speaker", ""))
    speakers = [str(s) for s in inputs.get("speakers", []) or []]
    allowed = {str(e).lower(): str(e) for e in inputs.get("entities", []) or []}
    rels = []
    for c in clauses(text, speaker, speakers):
        s, t = allowed.get(c["source"].lower()), allowed.get(c["target"].lower())
        if s and t and s != t:
            rels.append({"source": s, "target": t, "relation": c["relation"], "condition": c["condition"]})
    return {"relations": rels}
