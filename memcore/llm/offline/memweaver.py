"""Offline MemWeaver roles: rule-based graph extraction and similarity thresholds for judgement.

Extraction: entities are the speaker, named speakers, capitalised spans and the objects of
simple subject-verb-object clauses (after a third-person rewrite); relations are those
clauses, "X named Y" and "X's Y" patterns. Time: relative expressions resolved against the
session date, absolute dates copied, in the paper's formats ("20 May, 2022" / "May, 2022" /
"2022"). Judgement roles (review, coherence, router) use similarity thresholds over numbers
the system passes in hidden `_`-prefixed inputs (never shown to a real model).
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher
from typing import Any

from memcore.llm.offline.text import (
    MONTHS,
    RELATIVE,
    STOPWORDS,
    keywords,
    normalize_time,
    parse_date,
    sentences,
    term_set,
    terms,
    third_person,
)

COHERENCE_MIN = 0.55  # mean cosine of members to their centroid for a coherent group
ROUTER_MIN = 0.65  # cosine to a shortlisted cluster for the offline router to accept it
REVIEW_SUPPORT_MIN = 0.5  # share of a relation's endpoint words found in its own turn
REVIEW_DUP_MIN = 0.85  # relation-phrase similarity of two triples with the same endpoints

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
_ABS_DAY = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+(" + "|".join(MONTHS) + r"),?\s+(\d{4})\b", re.I)
_ABS_DAY_US = re.compile(r"\b(" + "|".join(MONTHS) + r")\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})\b", re.I)
_ABS_MONTH = re.compile(r"\b(" + "|".join(MONTHS) + r"),?\s+(\d{4})\b", re.I)
_ABS_YEAR = re.compile(r"\b(?:in|since|of|during)\s+((?:19|20)\d{2})\b", re.I)
_DIGITS_AGO = re.compile(r"\b(\d+)\s+(day|week|month|year)s?\s+ago\b", re.I)


# ----------------------------------------------------------------- time formats
def to_paper_format(value: str) -> str:
    """Rewrite normalize_time output ("7 May 2023", "June 2023") in the paper's formats."""
    m = re.fullmatch(r"(\d{1,2}) ([A-Z][a-z]+) (\d{4})", value)
    if m:
        return f"{m.group(1)} {m.group(2)}, {m.group(3)}"
    m = re.fullmatch(r"([A-Z][a-z]+) (\d{4})", value)
    if m:
        return f"{m.group(1)}, {m.group(2)}"
    m = re.fullmatch(r"the (week|weekend) (before|of|after) (\d{1,2}) ([A-Z][a-z]+) (\d{4})", value)
    if m:  # week granularity has no paper format: keep LoCoMo's anchored phrase
        return f"the {m.group(1)} {m.group(2)} {m.group(3)} {m.group(4)}, {m.group(5)}"
    return value if re.fullmatch(r"\d{4}", value) else ""


def time_expressions(text: str, anchor: str) -> list[tuple[int, str]]:
    """(position, absolute time in the paper's format) for every time expression in a text."""
    out: list[tuple[int, str]] = []
    for m in RELATIVE.finditer(text):
        val = to_paper_format(normalize_time(m.group(0), anchor))
        if val:
            out.append((m.start(), val))
    a = parse_date(anchor) if anchor else None
    for m in _DIGITS_AGO.finditer(text):
        if a is not None and all(pos != m.start() for pos, _ in out):
            words = {"day": "days", "week": "weeks", "month": "months", "year": "years"}
            val = normalize_time(f"{_num_word(int(m.group(1)))} {words[m.group(2).lower()]} ago", a)
            if val:
                out.append((m.start(), to_paper_format(val) or val))
    taken: list[tuple[int, int]] = []
    for rx, kind in ((_ABS_DAY, "d"), (_ABS_DAY_US, "u"), (_ABS_MONTH, "m"), (_ABS_YEAR, "y")):
        for m in rx.finditer(text):
            if any(s <= m.start() < e for s, e in taken):
                continue
            taken.append((m.start(), m.end()))
            g = m.groups()
            if kind == "d":
                val = f"{int(g[0])} {g[1].capitalize()}, {g[2]}"
            elif kind == "u":
                val = f"{int(g[1])} {g[0].capitalize()}, {g[2]}"
            elif kind == "m":
                val = f"{g[0].capitalize()}, {g[1]}"
            else:
                val = g[0]
            out.append((m.start(), val))
    return sorted(out)


