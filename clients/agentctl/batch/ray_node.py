"""What a Ray task runs on the node it lands on: :func:`run_attempt` (no Ray import here).

One attempt of one task: connect to the driver's channel (:mod:`agentctl.batch.ray_channel`:
the credential values, progress out, stop requests in), prepare the workspace under the
node's work folder, run the task with :func:`~agentctl.batch.execute.execute_task` against
this worker's private ``agentd serve --stdio`` daemon, then read the artifacts back and
return them with the record. The driver alone writes the output folder (see
``docs/batch.md``, "Ray"), so a lost node's half-done attempt never touches it.

The node's work folder (``--ray-work-dir``, default ``$TMPDIR/agentd-batch``) holds, per
batch, ``work/ID`` (the task's workspace, kept like ``DIR/work/ID`` of the local engine),
the shared bare clones and the daemons' logs; the task's artifact folder there is removed
once its files are read.

A Ray worker process runs one task at a time; it keeps one event loop (in a thread) and one
daemon across the tasks it runs, started again when the credentials it was given change or
it exited. The daemon is the worker's child on a pipe: it ends with the worker.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

from agentctl.batch.engine import BatchSettings, StopRequest, TaskCaps, TaskJob
from agentctl.batch.execute import execute_task
from agentctl.batch.ray_channel import node_session
from agentctl.batch.records import record_to_data
from agentctl.batch.tasks import Task
from agentctl.client import AgentClient, spawn_stdio

ARTIFACT_FIELDS = ("diff", "session", "check", "setup")


def default_work_dir() -> str:
    """The node's work folder when ``--ray-work-dir`` is not given (this node's temp
    folder: ``$TMPDIR`` where the node was started)."""
    return str(Path(tempfile.gettempdir()) / "agentd-batch")


class _Worker:
    """This worker process's event loop thread and daemon (see the module docstring)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.client: AgentClient | None = None
        self.fingerprint = ""

    async def daemon(self, env: dict[str, str], log: Path) -> AgentClient:
        """The worker's daemon for this environment (spawned or spawned again as needed)."""
        fingerprint = hashlib.sha256(repr(sorted(env.items())).encode()).hexdigest()
        client = self.client
        if client is not None and (not _alive(client) or fingerprint != self.fingerprint):
            with contextlib.suppress(Exception):
                await client.close()
            self.client = None
        if self.client is None:
            log.parent.mkdir(parents=True, exist_ok=True)
            self.client = await spawn_stdio(env=env, log_path=log, name="agentctl-batch-ray")
            self.fingerprint = fingerprint
        return self.client


def _alive(client: AgentClient) -> bool:
    """Whether the client's daemon process still runs (its output still open)."""
    process = client.process
    if process is None or getattr(process, "returncode", None) is not None:
        return False
    return process.stdout is not None and not process.stdout.at_eof()


_worker: _Worker | None = None
_worker_lock = threading.Lock()


def _the_worker() -> _Worker:
    global _worker
    with _worker_lock:
        if _worker is None:
            _worker = _Worker()
        return _worker


def run_attempt(call: dict[str, Any], node: str) -> dict[str, Any]:
    """Run one attempt of the task ``call`` describes on this node (``node``: its Ray node
    id); return ``{"record": …, "files": {RELATIVE_PATH: BYTES}}``. Blocks (a Ray task's
    thread); raises only when the driver cannot be reached or refuses the attempt."""
    worker = _the_worker()
    future = asyncio.run_coroutine_threadsafe(_attempt(worker, call, node), worker.loop)
    return future.result()


async def _attempt(worker: _Worker, call: dict[str, Any], node: str) -> dict[str, Any]:
    channel = call["channel"]
    settings = msgspec.convert(call["settings"], BatchSettings)
    root = Path(call["work_dir"] or default_work_dir()) / (settings.batch_trace_id or "batch")
    local = msgspec.structs.replace(settings, out_dir=str(root))
    async with node_session(
        channel["host"], channel["port"], channel["token"], channel["key"], node
    ) as link:
        stop = StopRequest()
        stops = asyncio.create_task(link.stops(stop.set))
        job = TaskJob(
            task=msgspec.convert(call["task"], Task),
            settings=local,
            caps=msgspec.convert(call["caps"], TaskCaps),
            trace_id=call["trace_id"],
            span_id=call.get("span_id", ""),
            attempt=call["attempt"],
            stop=stop,
        )
        try:
            with _environment(link.env):
                client = await worker.daemon(dict(os.environ), root / "agentd.log")
                record = await execute_task(client, job, link.send_event, engine="ray", node=node)
        finally:
            stops.cancel()
        files = await asyncio.to_thread(_collect, root, record_to_data(record))
    return {"record": record_to_data(record), "files": files}


@contextlib.contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    """``values`` in this process's environment for the block (the task's setup and check
    commands and a daemon started meanwhile inherit them), then the previous state back."""
    before = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _collect(root: Path, record: dict[str, Any]) -> dict[str, bytes]:
    """Read the record's artifacts (paths relative to ``root``), then remove the task's
    artifact folder there."""
    files: dict[str, bytes] = {}
    artifacts = record.get("artifacts") or {}
    for field in ARTIFACT_FIELDS:
        relative = artifacts.get(field)
        if relative:
            with contextlib.suppress(OSError):
                files[relative] = (root / relative).read_bytes()
    shutil.rmtree(root / record["id"], ignore_errors=True)
    return files
