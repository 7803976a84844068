"""Offline MemWeaver judgement roles: similarity thresholds for review, coherence and routing; experiences;
the triple selector (question-term overlap weighted by idf over the candidates, plus one hop).

Judgement roles (review, coherence, router) use similarity thresholds; the coherence check and the
selector compute their cosines from their inputs with the runtime's embedder (the offline engine's), as
the system embeds turns and triples. The router's cosines to the cluster centroids are the one number a
system still passes in (`_sims`): the centroids are not in a real model's inputs. Experiences are
extractive. Graph extraction: offline_extract; time: offline_time.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from difflib import SequenceMatcher
from typing import Any

from memcore.systems.memweaver.experience import cohesion as mean_cosine
from memcore.text.sentences import sentences, third_person
from memcore.text.terms import keywords, stems, term_set, terms

COHERENCE_MIN = 0.55  # mean cosine of members to their centroid for a coherent group
ROUTER_MIN = 0.65  # cosine to a shortlisted cluster for the offline router to accept it
REVIEW_SUPPORT_MIN = 0.5  # share of a relation's endpoint words found in its own turn
REVIEW_DUP_MIN = 0.85  # relation-phrase similarity of two triples with the same endpoints
SELECT_MAX = 12  # the offline selector keeps at most this many triples
SELECT_MIN_WEIGHT = 0.5  # idf weight of the question terms a triple must match to be selected


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


def offline_coherence(inputs: dict[str, Any], embedder: Any) -> dict[str, Any]:
    """Coherent when the members' mean cosine to their centroid reaches COHERENCE_MIN (the turns embedded as
    the system embeds them: "Speaker: text")."""
    turns = [str(t) for t in inputs.get("turns", []) or []]
    cohesion = mean_cosine(embedder.embed(turns)) if turns else 0.0
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


_UNIT = re.compile(r"\[\d+\] Speaker=(.*?): (.*)", re.S)  # "[0] Speaker=Ana: text", as the system writes a turn


def offline_experiences(inputs: dict[str, Any]) -> dict[str, Any]:
    """Extractive induction: central first-person sentences, third person, <= 120 chars, >= 2 sources."""
    units = [{"speaker": m.group(1), "text": m.group(2)} for m in (_UNIT.fullmatch(str(t))
                                                                  for t in inputs.get("turns", []) or []) if m]
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


def triple_cosines(question: str, lines: list[str], embedder: Any) -> dict[str, float]:
    """Cosine (4 decimals) of the question to each triple "id | src | rel | tgt | ...", the triple embedded as
    the system embeds relations ("src rel tgt")."""
    rows = [[p.strip() for p in str(line).split(" | ")] for line in lines]
    rows = [p for p in rows if len(p) > 3]
    if not rows or not question:
        return {}
    vecs = embedder.embed([question] + [" ".join(p[1:4]) for p in rows])
    return {p[0]: round(float(v @ vecs[0]), 4) for p, v in zip(rows, vecs[1:], strict=True)}


def idf_weight(words: Iterable[str], idf: Mapping[str, float]) -> float:
    """The summed idf weight of a triple's question terms, exactly rounded (math.fsum): a plain sum over a set
    depends on the set's order, i.e. on the process's string-hash seed, and would break a tie by it."""
    return math.fsum(idf.get(w, 0.0) for w in words)


def offline_select(inputs: dict[str, Any], embedder: Any) -> dict[str, Any]:
    """Triples matching the question directly, then one multi-hop step (the prompt asks for both).

    Direct: weight = sum of idf (over the candidates) of the question stems a triple shares, so a name
    on most candidates weighs little; kept at weight >= SELECT_MIN_WEIGHT, best first (ties: the question's
    cosine to the triple, `triple_cosines`, then the id). Chain step: triples sharing an endpoint with a direct one, through
    endpoints on at most half of the candidates (a speaker on every triple links nothing), by cosine.
    At most SELECT_MAX in all."""
    rows = []
    for line in inputs.get("triples", []) or []:
        parts = [p.strip() for p in str(line).split(" | ")]
        ends = {parts[1].lower(), parts[3].lower()} if len(parts) > 3 else set()
        rows.append((parts[0], set(stems(" ".join(parts[1:]))), ends))
    q = set(stems(str(inputs.get("question", ""))))
    if not rows or not q:
        return {"selected": [], "reason": "offline: no candidates or no question terms"}
    n = len(rows)
    df = {w: sum(w in st for _, st, _ in rows) for w in q}
    idf = {w: math.log((n + 1) / (df[w] + 0.5)) for w in q if df[w]}
    cos = triple_cosines(str(inputs.get("question", "")), list(inputs.get("triples", []) or []), embedder)
    scored = [(idf_weight(q & st, idf), tid) for tid, st, _ in rows]
    direct = [tid for _, tid in sorted((x for x in scored if x[0] >= SELECT_MIN_WEIGHT),
                                       key=lambda x: (-x[0], -cos.get(x[1], 0.0), x[1]))][:SELECT_MAX]
    ends_of = {tid: ends for tid, _, ends in rows}
    end_df = Counter(e for _, _, ends in rows for e in ends)
    hubs = {e for tid in direct for e in ends_of[tid] if end_df[e] <= n / 2}
    chain = sorted((tid for tid, _, ends in rows if tid not in direct and ends & hubs),
                   key=lambda t: (-cos.get(t, 0.0), t))[: max(0, SELECT_MAX - len(direct))]
    return {"selected": direct + chain,
            "reason": f"offline: {len(direct)} of {n} triples share question terms (idf weight >= "
                      f"{SELECT_MIN_WEIGHT}), {len(chain)} more one hop from them; at most {SELECT_MAX}"}
