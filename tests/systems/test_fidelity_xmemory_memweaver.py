"""docs/fidelity.md stays true for xMemory and MemWeaver: every config value it names is the code's default,
every role it names is registered, and no row is left without a status."""

from __future__ import annotations

import re

import pytest

from memcore.llm.roles import load_all
from memcore.systems.memweaver import MemWeaverConfig
from memcore.systems.xmemory import XMemoryConfig
from tests.systems.test_fidelity import rows as _rows

CONFIGS = {"xmemory": XMemoryConfig(), "memweaver": MemWeaverConfig()}
SECTIONS = {"xmemory": "xMemory", "memweaver": "MemWeaver"}


@pytest.mark.parametrize("system", sorted(SECTIONS))
def test_named_config_values_are_the_code_defaults(system: str) -> None:
    cfg, seen = CONFIGS[system], 0
    for row in _rows(SECTIONS[system]):
        assert len(row) == 4 and row[3], f"row without a status: {row}"
        for field, value in re.findall(rf"`{system}\.(\w+)`(?: = (\"[^\"]*\"|[\w.+-]+))?", " ".join(row[1:3])):
            assert hasattr(cfg, field), f"{system}.{field} named in docs/fidelity.md is not a config field"
            if value:
                want = value.strip('"')
                got = getattr(cfg, field)
                assert str(got) == want or (isinstance(got, float) and float(want) == got), (field, got, want)
                seen += 1
    assert seen >= 10


@pytest.mark.parametrize("system", sorted(SECTIONS))
def test_named_roles_are_registered(system: str) -> None:
    roles = load_all()
    names = {n for row in _rows(SECTIONS[system]) for n in re.findall(r"`((?:mw|xmemory|episode)_\w+)`", row[2])}
    assert names and names <= set(roles), names - set(roles)
