"""Offline MemCoT roles: term-overlap evidence picking and a rule-based judge.

Each returns the fields of its role's output as a dict (memcore.systems.memcot.roles builds the model).

- useful ids: items sharing at least max(1, round(THETA x |query terms|)) stemmed content words
  with the root question or a current sub-query (speaker names alone never count);
- zoom-out also keeps the reply right after a useful turn that asks a question;
- can_answer: picked evidence covers >= COVER of the question's terms and holds the expected
  answer type (date: every turn is dated; number: a digit or number word; person / place: a
  capitalised name not in the question);
- new queries: Break splits the last query on "and" / commas; Delete drops the terms the
  short-term memory already matched; when neither applies (nothing matched, no connective),
  Break splits the question's content words into two halves. A query equal (as a term set)
  to an issued or failed one is never proposed.
"""

from __future__ import annotations

import re
from typing import Any

from memcore.text.sentences import answer_type, capitalised_spans
from memcore.text.terms import stem, terms

THETA = 1 / 3
COVER = 0.5
FRAMING = frozenset("likely kind type sort".split())  # question framing, not content
NUMBER_WORDS = frozenset("two three four five six seven eight nine ten once twice several dozen hundred".split())


def stem_set(text: str, drop: frozenset[str] = frozenset()) -> set[str]:
    """Stemmed content words of a text (possessive 's removed), without the words in `drop` (lower-case)
    and the question-framing words; stems from the shared offline `stem`."""
    words = (w.removesuffix("'s").removesuffix("\u2019s") for w in terms(text))
    return {stem(w) for w in words if len(w) > 1 and w not in drop and w not in FRAMING}


def _names(inputs: dict[str, Any]) -> frozenset[str]:
    return frozenset(s.lower() for s in inputs.get("speakers", []) or [])


def _query_sets(inputs: dict[str, Any]) -> list[set[str]]:
    drop = _names(inputs)
    qs = [inputs.get("query", "")] + list(inputs.get("queries", []) or [])
    return [s for s in (stem_set(q, drop) for q in qs) if s]


def is_useful(qsets: list[set[str]], text: str) -> bool:
    """Whether a text shares enough content words with any of the query term sets."""
    ts = stem_set(text)
    return any(len(q & ts) >= max(1, round(THETA * len(q))) for q in qsets)


def _items(inputs: dict[str, Any], key: str = "items") -> list[dict[str, Any]]:
    return [i for i in inputs.get(key, []) or [] if isinstance(i, dict)]


def offline_zoom_in(inputs: dict[str, Any]) -> dict[str, Any]:
    """Useful zoom-in results by term overlap; missing = question terms no useful result covers."""
    qsets = _query_sets(inputs)
    useful = [i["id"] for i in _items(inputs) if is_useful(qsets, i.get("text", ""))]
    missing = _missing(inputs, [i for i in _items(inputs) if i["id"] in useful])
    return {"thinking": "offline engine: kept results sharing >= a third of a query's content words",
            "missing_information": f"no evidence yet for: {', '.join(missing)}" if missing else "",
            "useful_ids": useful}


def offline_zoom_out(inputs: dict[str, Any]) -> dict[str, Any]:
    """Useful window lines by term overlap, plus the reply right after a useful question turn."""
    qsets = _query_sets(inputs)
    items = _items(inputs)
    picked: list[str] = []
    for k, it in enumerate(items):
        if is_useful(qsets, it.get("text", "")):
            picked.append(it["id"])
            nxt = items[k + 1] if k + 1 < len(items) else None
            if (it.get("text", "").rstrip().endswith("?") and nxt is not None
                    and nxt.get("window") == it.get("window") and nxt.get("speaker") != it.get("speaker")):
                picked.append(nxt["id"])
    picked = list(dict.fromkeys(picked))
    missing = _missing(inputs, [i for i in items if i["id"] in picked])
    return {"thinking": "offline engine: window lines sharing the query's content words, and replies to them",
            "thinking_choice": f"{len(picked)} of {len(items)} lines",
            "missing_information": f"no evidence yet for: {', '.join(missing)}" if missing else "",
            "useful_ids": picked}


