"""The Ray engine: ``agentctl batch --engine ray [--address ADDRESS]`` (imports Ray).

Each task is one Ray task (``--ray-num-cpus``, default 1, and ``--ray-resources JSON``
custom resources) running :func:`agentctl.batch.ray_node.run_attempt` on the node it lands
on: the workspace is made there, the task runs against a daemon there, and the record and
the artifacts' bytes come back as the task's return value; the driver writes them into the
output folder (atomically, as the local engine does), so ``--out`` needs no shared storage
and nothing but the driver ever writes it. Progress events, stop requests and credential
values go over the driver's own channel (:mod:`agentctl.batch.ray_channel`), never through
Ray. A node that dies mid-task: Ray runs the task again elsewhere (``--max-retries``,
default 3, for system failures only: a task's own failure is its record), and the batch
gets one record for it, from the attempt that finished.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import Any

import msgspec
import ray

from agentctl.batch import ray_node
from agentctl.batch.engine import BatchSettings, Engine, ProgressCallback, TaskJob
from agentctl.batch.ray_channel import DriverChannel
from agentctl.batch.records import ResultRecord, record_from_data
from agentctl.batch.store import now_iso, write_atomic
from agentctl.options import BatchOptions
from agentctl.run import outcome

DEFAULT_MAX_RETRIES = 3


def _run_on_node(call: dict[str, Any]) -> dict[str, Any]:
    """The Ray task's body (see :func:`agentctl.batch.ray_node.run_attempt`)."""
    return ray_node.run_attempt(call, node=ray.get_runtime_context().get_node_id())


class RayEngine(Engine):
    """Runs each task as a Ray task on a cluster (see the module docstring)."""

    name = "ray"

    def __init__(self, options: BatchOptions) -> None:
        self.address = options.address
        self.num_cpus = 1.0 if options.ray_num_cpus is None else options.ray_num_cpus
        self.resources = dict(options.ray_resources or {})
        self.max_retries = (
            DEFAULT_MAX_RETRIES if options.max_retries is None else options.max_retries
        )
        self.work_dir = options.ray_work_dir
        """None: each node's own default (:func:`agentctl.batch.ray_node.default_work_dir`)."""
        self._channel: DriverChannel | None = None
        self._remote: Any = None
        self._settings: BatchSettings | None = None

    def _connect(self) -> None:
        if not ray.is_initialized():
            ray.init(
                address=self.address,
                logging_level=logging.WARNING,
                log_to_driver=False,
                include_dashboard=False,
                configure_logging=True,
            )

    def default_concurrency(self) -> int:
        """As many tasks as the cluster's CPUs hold at ``--ray-num-cpus`` each (joins the
        cluster), at least 1; Ray queues the rest on its own."""
        self._connect()
        resources: dict[str, float] = ray.cluster_resources()  # type: ignore[no-untyped-call]
        cpus = float(resources.get("CPU", 1.0))
        return max(1, int(cpus / self.num_cpus) if self.num_cpus > 0 else int(cpus))

    async def open(self, settings: BatchSettings) -> None:
        """Join the cluster (``--address``; none: ``RAY_ADDRESS``, else a local Ray) and open
        the driver's channel on this node's address."""
        self._connect()
        self._settings = settings
        self._channel = DriverChannel(_node_ip(), dict(os.environ))
        await self._channel.start()
        self._remote = ray.remote(_run_on_node).options(
            num_cpus=self.num_cpus,
            resources=self.resources or None,
            max_retries=self.max_retries,
            retry_exceptions=False,
            name="agentctl-batch-task",
        )

    async def run_task(self, job: TaskJob, progress: ProgressCallback) -> ResultRecord:
        channel, settings = self._channel, self._settings
        assert channel is not None, "open() first"
        assert settings is not None
        names = [*job.settings.env, *job.task.env]
        key = channel.register(progress, names, job.stop)
        started = now_iso()
        ref = self._remote.remote(self._call(job, key))
        job.stop.on_set(lambda _reason: channel.attempts(key) or ray.cancel(ref))
        try:
            result = await ref
        except ray.exceptions.TaskCancelledError:
            return self._failed(job, started, "cancelled", job.stop.reason or "cancelled")
        except ray.exceptions.RayError as exc:
            return self._failed(job, started, "error", f"ray: {_first_line(exc)}")
        finally:
            attempts = channel.attempts(key)
            channel.unregister(key)
        if len(attempts) > 1:
            sys.stderr.write(
                f"agentctl batch: task {job.task.id}: lost node {attempts[0][:12]} "
                f"(or its worker), run {len(attempts)} times; "
                f"recorded the attempt on {attempts[-1][:12]}\n"
            )
        return self._keep(job, result)

    def _call(self, job: TaskJob, key: str) -> dict[str, Any]:
        """The task's argument: plain data, credential names only (no value)."""
        channel = self._channel
        assert channel is not None
        return {
            "task": msgspec.to_builtins(job.task),
            "settings": msgspec.to_builtins(job.settings),
            "caps": msgspec.to_builtins(job.caps),
            "trace_id": job.trace_id,
            "span_id": job.span_id,
            "attempt": job.attempt,
            "work_dir": self.work_dir,
            "channel": {
                "host": channel.host, "port": channel.port, "token": channel.token, "key": key,
            },
        }  # fmt: skip

    def _keep(self, job: TaskJob, result: dict[str, Any]) -> ResultRecord:
        """Write the returned artifacts under the output folder (only into the task's own
        folder); the record (an ``error`` one when the node's answer is not the task's)."""
        try:
            record = record_from_data(result["record"])
        except (KeyError, TypeError, msgspec.ValidationError) as exc:
            return self._failed(job, now_iso(), "error", f"ray: a node's answer: {exc}")
        if record.id != job.task.id:
            return self._failed(job, now_iso(), "error", f"ray: a node answered for {record.id}")
        out = Path(job.settings.out_dir)
        prefix = f"{job.task.id}/"
        for relative, data in result["files"].items():
            parts = Path(relative).parts
            if not relative.startswith(prefix) or ".." in parts or len(parts) != 2:
                continue  # only the task's own folder, one level deep
            write_atomic(out / relative, data)
        return record

    def _failed(self, job: TaskJob, started: str, status: Any, error: str) -> ResultRecord:
        return ResultRecord(
            id=job.task.id,
            status=status,
            stop_reason="cancelled" if status == "cancelled" else "error",
            exit_code=outcome.CANCELLED if status == "cancelled" else outcome.AGENT_ERROR,
            error=error,
            trace_id=job.trace_id,
            span_id=job.span_id,
            attempt=job.attempt,
            engine=self.name,
            started_at=started,
            finished_at=now_iso(),
            duration_ms=0,
        )

    async def close(self) -> None:
        """Close the channel and leave the cluster (the cluster itself keeps running)."""
        if self._channel is not None:
            await self._channel.close()
            self._channel = None
        if ray.is_initialized():
            ray.shutdown()


def _node_ip() -> str:
    """This (the driver's) node's address in the cluster, where the tasks reach it."""
    address: str = ray.util.get_node_ip_address()  # type: ignore[no-untyped-call]
    return address


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__
