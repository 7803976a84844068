"""Format checks every loader shares: what the strict default refuses and `lenient` accepts.

A file is held to its format. These problems are errors by default (one DatasetError that names
every place, up to a few, and the fix):
- a missing session: session numbers must run 1..N; a `session_N` that is absent or empty below
  the last session (the signature of a session cut out of the file) is refused;
- an empty turn: a turn whose text is blank (and that shares no image) carries nothing to remember;
- dangling evidence: a question's evidence id that names no turn of its conversation;
- unusable evidence: an evidence piece that is no turn id in any recognisable spelling ("foo", "bar");
- a repeated id: two conversations (LoCoMo samples, LongMemEval items) or two questions under one id.

Evidence ids are matched in their spellings: `D30:05` and `D:30:5` name turn `D30:5` (`canonical_id`);
evidence is stored under the turn's own id.

`lenient=True` (the CLI's `--lenient`) keeps the loaders' earlier behaviour (missing sessions
skipped, empty turns kept, dangling ids kept in `Question.metadata["missing_evidence"]`), drops unusable
evidence pieces (kept in `metadata["unusable_evidence"]`), loads a repeated id with different data under a
derived id (`lme1~2`, the file's id in `metadata["dataset_id"]`) and skips an identical repeat; it emits one
`DatasetWarning` counting each kind of problem accepted.

Known errata of a published dataset are not refused: `KNOWN_ERRATA` lists each dangling evidence
id that the public LoCoMo file itself carries (the session it names is shorter than the id says).
They stay in `missing_evidence` and are listed in `metadata["evidence_errata"]`; conv-42's stray "D"
(an evidence piece naming nothing) is dropped from `evidence` and listed there too.
"""

from __future__ import annotations

import hashlib
import json
import re
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from memcore.errors import DatasetError

MAX_LISTED = 5  # places named in one message; the rest are counted
LENIENT_FIX = "or load it with --lenient (lenient=True) to accept it as it is, with a warning"

# (conversation id, evidence id) pairs that name no turn in the published LoCoMo release
# (locomo10.json and the conv-NN.json files): conv-42 session 10 ends at D10:16, conv-47 session 4
# at D4:25; conv-42 lists a stray "D" among one question's evidence. Accepted in strict mode, recorded in
# Question.metadata["evidence_errata"].
KNOWN_ERRATA: frozenset[tuple[str, str]] = frozenset({("conv-42", "D10:19"), ("conv-47", "D4:36"), ("conv-42", "D")})
_SPELLING = re.compile(r"D\s*:?\s*0*(\d+)\s*:\s*0*(\d+)", re.I)  # D30:5, D30:05, D:30:5, d30:5, D 30 : 5


def fingerprint(obj: object) -> str:
    """A hash of a JSON value's content (key order ignored), to tell a repeated item from a different one."""
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()


def canonical_id(piece: str) -> str | None:
    """`D<session>:<turn>` without leading zeros for any recognisable spelling of a turn id, else None."""
    m = _SPELLING.fullmatch(piece.strip())
    return f"D{int(m.group(1))}:{int(m.group(2))}" if m else None


class DatasetWarning(UserWarning):
    """A dataset problem accepted because the file was loaded with lenient=True."""


@dataclass
class Problem:
    """One place in a file that breaks its format, and how to fix it."""

    where: str
    what: str
    fix: str
    kind: str = "format problem"