def _missing(inputs: dict[str, Any], found: list[dict[str, Any]]) -> list[str]:
    """Question content words (as written) that no found item contains."""
    have = set().union(*(stem_set(i.get("text", "")) for i in found)) if found else set()
    drop = _names(inputs)
    return [w for w in dict.fromkeys(terms(inputs.get("query", ""))) if stem_set(w, drop) - have]


def answer_type_found(question: str, evidence: str, speakers: list[str]) -> bool:
    """Whether the evidence holds something of the question's expected answer type."""
    kind = answer_type(question)
    if kind == "number":
        return bool(re.search(r"\d", evidence)) or bool(NUMBER_WORDS & set(evidence.lower().split()))
    if kind in ("person", "place"):
        asked = {s.lower() for s in capitalised_spans(question)}
        return any(s.lower() not in asked for s in capitalised_spans(evidence, skip=speakers if kind == "place" else ()))
    return True  # date: every turn carries its session date; other types: coverage decides


def offline_judge(inputs: dict[str, Any]) -> dict[str, Any]:
    """can_answer from coverage + answer type; otherwise Break or Delete into new queries."""
    question = inputs.get("query", "")
    speakers = list(inputs.get("speakers", []) or [])
    qsets = _query_sets(inputs)
    stm = _items(inputs, "stm_items")
    seen = stm + _items(inputs, "conv_items")
    useful = list(dict.fromkeys(i["id"] for i in seen if is_useful(qsets, i.get("text", ""))))
    support = [i for i in stm if i["id"] in useful]
    root = stem_set(question, _names(inputs))
    dated = [f"{i.get('text', '')} {i.get('date', '')}" for i in support]  # a turn's date counts as its words
    covered = root & set().union(*(stem_set(t) for t in dated)) if support else set()
    coverage = len(covered) / len(root) if root else 0.0
    type_ok = bool(support) and answer_type_found(question, " ".join(i.get("text", "") for i in support), speakers)
    if support and coverage >= COVER and type_ok:
        return {"thinking": f"offline engine: evidence covers {coverage:.0%} of the question's terms and "
                            f"holds a {answer_type(question)} answer", "useful_id": useful, "can_answer": True}
    action, new = new_queries(inputs, covered)
    why = "no picked evidence" if not support else (
        f"coverage {coverage:.0%} < {COVER:.0%}" if coverage < COVER else f"no {answer_type(question)} in evidence")
    return {"thinking": f"offline engine: cannot answer yet ({why}); {action or 'no new query'}",
            "useful_id": useful, "can_answer": False, "action": action, "new_queries": new}


def new_queries(inputs: dict[str, Any], covered: set[str]) -> tuple[str, list[str]]:
    """(action, queries): Break the last query on "and"/commas, else Delete the matched terms."""
    question = inputs.get("query", "")
    last = (list(inputs.get("queries", []) or []) or [question])[-1]
    drop = _names(inputs)
    named = [s for s in inputs.get("speakers", []) or [] if re.search(rf"\b{re.escape(s)}\b", question, re.I)]
    avoid = [stem_set(q) for q in list(inputs.get("failed", []) or []) + list(inputs.get("queries", []) or [])]
    limit = int(inputs.get("queries_num", 2) or 2)

    def fresh(qs: list[str]) -> list[str]:
        out: list[str] = []
        for q in qs:
            s = stem_set(q)
            if s and s not in avoid and all(stem_set(o) != s for o in out):
                out.append(q)
        return out[:limit]

    parts = [p.strip(" ?.!") for p in re.split(r",|;|\band\b|\bor\b", last) if stem_set(p, drop)]
    if len(parts) >= 2:
        broken = fresh([p if any(n.lower() in p.lower() for n in named) else " ".join([*named, p]) for p in parts])
        if broken:
            return "Break", broken
    rest = [w for w in dict.fromkeys(terms(question)) if stem_set(w, drop) - covered]
    deleted = fresh([" ".join([*named, *rest])] if rest else [])
    if deleted:
        return "Delete", deleted
    words = [w for w in dict.fromkeys(terms(last)) if stem_set(w, drop)]
    half = (len(words) + 1) // 2
    halves = fresh([" ".join([*named, *words[:half]]), " ".join([*named, *words[half:]])]) if len(words) >= 2 else []
    return ("Break", halves) if halves else ("", [])
