"""The store on object storage, for real: an S3-compatible server (moto's server mode) on 127.0.0.1.

Ingest, ask and eval run against s3://bucket/path with the endpoint, path-style access and dummy
credentials given through $MEMCORE_STORAGE_OPTIONS and the AWS_* variables LanceDB reads itself;
two processes write at once; the secret key never shows up in output, the bucket or the exports.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conftest import make_conversation

moto_server = pytest.importorskip("moto.server", reason="moto[server] is in requirements-dev.txt")
boto3 = pytest.importorskip("boto3")

from memcore.cli import app  # noqa: E402
from memcore.errors import ConfigError, StoreError  # noqa: E402
from memcore.eval.report import diff_results  # noqa: E402
from memcore.settings import Settings, storage_secrets  # noqa: E402
from memcore.store import LanceStore  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SECRET = "s3cr3t-" + uuid.uuid4().hex  # the dummy secret key: must never leave the process
KEY_ID = "AKIAMEMCORETEST"
runner = CliRunner()


@pytest.fixture(scope="module")
def s3():
    """A moto S3 server on a free port of 127.0.0.1 for this module, and a client to inspect it."""
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one line per request otherwise
    srv = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    srv.start()
    host, port = srv.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    client = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=KEY_ID, aws_secret_access_key=SECRET,
                          region_name="us-east-1")
    yield endpoint, client
    srv.stop()


@pytest.fixture
def bucket(s3, monkeypatch, tmp_path) -> str:
    """A fresh bucket; the environment points memcore at it (options JSON + AWS_* credentials)."""
    endpoint, client = s3
    name = "b" + uuid.uuid4().hex[:12]
    client.create_bucket(Bucket=name)
    for k, v in s3_env(endpoint).items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("MEMCORE_STORE", f"s3://{name}/memcore")
    monkeypatch.setenv("MEMCORE_EMBEDDER", "hashing")
    monkeypatch.setenv("MEMCORE_LLM_PROVIDER", "offline")
    monkeypatch.setenv("MEMCORE_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    return name


def s3_env(endpoint: str) -> dict[str, str]:
    """Endpoint and path-style access as memcore storage options; credentials as AWS_* variables."""
    opts = {"aws_endpoint": endpoint, "allow_http": "true", "aws_region": "us-east-1",
            "aws_virtual_hosted_style_request": "false"}
    return {"MEMCORE_STORAGE_OPTIONS": json.dumps(opts), "AWS_ACCESS_KEY_ID": KEY_ID,
            "AWS_SECRET_ACCESS_KEY": SECRET}


def objects(client, bucket: str) -> dict[str, bytes]:
    """Every object of a bucket, by key."""
    keys = [o["Key"] for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket)
            for o in page.get("Contents", [])]
    return {k: client.get_object(Bucket=bucket, Key=k)["Body"].read() for k in keys}


def no_secret(where: str, data: str | bytes) -> None:
    """The secret key is nowhere in `data`."""
    raw = data.encode() if isinstance(data, str) else data
    assert SECRET.encode() not in raw, f"the secret key leaked into {where}"


def test_ingest_ask_eval_on_s3_match_a_local_store(bucket, s3, tmp_path, monkeypatch):
    _, client = s3
    ing = runner.invoke(app, ["ingest", "demo", "-s", "naive_rag,recmem"])
    assert ing.exit_code == 0, ing.output
    assert f"store: s3://{bucket}/memcore" in ing.output
    again = runner.invoke(app, ["ingest", "demo", "-s", "naive_rag"])
    assert "already complete" in again.output  # the checkpoint was read back from the bucket
    ask = runner.invoke(app, ["ask", "demo:q0", "-s", "naive_rag", "-r", "hybrid"])
    assert ask.exit_code == 0, ask.output
    assert "gold:" in ask.output and "recall:" in ask.output
    ev = runner.invoke(app, ["eval", "--dataset", "demo", "--systems", "naive_rag,recmem", "--out", "s3run.json"])
    assert ev.exit_code == 0, ev.output
    keys = objects(client, bucket)
    tables = {k.split("/")[1] for k in keys}
    assert {"turns.lance", "results.lance", "checkpoints.lance", "events.lance"} <= tables, tables
    assert any(t.startswith("mem_") for t in tables), (tables, ing.output)
    for k, data in keys.items():
        no_secret(f"s3://{bucket}/{k}", data)
    for out in (ing.output, again.output, ask.output, ev.output):
        no_secret("the CLI output", out)
    for f in tmp_path.rglob("*"):
        if f.is_file():
            no_secret(str(f), f.read_bytes())

    monkeypatch.setenv("MEMCORE_STORE", str(tmp_path / "local"))  # the same run on a local folder
    local = runner.invoke(app, ["eval", "--dataset", "demo", "--systems", "naive_rag,recmem", "--out", "local.json"])
    assert local.exit_code == 0, local.output
    s3_res, local_res = (json.loads((tmp_path / f).read_text()) for f in ("s3run.json", "local.json"))
    assert s3_res["systems"]["recmem"]["overall"]["n"] > 0
    assert diff_results(s3_res, local_res, ignore=frozenset({"store", "run_id", "out"})) == []


def new_bucket(client) -> str:
    """Create a bucket with a fresh name."""
    name = "b" + uuid.uuid4().hex[:12]
    client.create_bucket(Bucket=name)
    return name


def test_lancedb_reads_its_own_aws_variables(s3, monkeypatch):
    """Without $MEMCORE_STORAGE_OPTIONS, LanceDB's own AWS_* variables reach the server (the README's recipe)."""
    endpoint, client = s3
    name = new_bucket(client)
    monkeypatch.delenv("MEMCORE_STORAGE_OPTIONS", raising=False)
    for k, v in {"AWS_ENDPOINT": endpoint, "AWS_ALLOW_HTTP": "true", "AWS_REGION": "us-east-1",
                 "AWS_ACCESS_KEY_ID": KEY_ID, "AWS_SECRET_ACCESS_KEY": SECRET}.items():
        monkeypatch.setenv(k, v)
    conv = make_conversation("envconv")
    LanceStore(f"s3://{name}/store", dim=8).save_conversation(conv)
    assert LanceStore(f"s3://{name}/store", dim=8).load_conversation("envconv").turns == conv.turns
    assert any(k.startswith("store/conversations.lance/") for k in objects(client, name))


def test_a_store_that_cannot_be_reached_fails_clearly_without_the_secret():
    opts = {"aws_endpoint": "http://127.0.0.1:9", "allow_http": "true", "aws_region": "us-east-1",
            "aws_access_key_id": KEY_ID, "aws_secret_access_key": SECRET, "connect_timeout": "1s"}
    with pytest.raises(StoreError) as e:
        LanceStore("s3://nowhere/store", dim=8, storage_options=opts).table("turns")
    assert "s3://nowhere/store" in str(e.value) and "MEMCORE_STORAGE_OPTIONS" in str(e.value)
    no_secret("the error message", str(e.value))
    assert e.value.__cause__ is None and e.value.__suppress_context__  # no chained traceback to print it either


def test_storage_options_setting(monkeypatch):
    monkeypatch.setenv("MEMCORE_STORAGE_OPTIONS", json.dumps({"allow_http": True, "aws_secret_access_key": SECRET}))
    s = Settings()
    assert dict(s.storage_options) == {"allow_http": "true", "aws_secret_access_key": SECRET}
    no_secret("repr(Settings())", repr(s))
    assert SECRET in storage_secrets(dict(s.storage_options)) and "true" not in storage_secrets(dict(s.storage_options))
    monkeypatch.setenv("MEMCORE_STORAGE_OPTIONS", "allow_http=true")
    with pytest.raises(ConfigError, match="not valid JSON.*Fix"):
        Settings()
    monkeypatch.setenv("MEMCORE_STORAGE_OPTIONS", '["allow_http"]')
    with pytest.raises(ConfigError, match="JSON object"):
        Settings()


WRITER = r'''
import sys
from memcore.store import LanceStore
from memcore.types import MemoryItem
me, uri = sys.argv[1], sys.argv[2]
st = LanceStore(uri, dim=8)
for b in range(6):
    rows = [{"system": "s", "question_id": f"{me}{b}-{j}", "conv_id": me} for j in range(4)]
    rows.append({"system": "s", "question_id": f"shared{b}", "conv_id": "shared"})  # both processes write it
    st.save_results("run", rows)
    items = [MemoryItem(id=f"{me}-{b}-{j}", kind="episode", text=f"{me} {b} {j}", system="s", conv_id=me,
                        embedding=[1.0] * 8, sources=[f"D1:{j}"], updated_step=b) for j in range(3)]
    st.commit("space", "s", me, b, items, [], [], {"b": b})
print("done", me)
'''


def test_two_processes_write_at_once_without_losing_or_duplicating_rows(bucket, s3):
    """Two processes commit memory and upsert results into the same tables of one S3 store at once: LanceDB's
    commits rebase on each other through the server's conditional writes, so every row arrives once."""
    uri = f"s3://{bucket}/memcore"
    LanceStore(uri, dim=8).table("results")  # the tables exist before the race (creating one is a race too)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, me, uri], env=env, cwd=ROOT, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for me in ("A", "B")]
    outs = [p.communicate(timeout=300) for p in procs]
    for p, (out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err[-3000:]
        no_secret("a writer's output", out + err)
    st = LanceStore(uri, dim=8)
    keys = st.rows("results", columns=["key"])["key"].tolist()
    want = {f"run|s|{me}{b}-{j}" for me in "AB" for b in range(6) for j in range(4)} | \
        {f"run|s|shared{b}" for b in range(6)}
    assert sorted(keys) == sorted(want)  # none lost, none twice
    for me in "AB":
        assert len(st.items("space", me, "episode")) == 18
        assert st.checkpoint("space", me)["state"] == {"b": 5}
    assert len(st.rows("mem_episode")) == 36 and len(st.rows("links")) == 36


HOLDER = """import sys, time
from memcore.store import LanceStore
held = LanceStore(sys.argv[1], dim=int(sys.argv[3])).lease(sys.argv[2], "demo", "memory naive_rag/demo")
held.__enter__()
print("held", flush=True)
time.sleep(300)
"""


def test_a_rerun_after_a_killed_writer_says_it_waits_for_the_stale_lease(bucket, s3, monkeypatch):
    """A writer killed on object storage leaves its lease row until it lapses: the rerun says so, repeatedly
    (whose lease, since when, when it lapses), then takes it over and builds the memory (issue 24 item 5)."""
    from memcore.embed import HashingEmbedder
    from memcore.workbench import Workbench

    monkeypatch.setenv("MEMCORE_LEASE_TTL_S", "6")
    monkeypatch.setenv("MEMCORE_LEASE_REPORT_S", "1")
    uri = f"s3://{bucket}/memcore"
    wb = Workbench(Settings())
    space = wb.space("naive_rag", wb.load_demo())
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, uri, space, str(HashingEmbedder().dim)],
                              env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert holder.stdout.readline().strip() == "held", holder.stderr.read()[-2000:]
    holder.kill()  # kill -9: no release, no renewal
    holder.wait(30)
    res = runner.invoke(app, ["ingest", "demo", "-s", "naive_rag"])
    assert res.exit_code == 0, res.output
    lines = [ln for ln in res.output.splitlines() if ln.startswith("waiting: ")]
    assert len(lines) >= 2, res.output
    assert f"pid {holder.pid}" in lines[0] and "lapses in" in lines[0] and "since 20" in lines[0]
    assert "naive_rag on demo" in res.output
    no_secret("the waiting lines", res.output)
