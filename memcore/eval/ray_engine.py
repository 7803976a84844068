"""Ray as the engine of `memcore eval --engine ray`: one Ray task per conversation or (conversation, system).

    run_eval(settings, "locomo", "locomo10.json", ["naive_rag", "<system>"], engine="ray", ray_address=None)

(TASK_UNIT "auto": per conversation when there are at least as many conversations as cluster CPUs,
else per (conversation, system).) Each task builds its memories and answers their questions with `evaluate_conversation`, the same code
as the local engine, against the store URI in `settings` (every worker must reach it: a shared
path on one machine, an object-store URI on a cluster), and saves result rows as it goes. The
results are then assembled from the stored rows, so they equal the local engine's field for field.

Progress messages travel through a `ray.util.queue.Queue`; a stop request through a small actor the
tasks poll. A failed task (an exception, or a worker that died twice) keeps what it stored before
failing (the rows saved as its questions finished, each memory up to its last checkpoint) and nothing
after; the driver reports one error naming its conversation, systems and cause, the other tasks go on
and the run ends incomplete; a rerun answers only the questions without a row, each memory resuming
from its checkpoint. Multi-conversation datasets (a BEAM scale folder: one conversation per chat;
LoCoMo-Plus: one stitched conversation per item) are one task per conversation like any other
(tests/eval/test_ray_datasets.py).
`ray_address=None` starts a local Ray (its workers at the local engine's priority, niceness 0: see
WORKER_NICENESS) or joins $RAY_ADDRESS, Ray's own convention; memcore must be
importable on every node (same version), with the embedder's packages installed.
"""

from __future__ import annotations

import logging
import os
import socket
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memcore.errors import ConfigError
from memcore.eval.evaluate import evaluate_conversation
from memcore.eval.run_record import get_run
from memcore.serialize import conversation_from_json, conversation_to_json
from memcore.settings import Settings
from memcore.types import Conversation
from memcore.workbench import Workbench

StopCb = Callable[[], bool]
INSTALL_HINT = "pip install -r requirements-ray.txt"
STOP_POLL_SECONDS = 1.0
# "auto": one task per conversation when there are at least as many conversations as cluster CPUs (no
# turn embedded twice, fewer tasks: 1.34x faster than per system with 2 conversations on 2 CPUs, see
# bench/eval_workers.py), else one per (conversation, system) so every CPU has work; "system" or
# "conversation" force one.
TASK_UNIT = "auto"
ENV_PASSED = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")  # workers embed offline like the driver
# The local Ray's workers run at this niceness. Ray's default, 15, keeps its driver responsive; here the
# workers do all the work, and on a shared machine nice-15 workers starve behind everyone's nice-0
# processes: LoCoMo-Plus items 0-7 (two systems) took 191 s on Ray vs 38 s locally at load 16 on 2 cores
# (bench/eval_workers.py), 153 s vs 55 s with 0 (one noisy run each; Ray stays slower on one loaded machine:
# its start-up and per-task overhead). 0 is the local engine's priority. A cluster joined with --ray-address
# keeps its own setting; $RAY_worker_niceness overrides this one.
WORKER_NICENESS = 0
NICENESS_ENV = "RAY_worker_niceness"
_CACHE: dict[str, Any] = {}  # per Ray worker process: one Workbench per settings, reused across tasks


def import_ray() -> Any:
    """The `ray` module, or a ConfigError naming the install command when Ray is not installed."""
    try:
        import ray
    except ImportError as e:
        raise ConfigError(f"--engine ray needs Ray, which is not installed ({e}). Fix: `{INSTALL_HINT}`, "
                          "or use --engine local") from e
    return ray


def connect(address: str | None, num_cpus: int | None = None) -> bool:
    """Join the Ray cluster at `address` (None: start a local one, or join $RAY_ADDRESS); True when
    this call started or joined it (and so should shut it down), False when Ray was already up."""
    ray = import_ray()
    if ray.is_initialized():
        return False
    env = {k: os.environ[k] for k in ENV_PASSED if k in os.environ}
    kwargs: dict[str, Any] = {"log_to_driver": False, "logging_level": logging.WARNING,
                              "include_dashboard": False, "runtime_env": {"env_vars": env} if env else None}
    if not address and not os.environ.get("RAY_ADDRESS"):
        kwargs["num_cpus"] = num_cpus
        if NICENESS_ENV not in os.environ:  # the user's own setting wins
            kwargs["_system_config"] = {"worker_niceness": WORKER_NICENESS}
    try:
        with warnings.catch_warnings():  # Ray starts its daemons with fork + exec: nothing of lancedb runs there
            warnings.filterwarnings("ignore", message="lancedb fork support", category=RuntimeWarning)
            ray.init(address=address or None, **kwargs)
    except (ConnectionError, RuntimeError, ValueError) as e:
        raise ConfigError(f"cannot reach the Ray cluster at {address or os.environ.get('RAY_ADDRESS') or 'local'}: "
                          f"{e}. Fix: pass the head node's address with --ray-address HOST:6379 (or "
                          "ray://HOST:10001), or leave it out to start a local Ray") from e
    return True


