"""Saved variants: a name for a variant, kept in the store (table `variants`), written `@NAME` wherever a system
name is accepted (`memcore eval --systems @fast`, `wb.ask("@fast", ...)`, every picker).

The store keeps the name, the canonical variant it stands for and when it was saved; it does not parse
variants (memcore.systems sits above the store): callers validate the variant first (Workbench.save_variant,
`memcore variants save`). Saving a name again replaces what it stands for; results record the canonical
variant, never the saved name, so a later change of the name never relabels a finished run.
"""

from __future__ import annotations

import re
import time
from typing import Any

import pyarrow as pa

from memcore.store.schema import match

TABLE = "variants"
SCHEMA = pa.schema([pa.field("name", pa.string()), pa.field("variant", pa.string()),
                    pa.field("system", pa.string()), pa.field("saved", pa.float64())])
PREFIX = "@"
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}")


def is_saved_name(name: str) -> bool:
    """Whether `name` is written as a saved variant (`@NAME`)."""
    return isinstance(name, str) and name.strip().startswith(PREFIX)


def check_name(name: str) -> str:
    """The bare name of `name` or `@name`, or ValueError (one line) saying what a name may hold."""
    bare = name.strip().removeprefix(PREFIX)
    if not NAME.fullmatch(bare):
        raise ValueError(f"{name!r} is not a variant name to save: use letters, digits, '_', '.', '+', '-' "
                         f"(1-64, starting with a letter or digit), written {PREFIX}NAME")
    return bare


def save_variant(store: Any, name: str, variant: str, system: str) -> None:
    """Keep `name` for the canonical `variant` of `system` (replacing what the name stood for)."""
    row = {"name": check_name(name), "variant": variant, "system": system, "saved": time.time()}
    t = store.table(TABLE, SCHEMA)
    t.checkout_latest()
    t.merge_insert("name").when_matched_update_all().when_not_matched_insert_all().execute([row])


def saved_variants(store: Any) -> dict[str, dict[str, Any]]:
    """Every saved variant, by bare name: {"variant", "system", "saved"} (read at the table's latest version)."""
    if TABLE not in store.table_names():
        return {}
    t = store.table(TABLE, SCHEMA)
    t.checkout_latest()
    rows = store.rows(TABLE, SCHEMA).to_dict("records")
    return {r["name"]: {"variant": r["variant"], "system": r["system"], "saved": r["saved"]}
            for r in sorted(rows, key=lambda r: r["name"])}


def saved_variant(store: Any, name: str) -> str:
    """The canonical variant `@name` stands for, or ValueError (one line) naming the saved ones."""
    bare = check_name(name)
    have = saved_variants(store)
    if bare not in have:
        raise ValueError(f"{PREFIX}{bare}: no saved variant of that name; saved: "
                         f"{', '.join(PREFIX + n for n in have) or '(none; memcore variants save NAME VARIANT)'}")
    return str(have[bare]["variant"])


def delete_variant(store: Any, name: str) -> bool:
    """Forget a saved variant; whether it existed."""
    bare = check_name(name)
    if bare not in saved_variants(store):
        return False
    store.table(TABLE, SCHEMA).delete(match(name=bare))
    return True
