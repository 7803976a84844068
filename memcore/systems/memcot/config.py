"""MemCoT's settings (paper defaults; the authors' code's choices as named values)."""

from __future__ import annotations

from dataclasses import dataclass

from memcore.systems.base import SystemConfig, query_field

# When the full conversation replaces the short-term memory as the responder's context.
FALLBACKS = {
    "abstain": "when the loop ends without an answer: an empty short-term memory, or the responder abstains "
               "from it (papers/README.md: \"if the loop ends without an answer, fall back to answering from "
               "the full conversation\"; the authors' code: conv_answer_agent reads the whole conversation)",
    "empty": "only when the loop ends with an empty short-term memory (nothing to answer from): memcore's "
             "earlier reading (option)",
    "never": "never: the responder always reads the short-term memory (the paper's text has no end-of-loop path)",
}

# The paper's panoramic visual grounding (Sec. 4.2 Eq. 8, psi_vis): memcore has no visual module.
VISUAL = {
    "absent": "memcore has no visual module: the paper's panoramic visual grounding (OCR over page images) "
              "cannot run; LoCoMo's images reach the memory only as their text captions in the turns",
    "off": "the ablation asked for, but memcore has no visual module to disable: retrieval and answers are "
           "the full system's (image captions stay text in the turns); only this note differs",
}


@dataclass
class MemCoTConfig(SystemConfig):
    """J: max steps; K: zoom-in hits per query; W: zoom-out window (W_longmemeval on LongMemEval data);
    max_queries: new queries per step; max_failed: failed queries fed back to the judge.

    Sampling (paper App. C): perception agents (zoom-in, zoom-out) and the responder at temperature 1.0,
    the judge at 0.0; `seed` is sent with every call (servers that honour it make runs repeatable). The
    authors' code runs the responder at 0.0 (temperature_responder=0.0).
    judge_retries: asks again when every proposed query was already issued (the authors' code asks up to
    twice more, naming the repeated queries). fallback: see FALLBACKS. reader: "paper" = LoCoMo's /
    LongMemEval's standard prompt (App. D), or another family (memcore.llm.roles.readers)."""

    J: int = query_field(8, range=(2, None), source="MemCoT Sec. 5.1 (J = 8); sweep 2-6 Sec. 5.4",
                         help="maximum evolution steps (answer at step J-1)")
    K: int = query_field(10, range=(1, None), source="MemCoT Sec. 5.1 (K = 10)", help="zoom-in hits per query")
    W: int = query_field(4, range=(0, None), source="MemCoT Sec. 5.1 (W = 4); sweep 1-8+ Sec. 5.4",
                         help="zoom-out window: +-W turns around each useful hit")
    W_longmemeval: int = query_field(15, range=(0, None), source="MemCoT Sec. 5.1 (W = 15 on LongMemEval-S)",
                                     help="W on LongMemEval data")
    max_queries: int = query_field(2, range=(1, None), source="papers/README.md (MemCoT: new_queries <= 2)",
                                   help="new queries the judge may propose per step")
    max_failed: int = query_field(3, range=(0, None), source="papers/README.md (MemCoT: failed-query list <= 3)",
                                  help="failed queries fed back to the judge")
    temperature_perception: float = query_field(1.0, range=(0.0, 2.0), source="MemCoT App. C (1.0)",
                                                help="zoom-in / zoom-out agents' temperature")
    temperature_judge: float = query_field(0.0, range=(0.0, 2.0), source="MemCoT App. C (0.0)",
                                           help="judge agent's temperature")
    temperature_responder: float = query_field(1.0, range=(0.0, 2.0), source="MemCoT App. C (1.0; the authors' "
                                               "code: 0.0)", help="responder's temperature")
    seed: int | None = query_field(0, range=(0, None), source="memcore extension (sent with every call)",
                                   help="sampling seed for servers that honour it (none: not sent)")
    judge_retries: int = query_field(2, range=(0, None), source="authors' code (asks up to twice more)",
                                     help="asks again when every proposed query was already issued")
    fallback: str = query_field("abstain", choices=tuple(FALLBACKS), source="abstain: papers/README.md and the "
                                "authors' code; empty, never: memcore options",
                                help="when the full conversation replaces the short-term memory")
    # ablation switches (MemCoT Sec. 5.3, Table 4)
    zoom_out: bool = query_field(True, source="ablation, MemCoT Sec. 5.3, Table 4 (w/o zoom-out)",
                                 help="zoom-out context expansion; off: fine-grained zoom-in only, no zoom-out "
                                 "call (W = 0 still calls it)")
    visual_grounding: str = query_field("absent", choices=tuple(VISUAL), source="MemCoT Sec. 4.2 Eq. 8; ablation, "
                                        "Sec. 5.3, Table 4 (w/o visual grounding)",
                                        help="memcore has no visual module: absent (always) or off (the ablation "
                                        "asked for; retrieves the same, noted in the trace)")


def ablation_notes(cfg: MemCoTConfig) -> list[str]:
    """The trace notes of an ablated run (MemCoT Table 4); none for the full system."""
    notes = []
    if not cfg.zoom_out:
        notes.append("w/o zoom-out (MemCoT Table 4): fine-grained zoom-in only; no zoom-out window and no "
                     "zoom-out call (W is not used)")
    if cfg.visual_grounding == "off":
        notes.append(f"w/o visual grounding (MemCoT Table 4): {VISUAL['off']}")
    return notes
