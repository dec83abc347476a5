"""Tool-call approval: the session's policy first, then the session's clients.

In ``ask`` mode a call the policy cannot decide is sent as a server→client request
``session/requestPermission`` to every subscribed connection that declared the ``permissions``
capability in ``initialize``. The first answer wins; the other requests are cancelled and every
subscriber sees ``permission_resolved``. With no client able to answer, the call is refused at
once (a headless run never hangs); with no answer within the timeout it is refused too. A cancel
of the run cancels the pending requests; every ``permission_request`` is followed by one
``permission_resolved`` (``reject_once``, "the run was cancelled", on cancel).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import msgspec
import structlog

from agentd.errors import RpcError
from agentd.protocol.events import PermissionOption, PermissionRequest, PermissionResolved
from agentd.protocol.methods import RequestPermissionParams, RequestPermissionResult

if TYPE_CHECKING:
    from agentd.protocol.content import ToolCall
    from agentd.rpc import Connection
    from agentd.server.runtime import SessionRuntime
    from agentd.tools.base import Tool

log = structlog.get_logger("agentd.approval")

OPTIONS: list[PermissionOption] = ["allow_once", "allow_always", "reject_once", "reject_always"]
DEFAULT_TIMEOUT = 300.0


class Approver:
    """The :data:`agentd.agent.Authorizer` of one session."""

    def __init__(self, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.timeout = timeout
        self._runtime: SessionRuntime | None = None

    def bind(self, runtime: SessionRuntime) -> None:
        """Attach the session whose policy, subscribers and events this approver uses."""
        self._runtime = runtime

    @property
    def runtime(self) -> SessionRuntime:
        if self._runtime is None:
            raise RuntimeError("Approver used before bind()")
        return self._runtime

    async def __call__(self, call: ToolCall, tool: Tool) -> str | None:
        """``None`` if the call may run, else the refusal text for the model."""
        decision = self.runtime.policy.check(tool, call.arguments)
        if decision.action == "allow":
            return None
        if decision.action == "deny":
            return f"Permission denied: {decision.reason}"
        return await self._ask(call, tool)

    async def _ask(self, call: ToolCall, tool: Tool) -> str | None:
        clients = [
            c
            for c in self.runtime.bus.subscribers.values()
            if c.capabilities.permissions and not c.closed
        ]
        emit = self.runtime.emit
        emit(
            PermissionRequest(
                tool_call_id=call.id, tool=tool.name, args=call.arguments, options=OPTIONS
            )
        )
        if not clients:
            reason = (
                "no connected client can answer permission requests (run with "
                "permission mode 'auto', or connect a client that handles "
                "session/requestPermission)"
            )
            emit(PermissionResolved(tool_call_id=call.id, outcome="reject_once", reason=reason))
            return f"Permission denied: {reason}."
        try:
            outcome, why = await self._first_answer(call, tool, clients)
        except asyncio.CancelledError:
            reason = "the run was cancelled"
            emit(PermissionResolved(tool_call_id=call.id, outcome="reject_once", reason=reason))
            raise
        emit(PermissionResolved(tool_call_id=call.id, outcome=outcome, reason=why))
        if outcome in ("allow_always", "reject_always"):
            self.runtime.policy.remember(tool.name, call.arguments, outcome == "allow_always")
        if outcome.startswith("allow"):
            return None
        return f"Permission denied: {why or 'the user rejected this tool call'}."

    async def _first_answer(
        self, call: ToolCall, tool: Tool, clients: list[Connection]
    ) -> tuple[PermissionOption, str | None]:
        params = RequestPermissionParams(
            session_id=self.runtime.id,
            tool_call_id=call.id,
            tool=tool.name,
            args=call.arguments,
            options=OPTIONS,
        )
        pending = {
            asyncio.create_task(
                c.request(
                    "session/requestPermission",
                    params,
                    result_type=RequestPermissionResult,
                    timeout=self.timeout,
                )
            )
            for c in clients
        }
        try:
            while pending:
                done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    answer = _answer(task)
                    if answer is not None:
                        return answer.outcome, None
            return "reject_once", f"no client answered within {self.timeout:g} s"
        finally:
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)


def _answer(task: asyncio.Task[RequestPermissionResult]) -> RequestPermissionResult | None:
    """The client's answer, or None if that client failed, timed out or went away."""
    try:
        return task.result()
    except (RpcError, OSError, msgspec.ValidationError, asyncio.CancelledError) as exc:
        log.info("permission request not answered", error=str(exc))
        return None
