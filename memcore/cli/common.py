"""What the `memcore` commands share: the store and provider options, Settings and a Workbench from them."""

from __future__ import annotations

import typer

from memcore.embed import make_embedder
from memcore.retrievers import retriever_names
from memcore.settings import Settings
from memcore.store import LanceStore
from memcore.workbench import Workbench

RETRIEVER_HELP = " | ".join(retriever_names())  # the registered retrievers (memcore.retrievers)
LENIENT = typer.Option(False, "--lenient", help="accept a dataset file with missing sessions, empty turns or "
                       "dangling evidence (one warning each) instead of refusing it")
STORE = typer.Option(None, "--store", help="LanceDB path or URI (default .memcore or $MEMCORE_STORE)")
PROVIDER = typer.Option(None, "--provider", help="offline | openai | local | fake (default: openai when "
                        "OPENAI_API_KEY is set, else offline)")


LLM_CONCURRENCY = typer.Option(None, "--llm-concurrency", help="LLM requests in flight at once (default "
                               "$MEMCORE_LLM_CONCURRENCY, else 8 for HTTP providers)")


def settings_from(store: str | None, provider: str | None, embedder: str | None = None,
                  llm_concurrency: int | None = None) -> Settings:
    """Settings from the environment with the command's options (a None option keeps the environment's)."""
    s = Settings()
    changes = {k: v for k, v in {"store_uri": store, "llm_provider": provider, "embedder": embedder,
                                 "llm_concurrency": llm_concurrency}.items() if v}
    return s.with_(**changes) if changes else s


def workbench_from(store: str | None, provider: str | None, embedder: str | None = None,
                   llm_concurrency: int | None = None):
    """A Workbench on `settings_from` the command's options."""
    return Workbench(settings_from(store, provider, embedder, llm_concurrency))


def read_only_workbench(store: str | None):
    """A Workbench for a command that only reads (diff): its store opened read-only (a missing store or table is
    an error naming the fix, never created), no embedding or LLM-call cache written."""
    s = settings_from(store, None).with_(use_cache=False)
    emb = make_embedder(s, cached=False)
    return Workbench(s, embedder=emb, store=LanceStore(s.store_uri, dim=emb.dim, storage_options=s.storage_options,
                                                       read_only=True))
