"""Reading a dataset file: every way a file can be unreadable becomes one DatasetError naming it and the fix.

- only regular files are opened: a FIFO, socket or device is refused before it is opened (a FIFO would block);
- a file the process may not read (PermissionError) or a directory is named as such;
- the encoding is detected (RFC 8259 / RFC 4627): a byte-order mark (UTF-8, UTF-16, UTF-32), else the pattern
  of zero bytes around the first ASCII characters (UTF-16/32 without a BOM); the text is read in it, and a file
  that does not decode says which encoding was tried;
- JSON nested deeper than Python's parser can follow (RecursionError) is refused with its file name.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

from memcore.errors import DatasetError

_BOMS = ((b"\x00\x00\xfe\xff", "utf-32-be"), (b"\xff\xfe\x00\x00", "utf-32-le"), (b"\xef\xbb\xbf", "utf-8-sig"),
         (b"\xfe\xff", "utf-16-be"), (b"\xff\xfe", "utf-16-le"))
_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"))
DEEP_FIX = "a dataset nests a few levels only: check that the file was exported as a dataset (not a dump of objects)"


def check_file(path: str | Path) -> Path:
    """`path` if it is a regular file this process may read; else a DatasetError (nothing is opened)."""
    p = Path(path)
    try:
        mode = p.stat().st_mode
    except FileNotFoundError:
        raise DatasetError(str(p), "file not found", "check the path") from None
    except PermissionError:
        raise DatasetError(str(p), "cannot be read (permission denied on the file or its folder)",
                           "make it readable (chmod a+r), or copy it somewhere you can read") from None
    except OSError as e:
        raise DatasetError(str(p), f"cannot be read ({e.strerror or e})", "check the path") from None
    if stat.S_ISDIR(mode):
        raise DatasetError(str(p), "is a directory, not a dataset file", "pass one .json or .jsonl file")
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
        raise DatasetError(str(p), f"is {kind}, not a regular file", "save the data to a .json or .jsonl file "
                           "and pass that file")
    return p


def encoding_of(head: bytes) -> str:
    """The encoding of a JSON text from its first bytes: a BOM, else the zero-byte pattern, else UTF-8."""
    for bom, name in _BOMS:
        if head.startswith(bom):
            return name
    if len(head) >= 4:
        if head[:3] == b"\x00\x00\x00" and head[3]:
            return "utf-32-be"
        if head[0] and head[1:4] == b"\x00\x00\x00":
            return "utf-32-le"
    if len(head) >= 2:
        if not head[0] and head[1]:
            return "utf-16-be"
        if head[0] and not head[1]:
            return "utf-16-le"
    return "utf-8"


def read_text(path: str | Path) -> str:
    """The text of a regular, readable dataset file in its detected encoding (see the module doc)."""
    p = check_file(path)
    try:
        raw = p.read_bytes()
    except PermissionError:
        raise DatasetError(str(p), "cannot be read (permission denied)",
                           "make it readable (chmod a+r), or copy it somewhere you can read") from None
    except OSError as e:
        raise DatasetError(str(p), f"cannot be read ({e.strerror or e})", "check the file") from None
    enc = encoding_of(raw[:4])
    try:
        text = raw.decode(enc)
    except UnicodeDecodeError as e:
        shown = enc.removesuffix("-sig").upper()
        raise DatasetError(str(p), f"is not {shown} text ({e.reason} at byte {e.start}; encoding detected from its "
                           "first bytes)", "save it as UTF-8") from None
    return text.removeprefix("\ufeff")


def parse_json(text: str, path: str | Path, where: str = "") -> Any:
    """json.loads(text); nesting too deep for the parser is a DatasetError (JSON syntax errors propagate)."""
    try:
        return json.loads(text)
    except RecursionError:
        at = f"{where} " if where else ""
        raise DatasetError(str(path), f"{at}nests too deeply to read (deeper than Python's JSON parser can follow)",
                           DEEP_FIX) from None
