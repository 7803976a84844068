"""Fidelity rows stay true. Each system declares its rows on its class (`fidelity`, built-ins in
memcore/systems/<name>/fidelity.py); for every registered system (plugins included) every config default
its rows name is the code's, every role named is registered and every row carries a status from
docs/fidelity.md's vocabulary; the doc's hand-written reader table is what BaseSystem.reader picks. The
systems' sections of docs/fidelity.md are generated from the rows (scripts/gen_docs.py; tests/test_gen_docs.py
fails when the committed file is stale)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from memcore.llm.roles import get_role
from memcore.llm.roles import load_all as load_roles
from memcore.llm.roles.readers import reader_for
from memcore.systems import SYSTEMS, BaseSystem, SystemConfig, builtin_systems, load_all, register_system
from memcore.systems.parts import Fidelity, FidelityRow

DOC = Path(__file__).resolve().parents[2] / "docs" / "fidelity.md"
STATUSES = ("faithful", "option", "our reading", "deviation", "memcore addition", "memcore's own")
ROLE = re.compile(r"`([a-z][a-z0-9]*(?:_[a-z0-9]+)*)`")  # a bare backticked name in "where in the code"


HEADER = ["paper step", "value", "where in the code", "status"]


def sections() -> dict[str, list[list[str]]]:
    """Every '## title' section of the doc with a fidelity table (HEADER): its rows, without the header row."""
    text = DOC.read_text(encoding="utf-8")
    out = {}
    for m in re.finditer(r"^## (.+?)\s*$(.*?)(?=^## |\Z)", text, re.M | re.S):
        table = [[c.strip() for c in line.strip().strip("|").split("|")] for line in m.group(2).splitlines()
                 if line.startswith("|") and not line.startswith("|---")]
        if table and table[0] == HEADER:
            out[m.group(1)] = table[1:]
    return out


def rows(title: str) -> list[list[str]]:
    """The table rows of one '## title' section, without the header row."""
    found = sections()
    assert title in found, f"docs/fidelity.md has no '## {title}' section with a table"
    return found[title]


def with_rows() -> list[str]:
    """The registered systems that declare fidelity rows, in rank order."""
    return [n for n, cls in load_all().items() if cls.fidelity is not None]


def config_problems(system: str, config: SystemConfig, cells: list[str]) -> tuple[list[str], int]:
    """Where `system.field` = value named in the cells is not the config's default; and how many were checked."""
    problems, seen = [], 0
    for field, value in re.findall(rf"`{system}\.(\w+)`(?: = (\"[^\"]*\"|[\w.+-]+))?", " ".join(cells)):
        if not hasattr(config, field):
            problems.append(f"{system}.{field} is not a config field")
        elif value:
            want, got = value.strip('"'), getattr(config, field)
            if not (str(got) == want or (isinstance(got, float) and float(want) == got)):
                problems.append(f"{system}.{field}: the rows say {want}, the code's default is {got!r}")
            seen += 1
    return problems, seen


def row_problems(cls: type[BaseSystem]) -> tuple[list[str], int]:
    """What is wrong with a system's rows (status, named config defaults, named roles); config values checked."""
    assert cls.fidelity is not None
    problems, roles = [], set(load_roles())
    for row in cls.fidelity.rows:
        if not row.status.startswith(STATUSES):
            problems.append(f"unlabelled status {row.status!r} in {row.step!r}")
        problems += [f"role `{r}` is not registered ({row.step!r})" for r in ROLE.findall(row.where) if r not in roles]
    bad, seen = config_problems(cls.name, cls.config_class(), [r.value + " " + r.where for r in cls.fidelity.rows])
    return problems + bad, seen


@pytest.mark.parametrize("system", with_rows())
def test_every_systems_rows_name_its_code(system: str) -> None:
    cls = load_all()[system]
    problems, seen = row_problems(cls)
    assert not problems, (system, problems)
    if cls.config_class is not SystemConfig:  # a system with its own settings names at least one default
        assert seen >= 1, f"{system}'s fidelity rows name none of its config defaults"


def test_the_paper_systems_rows_name_their_defaults() -> None:
    seen = {n: row_problems(load_all()[n])[1] for n in ("com", "memcot", "recmem", "xmemory", "memweaver")}
    assert all(v >= 2 for v in seen.values()) and seen["xmemory"] >= 10 and seen["memweaver"] >= 10, seen


def test_every_builtin_paper_system_has_rows() -> None:
    builtins = builtin_systems()
    sections = {load_all()[n].fidelity.section for n in with_rows() if n in builtins}
    assert {"CoM", "xMemory", "MemWeaver", "MemCoT", "RecMem", "Baselines"} <= sections


def test_the_shared_sections_name_the_code() -> None:
    """Rows of no one system (common rows, reader prompts): statuses, roles and any `system.field` defaults."""
    owned = {load_all()[n].fidelity.section for n in with_rows()}
    roles, seen = set(load_roles()), 0
    for title, table in sections().items():
        if title in owned:
            continue
        for row in table:
            assert row[3].startswith(STATUSES), f"{title}: unlabelled status {row[3]!r} in {row}"
            assert set(ROLE.findall(row[2])) <= roles, (title, set(ROLE.findall(row[2])) - roles)
            for name, cls in load_all().items():
                problems, n = config_problems(name, cls.config_class(), row[1:])
                assert not problems, (title, problems)
                seen += n
    assert seen >= 1


def test_a_plugin_systems_rows_are_checked_too() -> None:
    """A system from outside memcore is found through the registry: its wrong default and unknown role are
    reported, its right ones pass."""
    @dataclass
    class ProbeConfig(SystemConfig):
        depth: int = 3

    def probe(where: str) -> type[BaseSystem]:
        class Probe(BaseSystem):
            name = "probe_fidelity_plugin"
            config_class = ProbeConfig
            fidelity = Fidelity("Probe", (FidelityRow("Depth", "3 hops", where, "faithful"),))
        return Probe

    register_system(good := probe("`probe_fidelity_plugin.depth` = 3; `answer`"))
    try:
        assert "probe_fidelity_plugin" in with_rows() and row_problems(good) == ([], 1)
    finally:
        SYSTEMS.pop("probe_fidelity_plugin")
    problems, _ = row_problems(probe("`probe_fidelity_plugin.depth` = 4; `no_such_role`"))
    assert len(problems) == 2 and "default is 3" in problems[1] and "no_such_role" in problems[0]


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
