"""The answer judge of an evaluation run: the `judge` role (memcore.eval.judge_role) on the run's LLM.

On the offline engine that role is the lexical judge; importing this module registers the role.

Repeated judging (`judge_runs(K)`, the CLI's `--judge-runs K`): LLM-judge scores move with the judge's
model, prompt and sampling, so each answer can be judged K times, run k with seed k (temperature
JUDGE_TEMPERATURE, the benchmarks' 0). A row keeps every run's verdict (`judge_runs`); its `judge`
is the majority (ties: the first run), used for failure attribution; results report the mean and
standard deviation over the K runs of the run's accuracy (memcore.eval.report). K = 1 is one call
without a seed, as before. The offline lexical judge is deterministic: its K runs agree (std 0).
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Callable
from typing import Any

from memcore.eval.beam_scores import OFFLINE_RUBRIC_RULE, rubric_rule
from memcore.eval.judge_prompts import JUDGE_TEMPERATURE, judge_prompt_name
from memcore.eval.judge_role import JUDGE
from memcore.eval.rubric_role import (
    PLUS_JUDGE,
    PLUS_PROMPT_VERSION,
    RUBRIC_JUDGE,
    RUBRIC_PROMPT_VERSION,
    plus_kind,
)
from memcore.llm.ledger import UsageLedger, by_stage
from memcore.types import Question

LEXICAL_JUDGE = ("lexical judge (offline engine, not an LLM): official F1 >= 0.5 or every gold part contained "
                 "in the answer; abstention rule for category 5")
JUDGE_PROMPTS_VERSION = "judge-prompts-v1"  # memcore.eval.judge_prompts as of this version; bump when they change
PROMPTS = ("benchmark judge prompts by question: LoCoMo 1-4 'locomo-mem0' (mem0-style), LoCoMo 5 and "
           "LongMemEval abstention 'abstention', LongMemEval per type 'longmemeval-*' (memcore.eval.judge_prompts)")


def judge_runs(enabled: bool | int) -> int:
    """K, the number of judge runs, from run_eval's `judge` argument: False -> 0, True -> 1, an int K -> K."""
    if isinstance(enabled, bool) or enabled is None:
        return int(bool(enabled))
    if int(enabled) < 0:
        raise ValueError(f"judge runs must be >= 0, got {enabled}")
    return int(enabled)


def _seeds(k: int) -> list[int | None]:
    return [None] if k == 1 else list(range(1, k + 1))


def _one(llm: Any, inputs: dict, seed: int | None) -> tuple[bool | None, str, str, str, list]:
    """(correct or None, label, reason, error, ledger records) of one judge call."""
    with UsageLedger.collect() as records:
        kwargs = {} if seed is None else {"seed": seed, "temperature": JUDGE_TEMPERATURE}
        res = llm.run(JUDGE.name, inputs, stage="judge", **kwargs)
    label = str(getattr(res.output, "label", "")).upper()
    ok = None if res.error or label not in ("CORRECT", "WRONG") else label == "CORRECT"
    error = res.error or ("" if ok is not None else f"unreadable judge label {label!r}")
    return ok, label, getattr(res.output, "reason", ""), error, list(records)


def scored_kind(q: Question) -> str:
    """How a question is judged: "rubric" (BEAM: per rubric item), "plus" (LoCoMo-Plus cognitive: no reference
    answer), else "label" (the `judge` role's CORRECT / WRONG against the gold answer)."""
    if q.metadata.get("rubric"):
        return "rubric"
    if q.metadata.get("no_reference_answer"):
        return "plus"
    return "label"


def _scored(llm: Any, q: Question, pred: str, seeds: list[int | None], offline: bool, model: str) -> dict:
    """The verdict of a rubric (BEAM) or LoCoMo-Plus question: its score per run and their mean in "scores"
    (rubric_judge / plus_judge), `correct` = mean score >= 0.5, `runs` None (the CORRECT / WRONG judge metric
    leaves these questions out). Offline: the rubric rule decides `correct` and says so; a LoCoMo-Plus question
    is not judged (correct None)."""
    kind = scored_kind(q)
    version = RUBRIC_PROMPT_VERSION if kind == "rubric" else PLUS_PROMPT_VERSION
    base = {"runs": None, "prompt": version if kind == "rubric" else f"{version}:{plus_kind(q.category)}",
            "usage": None, "error": "", "judge_id": f"{model}|{version}" if not offline else f"offline|{version}"}
    if offline:
        if kind == "rubric":
            score, _ = rubric_rule(q.metadata["rubric"], pred)
            return {**base, "correct": None if score is None else score >= 0.5,
                    "label": "" if score is None else f"RUBRIC RULE {score:.2f}", "reason": OFFLINE_RUBRIC_RULE,
                    "scores": {}, "prompt": "offline rubric rule", "judge_id": "offline|offline rubric rule"}
        return {**base, "correct": None, "label": "", "reason": "not judged: LoCoMo-Plus has no offline rule",
                "scores": {}, "prompt": "not judged offline"}
    scores: list[float] = []
    reasons: list[str] = []
    errors: list[str] = []
    records: list = []
    for seed in seeds:
        with UsageLedger.collect() as recs:
            kwargs = {} if seed is None else {"seed": seed, "temperature": JUDGE_TEMPERATURE}
            if kind == "rubric":
                res = llm.run(RUBRIC_JUDGE.name, {"question": q.text, "rubric": q.metadata["rubric"],
                                                  "prediction": pred}, stage="judge", **kwargs)
            else:
                res = llm.run(PLUS_JUDGE.name, {"category": q.category, "question": q.text, "gold": q.answer,
                                                "evidence": q.metadata.get("cue", ""), "prediction": pred},
                              stage="judge", **kwargs)
        records += list(recs)
        out = res.output
        items = getattr(out, "items", None)
        if res.error or out is None or (kind == "rubric" and len(items or []) != len(q.metadata["rubric"])):
            got = f"{len(items or [])} item scores for {len(q.metadata['rubric'])} rubric items" if kind == "rubric" \
                else "no label"
            errors.append(res.error or f"unusable judge reply ({got})")
            continue
        scores.append(out.mean() if kind == "rubric" else out.score)
        reasons.append("; ".join(f"{i.score:g}: {i.reason}" for i in items) if kind == "rubric" else
                       f"{out.label}: {out.reason}")
    usage = by_stage(records).get("judge")
    mean = sum(scores) / len(scores) if scores else None
    name = "rubric_judge" if kind == "rubric" else "plus_judge"
    return {**base, "correct": None if mean is None else mean >= 0.5,
            "label": "" if mean is None else f"{'RUBRIC' if kind == 'rubric' else 'PLUS'} {mean:.2f}",
            "reason": reasons[0] if reasons else "", "scores": {name: mean}, "score_runs": scores,
            "usage": dict(vars(usage)) if usage else None,
            "error": "; ".join(dict.fromkeys(errors)) if errors else ""}


