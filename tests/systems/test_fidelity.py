"""docs/fidelity.md stays true for CoM, MemCoT, RecMem, the baselines and the reader prompts: every config
default it names is the code's, every role it names is registered, every row carries a status from the
header's vocabulary, and the reader table is what BaseSystem.reader picks."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from memcore.llm.roles import get_role, load_all
from memcore.llm.roles.readers import reader_for
from memcore.systems import make_config

DOC = Path(__file__).resolve().parents[2] / "docs" / "fidelity.md"
SECTIONS = {"CoM": ("com",), "MemCoT": ("memcot",), "RecMem": ("recmem",),
            "Baselines": ("naive_rag", "naive_rag_session", "full_context")}
STATUSES = ("faithful", "option", "our reading", "deviation", "memcore addition", "memcore's own")
ROLE = re.compile(r"`((?:answer|memcot|recmem)\w*)`")


def rows(title: str) -> list[list[str]]:
    """The table rows of one '## title' section, without the header row."""
    text = DOC.read_text(encoding="utf-8")
    m = re.search(rf"^## {re.escape(title)}\s*$(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert m, f"docs/fidelity.md has no '## {title}' section"
    out = [[c.strip() for c in line.strip().strip("|").split("|")] for line in m.group(1).splitlines()
           if line.startswith("|") and not line.startswith("|---")]
    return out[1:]


@pytest.mark.parametrize("title", [*SECTIONS, "Reader prompts"])
def test_every_row_has_a_labelled_status(title: str) -> None:
    for row in rows(title):
        assert len(row) == 4, f"{title}: not four columns: {row}"
        assert row[3].startswith(STATUSES), f"{title}: unlabelled status {row[3]!r} in {row}"


@pytest.mark.parametrize("title", list(SECTIONS))
def test_named_config_values_are_the_code_defaults(title: str) -> None:
    seen = 0
    for system in SECTIONS[title]:
        cfg = make_config(system)
        for row in rows(title):
            for field, value in re.findall(rf"`{system}\.(\w+)`(?: = (\"[^\"]*\"|[\w.+-]+))?", " ".join(row[1:3])):
                assert hasattr(cfg, field), f"{system}.{field} named in docs/fidelity.md is not a config field"
                if value:
                    want, got = value.strip('"'), getattr(cfg, field)
                    assert str(got) == want or (isinstance(got, float) and float(want) == got), (system, field,
                                                                                                got, want)
                    seen += 1
    assert seen >= 2


@pytest.mark.parametrize("title", [*SECTIONS, "Reader prompts"])
def test_named_roles_are_registered(title: str) -> None:
    names = {n for row in rows(title) for n in ROLE.findall(row[2])}
    assert names <= set(load_all()), names - set(load_all())


def test_the_reader_table_is_what_each_system_uses() -> None:
    table = rows("Reader prompts")
    assert {r[0].split(",")[0] for r in table} >= {"com", "memcot", "recmem", "xmemory", "memweaver"}
    for first, value, where, _ in table:
        parts = [p.strip() for p in first.split(",")]
        system, source = parts[0], parts[1]
        category = int(parts[2].split()[-1]) if len(parts) > 2 else 1
        role = ROLE.findall(where)[0]
        assert reader_for(system, "paper", source, category).role == role, first
        temperature = float(re.search(r"temperature ([\d.]+)", value).group(1))
        assert get_role(role).temperature == temperature, (first, role)
