"""No credential from an endpoint URL leaves the process (issue 24 item 3): a base URL carrying userinfo, every
query parameter the reliability battery found leaking, and a `#token=` fragment is used for a real ingest, ask
and eval over HTTP (the mock OpenAI server), one failing call, and the Export page's bundles; then every line
printed, every file under the store (tables, caches), the results JSON/CSV and the exported JSON/CSV/HTML files
are searched for each secret value. Redaction is default-deny: a parameter nobody listed is masked too."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from memcore.cli import app
from memcore.llm.mock_server import MockOpenAIServer
from memcore.llm.redact import redact, redact_url

NAMES = ["api_token", "auth_token", "auth", "password", "pass", "secret", "client_secret", "X-Amz-Signature",
         "X-Amz-Credential", "code", "session", "jwt", "never_listed_param"]
SECRETS = {n: f"LEAK{i:02d}{n.replace('-', '').upper()}Z" for i, n in enumerate(NAMES)}
USER, PASSWORD, FRAGMENT = "LEAKUSERQ", "LEAKPASSWORDQ", "LEAKFRAGMENTQ"


def _url(port: int) -> str:
    query = "&".join(f"{n}={v}" for n, v in SECRETS.items())
    return f"http://{USER}:{PASSWORD}@127.0.0.1:{port}/v1?api-version=2024-06-01&{query}#token={FRAGMENT}"


def _leaks(text: str | bytes) -> list[str]:
    data = text.encode() if isinstance(text, str) else text
    return [s for s in [*SECRETS.values(), USER, PASSWORD, FRAGMENT] if s.encode() in data]


def test_redact_url_masks_every_value_but_the_harmless_ones():
    out = redact_url(_url(8088))
    assert _leaks(out) == [] and "api-version=2024-06-01" in out and "127.0.0.1:8088/v1" in out
    assert all(f"{n}=***" in out for n in NAMES) and out.endswith("#token=***") and "//***@127.0.0.1" in out
    assert redact(f"cannot connect to {_url(1)} (ConnectError)").endswith("(ConnectError)")
    assert redact("s3://bucket/prefix") == "s3://bucket/prefix" and redact("/tmp/store") == "/tmp/store"
    assert _leaks(redact(f"body: jwt={SECRETS['jwt']}&password={SECRETS['password']}")) == []


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMCORE_STORE", str(tmp_path / "store"))
    monkeypatch.setenv("MEMCORE_EMBEDDER", "hashing")
    monkeypatch.setenv("MEMCORE_LLM_PROVIDER", "openai")
    monkeypatch.setenv("MEMCORE_LLM_MODEL", "mock-model")
    return tmp_path


def test_no_secret_of_the_base_url_in_any_output_store_file_cache_or_export(env, monkeypatch):
    runner = CliRunner()
    outputs: list[str] = []
    with MockOpenAIServer(responder=lambda req: "Maya ran in the park.") as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", _url(int(srv.base_url.split(":")[2].split("/")[0])))
        for args in (["ingest", "demo", "-s", "naive_rag"], ["ask", "demo:q0", "-s", "naive_rag"],
                     ["eval", "--dataset", "demo", "--systems", "naive_rag", "--limit", "2", "--no-judge",
                      "--out", str(env / "results.json")]):
            res = runner.invoke(app, args)
            outputs.append(res.output)
            assert res.exit_code == 0, res.output
        assert srv.received >= 2  # the calls went over HTTP to this URL (eval's answers come from the cache)
    res = runner.invoke(app, ["ask", "what did Maya do?", "-s", "naive_rag"])  # the server is gone: an error
    message = str(res.exception)  # what memcore.cli.main prints after "error: "
    outputs += [res.output, message]
    assert res.exit_code != 0 and "cannot connect to http://***@127.0.0.1" in message and "v1?" in message

    from memcore.eval.bundles import benchmark_bundle
    from memcore.eval.run_record import list_runs
    from memcore.settings import Settings
    from memcore.viz.bundles import replay_bundle
    from memcore.viz.export import standalone_html, write_bundle
    from memcore.workbench import Workbench
    from ui.export_view import stored_run

    wb = Workbench(Settings(llm_check=False))
    conv = wb.load_demo()
    for rec in list_runs(wb.store):
        results = stored_run(wb, rec)
        obj, table, sections = benchmark_bundle(results)
        write_bundle(env / "exports", "bench", obj, table, standalone_html("bench", sections,
                                                                         f"memcore export · {wb.provider_label}"))
    from memcore.viz.replay import build_replay

    mem = wb.memory("naive_rag", conv)
    data = build_replay("naive_rag", mem.events(), mem.versions(), mem.llm_calls(), len(conv.turns) + 1)
    obj, table, sections = replay_bundle({"naive_rag": data})
    write_bundle(env / "exports", "replay", obj, table, standalone_html("replay", sections, wb.provider_label))

    printed = [(i, _leaks(o)) for i, o in enumerate(outputs) if _leaks(o)]
    assert printed == [], printed
    files = [p for p in env.rglob("*") if p.is_file()]
    assert any(p.suffix == ".html" for p in files) and any(p.name == "results.json" for p in files)
    assert any("cache" in p.parts for p in files) and any("llm_calls.lance" in p.parts for p in files)
    leaked = {str(p.relative_to(env)): _leaks(p.read_bytes()) for p in files if _leaks(p.read_bytes())}
    assert leaked == {}
    assert "via http://***@127.0.0.1" in json.loads((env / "results.json").read_text())["engine"]