def _majority(votes: list[bool | None]) -> bool | None:
    read = [v for v in votes if v is not None]
    if not read:
        return None
    yes = sum(read)
    return read[0] if 2 * yes == len(read) else 2 * yes > len(read)


def make_judge(wb: Any, enabled: bool | int) -> tuple[Callable[[Any, Question, str], dict] | None, dict[str, Any]]:
    """(judge function (llm, question, prediction) -> verdict dict, or None; the run's judge info).

    `enabled`: False (no judge), True (one run) or K (K runs, seeds 1..K). The info records "enabled",
    "kind", "label", "model", "prompt", "runs" (K), "seeds" and "temperature"."""
    k = judge_runs(enabled)
    if k == 0:
        return None, {"enabled": False, "kind": None, "label": "no judge (--no-judge)", "runs": 0}
    name, offline = wb.llm.provider.name, wb.llm.is_offline
    seeds = _seeds(k)

    def llm_judge(llm: Any, q: Question, pred: str) -> dict:
        if scored_kind(q) != "label":
            return _scored(llm, q, pred, seeds, offline, wb.llm.provider.model)
        qtype = "abstention" if q.metadata.get("abstention") else q.metadata.get("question_type", "")
        inputs = {"question": q.text, "gold": q.answer, "prediction": pred, "category": q.category,
                  "question_type": qtype}
        runs = [_one(llm, inputs, seed) for seed in seeds]
        votes = [r[0] for r in runs]
        ok = _majority(votes)
        first = next((r for r in runs if r[0] == ok), runs[0])
        usage = by_stage([rec for r in runs for rec in r[4]]).get("judge")
        errors = [r[3] for r in runs if r[3]]
        return {"correct": ok, "label": first[1], "reason": first[2], "runs": votes, "judge_id": judge_id,
                "prompt": judge_prompt_name(qtype or q.category), "usage": dict(vars(usage)) if usage else None,
                "error": "; ".join(dict.fromkeys(errors)) if ok is None or len(errors) == len(runs) else
                (f"{len(errors)} of {k} judge runs unreadable: {errors[0]}" if errors else "")}
    judge_id = f"{'offline' if offline else wb.llm.provider.model}|{JUDGE_PROMPTS_VERSION}"
    kind = "lexical" if offline else "fake" if name == "fake" else "llm"
    label = LEXICAL_JUDGE if offline else "fake judge (scripted test replies)" if name == "fake" else \
        f"LLM judge: {wb.llm.provider.model} ({wb.provider_label})"
    if k > 1:
        label += f", {k} runs (mean and std over runs)"
    return llm_judge, {"enabled": True, "kind": kind, "label": label, "model": wb.llm.provider.model,
                       "provider": name, "prompt": PROMPTS, "runs": k, "seeds": seeds,
                       "temperature": JUDGE_TEMPERATURE, "prompt_versions": prompt_versions(offline)}


def prompt_versions(offline: bool) -> dict[str, str]:
    """The judges' prompt versions by kind of question (recorded in the run's judge info)."""
    return {"label": JUDGE_PROMPTS_VERSION,
            "rubric": OFFLINE_RUBRIC_RULE if offline else RUBRIC_PROMPT_VERSION,
            "plus": "not judged offline" if offline else PLUS_PROMPT_VERSION}


def _mean(values: list[bool | float | None]) -> float | None:
    vals = [float(v) for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None


def judge_stats(rows: list[dict], digits: int = 6) -> dict[str, Any]:
    """{"judge": mean over the K judge runs of each run's accuracy, "judge_std": their sample standard
    deviation (None with one run), "judge_runs": K, "judge_prompts": {prompt name: rows} when rows
    name theirs; with K > 1 also "judge_majority": the accuracy of the rows' majority verdicts}. Rows without `judge_runs` (stored before it) count as one run."""
    runs = [r.get("judge_runs") or [r.get("judge")] for r in rows]
    k = max((len(v) for v in runs), default=1)
    read = [a for a in (_mean([v[i] for v in runs if i < len(v)]) for i in range(k)) if a is not None]
    out: dict[str, Any] = {"judge": round(sum(read) / len(read), digits) if read else None,
                           "judge_std": round(statistics.stdev(read), digits) if len(read) > 1 else None,
                           "judge_runs": k}
    prompts = Counter(r["judge_prompt"] for r in rows if r.get("judge_prompt"))
    if prompts:
        out["judge_prompts"] = dict(sorted(prompts.items()))
    if k > 1:
        m = _mean([r.get("judge") for r in rows])
        out["judge_majority"] = None if m is None else round(m, digits)
    return out
