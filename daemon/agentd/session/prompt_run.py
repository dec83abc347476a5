"""``PromptRun``: a run started by :meth:`SessionService.start_prompt
<agentd.session.service.SessionService.start_prompt>`, for front-ends that decide themselves
what ends it (the ``session/prompt`` special case of the JSON-RPC handlers and the web API)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from agentd.session.settings import prompt_result

if TYPE_CHECKING:
    from agentd.agent.loop import RunResult
    from agentd.protocol.methods import CancelResult, PromptResult
    from agentd.session.runtime import SessionRuntime


class PromptRun:
    """A run started by :meth:`SessionService.start_prompt`."""

    def __init__(self, runtime: SessionRuntime, task: asyncio.Task[RunResult]) -> None:
        self.session_id = runtime.id
        self._runtime = runtime
        self._task = task

    async def result(self) -> PromptResult:
        """Wait for the run to end. Cancelling this wait does not cancel the run."""
        return prompt_result(await asyncio.shield(self._task))

    def cancel(self) -> CancelResult:
        """Cancel the run (and drop its queued messages)."""
        return self._runtime.cancel()

    async def settled(self) -> None:
        """Wait until the run has ended (however it ends)."""
        await asyncio.gather(self._task, return_exceptions=True)
