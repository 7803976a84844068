"""Run lines (issue 37): a run picker never lets two configurations read alike; each line names the variants as
they ran, the dataset, retriever, model and date."""

from __future__ import annotations

from memcore.eval.run_labels import ran_as, run_label, run_variants
from memcore.systems.base import config_to_dict
from memcore.systems.variants import parse_variant


def record(run_id: str, name: str, ran: str, started: float = 1_795_000_000.0) -> dict:
    cfg = config_to_dict(parse_variant(ran).config())
    return {"run_id": run_id, "systems": [name], "dataset": "demo /x/memcore/datasets/demo/demo.json",
            "started": started, "state": "done",
            "payload": {"fingerprint": {"configs": {name: cfg}, "retriever": "dense", "model": "offline-engine"}}}


def test_runs_of_one_system_under_other_settings_read_differently() -> None:
    plain, swept = record("eval-1", "com", "com"), record("eval-2", "com", "com[beta=0.3]")
    assert run_variants(plain) == {"com": "com"}
    assert run_variants(swept) == {"com": "com[beta=0.3]"}  # settings given beside the name are named
    a, b = run_label(plain), run_label(swept)
    assert "com[beta=0.3]" in b and "com[beta=0.3]" not in a
    for part in ("demo", "retriever dense", "offline-engine", "2026-", "UTC", "done"):
        assert part in a
    assert a.split(" · ")[:-1] != b.split(" · ")[:-1]  # different without the run id too


def test_a_preset_keeps_its_name_and_unknown_names_pass_through() -> None:
    preset = parse_variant("com:no-framework").name if _has_preset() else "com[beta=0.8]"
    assert ran_as(preset, config_to_dict(parse_variant(preset).config())) == preset
    assert ran_as("not_registered", {"x": 1}) == "not_registered"
    assert ran_as("com", None) == "com"


def _has_preset() -> bool:
    try:
        parse_variant("com:no-framework")
    except ValueError:
        return False
    return True
