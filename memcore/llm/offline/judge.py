"""Offline judging: LoCoMo's lexical judge (token F1 or containment; abstention for category 5)."""

from __future__ import annotations

from typing import Any

from memcore.eval.metrics import is_abstention, lexical_judge, locomo_f1

LEXICAL = "lexical judge (offline engine, no LLM)"
_ABSTENTION_TYPES = ("5", "adversarial", "abstention")


def judge_category(inputs: dict[str, Any]) -> int | str:
    """The LoCoMo category the lexical rules use: 5 for abstention questions, else the given category."""
    qtype = str(inputs.get("question_type", "") or "").strip().lower()
    cat = inputs.get("category", "")
    if qtype in _ABSTENTION_TYPES or qtype.endswith("_abs") or str(cat).strip().lower() in _ABSTENTION_TYPES:
        return 5
    return cat if cat not in (None, "") else qtype


def offline_judge_verdict(inputs: dict[str, Any]) -> tuple[bool, str]:
    """(correct, reason) by the lexical rules, with the reason naming the rule that decided."""
    gold, pred = str(inputs.get("gold", "")), str(inputs.get("prediction", ""))
    cat = judge_category(inputs)
    if cat == 5:
        ok = is_abstention(pred)
        why = "the answer abstains" if ok else "the answer does not abstain"
        return ok, f"{LEXICAL}: unanswerable question; {why}"
    ok = lexical_judge(pred, gold, cat)
    f1 = locomo_f1(pred, gold, cat)
    if f1 >= 0.5:
        why = f"token F1 {f1:.2f} >= 0.5"
    elif ok:
        why = f"the gold answer appears in the answer (token F1 {f1:.2f})"
    else:
        why = f"token F1 {f1:.2f} < 0.5 and the gold answer is not contained"
    return ok, f"{LEXICAL}: {why}"
