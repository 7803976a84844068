"""Third-person narration for offline memory writing: first person rewritten with names, dates resolved.

"I went to a support group yesterday" said by Caroline on 8 May 2023 becomes "Caroline went
to a support group yesterday (7 May 2023)."; "you" becomes the listener's name.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memcore.text.dates import resolve_dates

_YOU = [(r"\byou are\b", "{o} is"), (r"\byou were\b", "{o} was"), (r"\byou're\b", "{o} is"),
        (r"\byou've\b", "{o} has"), (r"\byou'll\b", "{o} will"), (r"\byour\b", "{o}'s"), (r"\byourself\b", "{o}"),
        (r"(?<!thank )(?<!see )(?<!love )\byou\b(?! know| guys| all)", "{o}")]
_WE = [(r"\b[Ww]e're\b", "{s} and others are"), (r"\b[Ww]e've\b", "{s} and others have"),
       (r"\b[Ww]e'll\b", "{s} and others will"), (r"\b[Ww]e'd\b", "{s} and others would"),
       (r"\b[Ww]e\b", "{s} and others"), (r"\b[Oo]ur\b", "{s}'s"), (r"\bus\b", "{s} and others")]
_VERBS = frozenset("""paint play write cook volunteer teach study believe mean miss guess remember prefer adore
hate swim dance sing draw collect own use keep spend watch visit want need hope plan love like enjoy think feel
know see get make take try run work live go do have bake hike ride drive travel attend practice support help
cherish value appreciate admire wonder agree understand recommend suggest find say tell ask look bring call give
hang stay walk participate celebrate listen care own teach learn wish""".split())
_NEG = {"don't": "doesn't", "haven't": "hasn't", "aren't": "isn't", "weren't": "wasn't"}
_PHOTO = re.compile(r"\[shares a photo of (.+?)\]")
# the speaker as subject is marked with \x00 so that only its verb is conjugated
_SUBJ = [(r"\bI am\b", "\x00 is"), (r"\bI'm\b", "\x00 is"), (r"\bI was\b", "\x00 was"), (r"\bI have\b", "\x00 has"),
         (r"\bI've\b", "\x00 has"), (r"\bI'll\b", "\x00 will"), (r"\bI'd\b", "\x00 would"), (r"\bI\b", "\x00")]
_ADV = r"(?:(?:really|also|still|just|totally|usually|often|always|never|sometimes|actually|definitely) )?"
_GONNA = re.compile(r"^(going to|planning|thinking|hoping|trying|looking forward|working on|about to)\b", re.I)
_PAST = re.compile(r"^(lost|got|went|had|made|took|saw|just|finally|started|finished|bought|found|met|visited|tried|"
                   r"learned|been|spent|joined|won|signed|moved)\b", re.I)


def rewrite(sentence: str, speaker: str, other: str = "", date: str = "") -> str:
    """Third person with names, relative dates resolved against `date` (in parentheses)."""
    s = re.sub(r"\bwanna\b", "want to", re.sub(r"\bgonna\b", "going to", sentence.strip()))
    s = _PAST.sub(lambda m: "I " + m[1].lower(), _GONNA.sub(lambda m: "I'm " + m[1].lower(), s))
    for pat, rep in _SUBJ:
        s = re.sub(pat, rep, s)
    s = re.sub(r"\x00 (don't|haven't|aren't|weren't)\b", lambda m: f"\x00 {_NEG[m[1]]}", s)
    s = re.sub(rf"\x00 ({_ADV})([a-z]+)\b", lambda m: f"\x00 {m[1]}{_s3(m[2]) if m[2] in _VERBS else m[2]}", s)
    s = s.replace("\x00", speaker)
    for pat, rep in [(r"\bmyself\b", "{s}"), (r"\b[Mm]y\b", "{s}'s"), (r"\bme\b", "{s}"), (r"\bmine\b", "{s}'s"),
                     *_WE]:
        s = re.sub(pat, rep.format(s=speaker), s)
    if other:
        for pat, rep in _YOU:
            s = re.sub(pat, rep.format(o=other), s, flags=re.I)
    s = resolve_dates(s, date) if date else s
    s = s.strip()
    return s if s.endswith((".", "!", "?", ")")) else s + "."


def _s3(verb: str) -> str:
    if verb in ("have", "do", "go") or verb.endswith(("ch", "sh", "ss", "x")):
        return {"have": "has", "do": "does", "go": "goes"}.get(verb, verb + "es")
    return verb[:-1] + "ies" if verb.endswith("y") and verb[-2:-1] not in "aeiou" else verb + "s"


def narrate(sentence: str, speaker: str, other: str, date: str) -> str:
    """One episode sentence: "Caroline went ..." or "Caroline said the ..."."""
    photo = photo_of(sentence)
    if photo and not strip_photo(sentence):
        return f"{speaker} shared a photo of {photo}."
    s = re.sub(r"\s*\[shares a photo of (.+?)\]", r" (shared a photo of \1)", sentence)
    s = rewrite(s, speaker, other, date)
    if s.startswith(speaker) or s.startswith(f"{speaker}'s"):
        return s
    return f"{speaker} said {s[:1].lower() + s[1:] if not s[:2].isupper() else s}"


def other_speaker(speaker: str, speakers: Sequence[str]) -> str:
    """The listener in a two-person conversation ("" otherwise)."""
    rest = [s for s in dict.fromkeys(speakers) if s != speaker]
    return rest[0] if len(rest) == 1 else ""


def photo_of(text: str) -> str:
    """What a "[shares a photo of ...]" marker shows ("" without one)."""
    m = _PHOTO.search(text)
    return m.group(1).strip() if m else ""


def strip_photo(text: str) -> str:
    """The text without its photo marker."""
    return _PHOTO.sub("", text).strip()
