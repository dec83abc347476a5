"""The local engine: one shared daemon (the one ``agentctl`` starts when none runs), one
connection, up to ``--concurrency`` sessions at once. Each task's session is unloaded as
soon as its run ends, so the daemon's memory does not grow with the number of tasks."""

from __future__ import annotations

import os

from agentctl.batch.engine import BatchSettings, Engine, ProgressCallback, TaskJob
from agentctl.batch.execute import execute_task
from agentctl.batch.records import ResultRecord
from agentctl.client import AgentClient, connect

DEFAULT_MAX_CONCURRENCY = 8
"""The default concurrency is the number of cores, at most this many."""


class LocalEngine(Engine):
    """Runs tasks as sessions of the shared daemon on this machine."""

    name = "local"

    def __init__(self) -> None:
        self._client: AgentClient | None = None

    def default_concurrency(self) -> int:
        """The machine's cores (at least 2: a session mostly waits on the model), at most
        :data:`DEFAULT_MAX_CONCURRENCY`."""
        return max(2, min(os.cpu_count() or 1, DEFAULT_MAX_CONCURRENCY))

    async def open(self, settings: BatchSettings) -> None:
        """Connect to the shared daemon, starting it when none runs (``DaemonUnavailable``)."""
        self._client = await connect(settings.socket, autostart=True, name="agentctl-batch")

    async def run_task(self, job: TaskJob, progress: ProgressCallback) -> ResultRecord:
        assert self._client is not None, "open() first"
        return await execute_task(self._client, job, progress, engine=self.name)

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None
