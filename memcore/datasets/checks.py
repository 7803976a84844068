"""Format checks every loader shares: what the strict default refuses and `lenient` accepts.

A file is held to its format. These problems are errors by default (one DatasetError that names
every place, up to a few, and the fix):
- a missing session: session numbers must run 1..N; a `session_N` that is absent or empty below
  the last session (the signature of a session cut out of the file) is refused;
- an empty turn: a turn whose text is blank (and that shares no image) carries nothing to remember;
- dangling evidence: a question's evidence id that names no turn of its conversation.

`lenient=True` (the CLI's `--lenient`) keeps the loaders' earlier behaviour (missing sessions
skipped, empty turns kept, dangling ids kept in `Question.metadata["missing_evidence"]`) and
emits one `DatasetWarning` listing what was accepted.

Known errata of a published dataset are not refused: `KNOWN_ERRATA` lists each dangling evidence
id that the public LoCoMo file itself carries (the session it names is shorter than the id says).
They stay in `missing_evidence` and are listed in `metadata["evidence_errata"]`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path

from memcore.errors import DatasetError

MAX_LISTED = 5  # places named in one message; the rest are counted
LENIENT_FIX = "or load it with --lenient (lenient=True) to accept it as it is, with a warning"

# (conversation id, evidence id) pairs that name no turn in the published LoCoMo release
# (locomo10.json and the conv-NN.json files): conv-42 session 10 ends at D10:16, conv-47 session 4
# at D4:25. Accepted in strict mode, recorded in Question.metadata["evidence_errata"].
KNOWN_ERRATA: frozenset[tuple[str, str]] = frozenset({("conv-42", "D10:19"), ("conv-47", "D4:36")})


class DatasetWarning(UserWarning):
    """A dataset problem accepted because the file was loaded with lenient=True."""


@dataclass
class Problem:
    """One place in a file that breaks its format, and how to fix it."""

    where: str
    what: str
    fix: str


@dataclass
class Checks:
    """Problems found while loading one file; `finish()` raises (strict) or warns (lenient)."""

    path: str | Path
    lenient: bool = False
    problems: list[Problem] = field(default_factory=list)

    def add(self, where: str, what: str, fix: str) -> None:
        """Record one problem at `where` (a field path such as "qa[3]" or "session_2[4]")."""
        self.problems.append(Problem(where, what, fix))

    def sessions(self, numbers: dict[int, int], where: str) -> list[int]:
        """Check that sessions run 1..N; `numbers` maps session number -> turn count. Returns the gaps."""
        filled = [n for n, count in numbers.items() if count]
        if not filled:
            return []
        gaps = [n for n in range(1, max(filled) + 1) if not numbers.get(n)]
        for n in gaps:
            state = "is empty" if n in numbers else "is missing"
            self.add(f"{where}session_{n}", f"session {n} {state} (sessions run to {max(filled)}; the evidence "
                     f"in it cannot be found)", f"restore session_{n} from the original file")
        return gaps

    def turn_text(self, text: str, caption: str, where: str) -> None:
        """Refuse a turn with blank text that shares no image."""
        if not text.strip() and not caption.strip():
            self.add(where, "the turn's text is empty", "give the turn its text, or delete the turn")

    def evidence(self, conv_id: str, evidence: list[str], turn_ids: set[str], where: str) -> dict[str, list[str]]:
        """Metadata for evidence ids naming no turn: "missing_evidence" (and "evidence_errata" for KNOWN_ERRATA).

        Ids that are neither known errata nor accepted by lenient are recorded as problems."""
        missing = [e for e in evidence if e not in turn_ids]
        errata = [e for e in missing if (conv_id, e) in KNOWN_ERRATA]
        for e in missing:
            if e not in errata:
                self.add(where, f"evidence {e!r} names no turn of conversation {conv_id!r}",
                         "correct or remove the id")
        meta: dict[str, list[str]] = {"missing_evidence": missing} if missing else {}
        if errata:
            meta["evidence_errata"] = errata
        return meta

    def finish(self) -> None:
        """Raise one DatasetError naming the places (strict), or warn once (lenient); no-op when clean."""
        if not self.problems:
            return
        listed = "; ".join(f"{p.where}: {p.what}" for p in self.problems[:MAX_LISTED])
        more = len(self.problems) - MAX_LISTED
        text = f"{len(self.problems)} format problem(s): {listed}" + (f" (and {more} more)" if more > 0 else "")
        if self.lenient:
            warnings.warn(DatasetWarning(f"{self.path}: {text}. Loaded anyway (lenient): missing sessions "
                                         "skipped, empty turns kept, dangling evidence listed in "
                                         "missing_evidence"), stacklevel=3)
            return
        fixes = "; ".join(dict.fromkeys(p.fix for p in self.problems))
        raise DatasetError(str(self.path), text, f"{fixes}; {LENIENT_FIX}")