def _num_word(n: int) -> str:
    return {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}.get(n, "a few")


# ------------------------------------------------------------ clause extraction
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
        alt = "|".join(re.escape(n) for n in names)
        cond = _COND.search(sent)
        condition = f"{cond.group(1).lower()} {cond.group(2).strip()}" if cond else ""
        rx = re.compile(rf"\b(?P<subj>{alt})\s+(?P<aux>(?:(?:{_AUX})\s+){{0,3}})(?P<verb>[a-z][a-z\-]+)"
                        rf"(?:\s+(?P<to>to\s+[a-z][a-z\-]+))?(?:\s+(?P<prep>{_PREPS}))?\s+(?P<obj>[^.,!?;:()]+)")
        for m in rx.finditer(s3):
            verb = m.group("verb")
            if verb in _NOT_VERB:
                continue
            rel = " ".join(x for x in [m.group("aux").strip(), verb, m.group("to") or "", m.group("prep") or ""] if x)
            obj, rest = _clean_object(m.group("obj"))
            if not _good_object(obj, m.group("subj")):
                continue
            out.append({"source": m.group("subj"), "relation": rel.lower(), "target": obj,
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
        for m in re.finditer(rf"\b({alt})'s ([a-z][a-z\-]+(?: [a-z][a-z\-]+){{0,2}})", s3):
            obj, _ = _clean_object(m.group(2))
            if _good_object(obj, m.group(1)) and obj.split()[0] not in STOPWORDS and obj not in _ADJ_ONLY:
                out.append({"source": m.group(1), "relation": "has", "target": obj, "condition": "",
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


def offline_time(inputs: dict[str, Any]) -> dict[str, str]:
    """The time expression of the relation's own sentence, else the turn's only one, else ""."""
    text, anchor = str(inputs.get("text", "")), str(inputs.get("date", ""))
    clause = str(inputs.get("_sentence", ""))
    if clause:
        own = time_expressions(clause, anchor)
        if own:
            return {"absolute_time": own[0][1]}
    found = list(dict.fromkeys(v for _, v in time_expressions(text, anchor)))
    return {"absolute_time": found[0] if len(found) == 1 else ""}


def offline_review(inputs: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Deny weakly supported or near-duplicate relations; keep the time of a denied duplicate."""
    lines: dict[str, str] = {}
    for line in inputs.get("dialogue", []) or []:
        tid, _, rest = str(line).partition(" | ")
        lines[tid.strip()] = rest
    deny: list[dict[str, Any]] = []
    update: list[dict[str, Any]] = []
    kept: list[dict[str, Any]] = []
    for r in inputs.get("relations", []) or []:
        passage = term_set(lines.get(str(r.get("turn", "")), ""))
        ends = term_set(f"{r.get('source', '')} {r.get('target', '')}")
        support = len(ends & passage) / len(ends) if ends else 0.0
        if passage and support < REVIEW_SUPPORT_MIN:
            deny.append({"relation_id": r["id"], "reason": f"offline: lexical support {support:.2f} < "
                         f"{REVIEW_SUPPORT_MIN} in its turn"})
            continue
        dup = next((k for k in kept if k["source"].lower() == str(r.get("source", "")).lower()
                    and k["target"].lower() == str(r.get("target", "")).lower()
                    and SequenceMatcher(None, k["relation"], str(r.get("relation", ""))).ratio() >= REVIEW_DUP_MIN
                    and (not k.get("time") or not r.get("time") or k.get("time") == r.get("time"))), None)
        if dup is not None:
            sim = SequenceMatcher(None, dup["relation"], str(r.get("relation", ""))).ratio()
            deny.append({"relation_id": r["id"], "reason": f"offline: near-duplicate of {dup['id']} "
                         f"(relation similarity {sim:.2f} >= {REVIEW_DUP_MIN})"})
            if r.get("time") and not dup.get("time"):
                dup["time"] = r["time"]
                update.append({"relation_id": dup["id"], "time": r["time"],
                               "reason": f"offline: time taken from denied duplicate {r['id']}"})
            continue
        kept.append(dict(r))
    return {"add": [], "update": update, "deny": deny}


def offline_coherence(inputs: dict[str, Any]) -> dict[str, Any]:
    """Coherent when the members' mean cosine to their centroid reaches COHERENCE_MIN."""
    cohesion = float(inputs.get("_cohesion", 0.0))
    label = ", ".join(keywords([str(t) for t in inputs.get("turns", []) or []], k=3))
    ok = cohesion >= COHERENCE_MIN
    return {"is_coherent": ok, "label": label,
            "reason": f"offline: cohesion {cohesion:.2f} {'>=' if ok else '<'} {COHERENCE_MIN}"}


def offline_router(inputs: dict[str, Any]) -> dict[str, str]:
    """The most similar shortlisted cluster if its cosine reaches ROUTER_MIN, else "none"."""
    sims = {str(k): float(v) for k, v in (inputs.get("_sims") or {}).items()}
    if not sims:
        return {"cluster_id": "none", "reason": "offline: no candidate similarities"}
    best = max(sorted(sims), key=lambda k: sims[k])
    if sims[best] >= ROUTER_MIN:
        return {"cluster_id": best, "reason": f"offline: cosine {sims[best]:.2f} >= {ROUTER_MIN}"}
    return {"cluster_id": "none", "reason": f"offline: best cosine {sims[best]:.2f} < {ROUTER_MIN}"}


_SMALL_TALK = re.compile(r"\b(thanks|thank you|congrats|congratulations|good luck|take care|bye|see you|"
                         r"sounds (great|good|fun)|that's (great|awesome|amazing|cool))\b", re.I)
_PREF = re.compile(r"\b(love|loves|like|likes|enjoy|enjoys|favorite|favourite|prefer|prefers|passion|into)\b", re.I)
_STRAT = re.compile(r"\b(helps?|try to|tries to|the key|trick|way to|remind|keeps? (me|him|her) going|"
                    r"cope|deal with|advice)\b", re.I)


def offline_experiences(inputs: dict[str, Any]) -> dict[str, Any]:
    """Extractive induction: central first-person sentences, third person, <= 120 chars, >= 2 sources."""
    units = [u for u in inputs.get("_units", []) or [] if isinstance(u, dict)]
    cands: list[tuple[float, int, str, list[int]]] = []
    unit_terms = [term_set(str(u.get("text", ""))) for u in units]
    for i, u in enumerate(units):
        speaker = str(u.get("speaker", ""))
        for sent in sentences(str(u.get("text", ""))):
            if sent.endswith("?") or _SMALL_TALK.search(sent) or len(terms(sent)) < 3:
                continue
            if not re.search(r"\b(I|I'm|I've|my|My|we|We)\b", sent):
                continue
            st = term_set(sent)
            support = [j for j, ut in enumerate(unit_terms) if j != i and len(st & ut) >= 2]
            if not support:
                continue
            content = third_person(sent, speaker).strip()
            if len(content) > 120:
                content = content[:117].rsplit(" ", 1)[0] + "..."
            cands.append((float(len(support)) + 0.01 * len(st), i, content, sorted({i, *support})))
    cands.sort(key=lambda c: (-c[0], c[1], c[2]))
    out, used = [], set()
    for _, i, content, src in cands:
        if i in used or len(out) >= 3:
            continue
        used.add(i)
        kind = "preference" if _PREF.search(content) else "strategy" if _STRAT.search(content) else "fact"
        out.append({"type": kind, "content": content, "source_indices": src[:6]})
    texts = [str(u.get("text", "")) for u in units]
    return {"center_text": ", ".join(keywords(texts, k=4)), "experiences": out}