def worker_settings(settings: Settings) -> Settings:
    """Settings for the tasks: a local store path made absolute (Ray workers start in other folders)."""
    uri = settings.store_uri
    if "://" in uri:
        return settings
    return settings.with_(store_uri=str(Path(uri).expanduser().resolve()))


class _Flag:
    """A stop flag shared by the driver and the tasks (a Ray actor)."""

    def __init__(self) -> None:
        self.value = False

    def set(self) -> None:
        self.value = True

    def get(self) -> bool:
        return self.value


def _task(settings: Settings, conv_json: str, todo_ids: dict[str, list[str]], job: dict, queue: Any,
          flag: Any) -> int:
    """One Ray task: evaluate some systems on one conversation, reporting through `queue`."""
    import ray


    key = repr(settings)
    if key not in _CACHE:
        _CACHE.clear()
        _CACHE[key] = Workbench(settings)
        if "torch" in sys.modules:  # Ray sets OMP_NUM_THREADS to the task's CPUs; torch follows it
            sys.modules["torch"].set_num_threads(max(1, int(os.environ.get("OMP_NUM_THREADS", "1"))))
    wb = _CACHE[key]
    if get_run(wb.store, job["run_id"]) is None:  # written by the driver before any task starts
        raise ConfigError(f"the store at {settings.store_uri} as seen from node {socket.gethostname()} does not "
                          f"hold run {job['run_id']}: the workers do not share the driver's store (or its record "
                          "could not be written). Fix: pass --store with a URI every node reaches (s3://..., "
                          "gs://..., az://..., or a shared file system path)")
    conv = conversation_from_json(conv_json)
    by_id = {q.id: q for q in conv.questions}
    todo = {s: [by_id[i] for i in ids] for s, ids in todo_ids.items()}
    seen = {"at": 0.0, "stop": False}

    def stop() -> bool:
        if not seen["stop"] and time.monotonic() - seen["at"] > STOP_POLL_SECONDS:
            seen["stop"], seen["at"] = bool(ray.get(flag.get.remote())), time.monotonic()
        return seen["stop"]

    return evaluate_conversation(wb, conv, todo, job, queue.put, stop)


def run_ray(settings: Settings, convs: list[Conversation], todo: dict, job: dict, on_msg: Callable[[dict], None],
            should_stop: StopCb, address: str | None = None, num_cpus: int | None = None) -> None:
    """Evaluate every pending conversation (or (conversation, system), see TASK_UNIT) as a Ray task;
    messages go to `on_msg` as they come.

    A task that fails is reported as one `phase: error` message naming its conversation, systems and cause
    (`questions`: how many it was given; the rows it saved before failing stay); the other tasks go on.
    """
    ray = import_ray()
    from ray.util.queue import Empty, Queue

    work = [(c, p) for c in sorted(convs, key=lambda c: -len(c.turns))  # long ones first: they finish last
            if (p := {name: [q.id for q in qs] for name, qs in todo[c.id].items() if qs})]
    if not work:
        return  # everything is stored: no cluster needed
    started = connect(address, num_cpus)
    try:
        per_conv = TASK_UNIT == "conversation" or (
            TASK_UNIT == "auto" and len(work) >= int(ray.cluster_resources().get("CPU", 1)))
        plan = [(c, p) for c, p in work] if per_conv else [(c, {n: ids}) for c, p in work for n, ids in p.items()]
        task = ray.remote(num_cpus=1, max_retries=1)(_task)
        flag = ray.remote(num_cpus=0)(_Flag).remote()
        queue = Queue(actor_options={"num_cpus": 0})
        cfg = ray.put(worker_settings(settings))
        job_ref = ray.put(job)
        units: dict[Any, dict] = {}
        conv_refs: dict[str, Any] = {}
        for c, group in plan:
            if c.id not in conv_refs:
                conv_refs[c.id] = ray.put(conversation_to_json(c))
            ref = task.remote(cfg, conv_refs[c.id], group, job_ref, queue, flag)
            units[ref] = {"system": ",".join(group), "conv_id": c.id, "questions": sum(map(len, group.values()))}

        def drain() -> None:
            while True:
                try:
                    batch = queue.get_nowait_batch(max(1, queue.qsize()))
                except Empty:
                    return
                for msg in batch:
                    on_msg(msg)

        pending, stopping = list(units), False
        while pending:
            ready, pending = ray.wait(pending, num_returns=len(pending), timeout=0.2)
            drain()
            if not stopping and should_stop():
                stopping = True
                flag.set.remote()
            for ref in ready:
                try:
                    ray.get(ref)
                except Exception as e:
                    cause = getattr(e, "cause", None) or e
                    on_msg({"phase": "error", **units[ref], "error": f"Ray task failed: {type(cause).__name__}: "
                            f"{str(cause).splitlines()[0] if str(cause) else ''}"})
        drain()
    finally:
        if started:
            ray.shutdown()
