"""`memcore eval --workers` / `memcore sweep --workers`: auto by default, a number as given, a bad value refused."""

from __future__ import annotations

from typer.testing import CliRunner

from memcore.cli import app

runner = CliRunner()


def test_a_bad_workers_value_is_refused_before_any_work(tmp_path) -> None:
    from memcore.errors import ConfigError

    store, out = str(tmp_path / "store"), str(tmp_path / "r.json")
    res = runner.invoke(app, ["eval", "-d", "demo", "-s", "naive_rag", "--workers", "two", "--store", store, "-o", out])
    assert res.exit_code == 2, res.output
    assert "workers must be 'auto' or a number >= 1, not 'two'" in res.output
    res = runner.invoke(app, ["sweep", "naive_rag", "-d", "demo", "--grid", "k=2,3", "--workers", "0", "--store", store,
                              "-o", out])  # a ConfigError, as the sweep's other refusals (the entry point: exit 2)
    assert isinstance(res.exception, ConfigError) and "not '0'" in str(res.exception)
    assert not (tmp_path / "r.json").exists() and not (tmp_path / "store").exists()


def test_evals_default_splits_the_systems_and_says_so(tmp_path, monkeypatch) -> None:
    import memcore.eval.processes as workers

    monkeypatch.delenv(workers.WORKERS_ENV, raising=False)  # the default, as a user has it
    monkeypatch.setattr(workers, "usable_cores", lambda: 2)
    out = tmp_path / "r.json"
    res = runner.invoke(app, ["eval", "-d", "demo", "-s", "naive_rag,com", "--limit", "2", "--embedder", "hashing",
                              "--provider", "offline", "--store", str(tmp_path / "s"), "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert "processes: 2 (auto: offline engine, 2 systems, 2 usable cores)" in res.output
    one = runner.invoke(app, ["eval", "-d", "demo", "-s", "naive_rag,com", "--limit", "2", "--embedder", "hashing",
                              "--provider", "offline", "--store", str(tmp_path / "s1"), "-o", str(tmp_path / "1.json"),
                              "--workers", "1"])
    assert one.exit_code == 0, one.output
    assert "processes:" not in one.output  # one process: nothing to say