@dataclass
class Checks:
    """Problems found while loading one file; `finish()` raises (strict) or warns (lenient)."""

    path: str | Path
    lenient: bool = False
    problems: list[Problem] = field(default_factory=list)

    def add(self, where: str, what: str, fix: str, kind: str = "format problem") -> None:
        """Record one problem at `where` (a field path such as "qa[3]" or "session_2[4]"); `kind` counts it."""
        self.problems.append(Problem(where, what, fix, kind))

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

    def evidence(self, conv_id: str, evidence: list[str], turn_ids: set[str],
                 where: str) -> tuple[list[str], dict[str, list[str]]]:
        """(evidence under the turns' own ids, metadata) for a question's evidence pieces.

        A piece is a turn id, or a spelling of one (`canonical_id`). Metadata: "missing_evidence" (well-formed
        ids naming no turn; kept in the evidence), "unusable_evidence" (pieces naming no turn in any spelling;
        dropped), "evidence_errata" (KNOWN_ERRATA). Problems other than errata are recorded."""
        by_spelling = {canonical_id(t) or t: t for t in turn_ids}
        out: list[str] = []
        meta: dict[str, list[str]] = {}
        for piece in evidence:
            tid = piece if piece in turn_ids else by_spelling.get(canonical_id(piece) or piece)
            erratum = (conv_id, piece) in KNOWN_ERRATA
            if tid is None and erratum:
                meta.setdefault("evidence_errata", []).append(piece)
            if tid is None and canonical_id(piece) is None:  # no turn id in any spelling: never gold evidence
                meta.setdefault("unusable_evidence", []).append(piece)
                if not erratum:
                    self.add(where, f"evidence {piece!r} is no turn id of conversation {conv_id!r} in any "
                             "spelling (turn ids look like 'D3:12')",
                             "correct or remove the id", kind="unusable evidence id")
                continue
            if tid is None:
                meta.setdefault("missing_evidence", []).append(piece)
                if not erratum:
                    self.add(where, f"evidence {piece!r} names no turn of conversation {conv_id!r}",
                             "correct or remove the id", kind="dangling evidence id")
            tid = tid or canonical_id(piece) or piece
            if tid not in out:
                out.append(tid)
        return out, meta

    def unique(self, entries: list[tuple[str, str, str]], what: str) -> list[str | None]:
        """For each (id, where, content fingerprint): the id to load it under, or None to skip it.

        A repeated id is a problem naming both places. Lenient: a repeat with the same content is skipped, one
        with different content gets a derived id `<id>~<n>` (said in the warning); strict raises in finish()."""
        first: dict[str, tuple[str, str]] = {}
        taken = {e[0] for e in entries}
        out: list[str | None] = []
        for ident, where, fingerprint in entries:
            if ident not in first:
                first[ident] = (where, fingerprint)
                out.append(ident)
                continue
            at, same = first[ident][0], first[ident][1] == fingerprint
            new: str | None = None
            if not same:
                n = 2
                while f"{ident}~{n}" in taken:
                    n += 1
                new = f"{ident}~{n}"
                taken.add(new)
            lenient = "skipped" if same else f"loaded as {new!r}"
            self.add(where, f"{what} {ident!r} is also used at {at} ({'same' if same else 'different'} content; "
                     f"lenient: {lenient})", f"give each one its own {what}", kind=f"repeated {what}")
            out.append(new if self.lenient else ident)
        return out

    def finish(self) -> None:
        """Raise one DatasetError naming the places (strict), or warn once (lenient); no-op when clean."""
        if not self.problems:
            return
        listed = "; ".join(f"{p.where}: {p.what}" for p in self.problems[:MAX_LISTED])
        more = len(self.problems) - MAX_LISTED
        text = f"{len(self.problems)} format problem(s): {listed}" + (f" (and {more} more)" if more > 0 else "")
        if self.lenient:
            counts = ", ".join(f"{n} {kind}(s)" for kind, n in Counter(p.kind for p in self.problems).items())
            warnings.warn(DatasetWarning(f"{self.path}: {text}. Loaded anyway (lenient; {counts}): missing sessions "
                                         "skipped, empty turns kept, dangling evidence listed in missing_evidence, "
                                         "unusable evidence dropped (unusable_evidence), repeated ids skipped or "
                                         "derived as said"), stacklevel=3)
            return
        fixes = "; ".join(dict.fromkeys(p.fix for p in self.problems))
        raise DatasetError(str(self.path), text, f"{fixes}; {LENIENT_FIX}")
