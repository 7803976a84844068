"""The answer judge of an evaluation run: the `judge` role (memcore.eval.judge_role) on the run's LLM.

On the offline engine that role is the lexical judge; importing this module registers the role.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memcore.eval.judge_role import JUDGE
from memcore.llm.ledger import UsageLedger, by_stage
from memcore.types import Question

LEXICAL_JUDGE = ("lexical judge (offline engine, not an LLM): official F1 >= 0.5 or every gold part contained "
                 "in the answer; abstention rule for category 5")


def make_judge(wb: Any, enabled: bool) -> tuple[Callable[[Any, Question, str], dict] | None, dict[str, Any]]:
    """(judge function (llm, question, prediction) -> verdict dict, or None; {"enabled", "kind", "label"})."""
    if not enabled:
        return None, {"enabled": False, "kind": None, "label": "no judge (--no-judge)"}
    name, offline = wb.llm.provider.name, wb.llm.is_offline

    def llm_judge(llm: Any, q: Question, pred: str) -> dict:
        qtype = "abstention" if q.metadata.get("abstention") else q.metadata.get("question_type", "")
        with UsageLedger.collect() as records:
            res = llm.run(JUDGE.name, {"question": q.text, "gold": q.answer, "prediction": pred,
                                       "category": q.category, "question_type": qtype}, stage="judge")
        usage = by_stage(records).get("judge")
        label = str(getattr(res.output, "label", "")).upper()
        ok = None if res.error or label not in ("CORRECT", "WRONG") else label == "CORRECT"
        return {"correct": ok, "label": label, "reason": getattr(res.output, "reason", ""),
                "usage": dict(vars(usage)) if usage else None,
                "error": res.error or ("" if ok is not None else f"unreadable judge label {label!r}")}
    info = {"enabled": True, "kind": "lexical", "label": LEXICAL_JUDGE} if offline else \
        {"enabled": True, "kind": "fake", "label": "fake judge (scripted test replies)"} if name == "fake" else \
        {"enabled": True, "kind": "llm", "label": f"LLM judge: {wb.llm.provider.model} ({wb.provider_label})"}
    return llm_judge, info
