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

from agentd.errors import RpcError
from agentd.log import get_logger
from agentd.protocol.events import PermissionOption, PermissionRequest, PermissionResolved
from agentd.protocol.methods import RequestPermissionParams

if TYPE_CHECKING:
    from agentd.api.subscriber import Subscriber
    from agentd.permissions.policy import PermissionPolicy
    from agentd.protocol.content import ToolCall
    from agentd.session.bus import EventBus
    from agentd.tools.base import Tool

log = get_logger("agentd.approval")

OPTIONS: list[PermissionOption] = ["allow_once", "allow_always", "reject_once", "reject_always"]
DEFAULT_TIMEOUT = 300.0
NO_CLIENT = (
    "no connected client can answer permission requests (run with permission mode 'auto', "
    "or connect a client that handles session/requestPermission)"
)


class Approver:
    """The :data:`agentd.agent.loop.Authorizer` of one session: its policy, then its subscribers.

    Besides the subscribers' own answers, :meth:`answer` accepts an answer for a pending
    request from anywhere in the process (``SessionService.answer_permission``).
    """

    def __init__(
        self, policy: PermissionPolicy, bus: EventBus, timeout: float = DEFAULT_TIMEOUT
    ) -> None:
        self.policy = policy
        self.bus = bus
        self.timeout = timeout
        self._pending: dict[str, asyncio.Future[PermissionOption]] = {}

    async def __call__(self, call: ToolCall, tool: Tool) -> str | None:
        """``None`` if the call may run, else the refusal text for the model."""
        decision = self.policy.check(tool, call.arguments)
        if decision.action == "allow":
            return None
        if decision.action == "deny":
            return f"Permission denied: {decision.reason}"
        return await self._ask(call, tool)

    def pending(self) -> list[str]:
        """Tool call ids waiting for an answer."""
        return list(self._pending)

    def answer(self, tool_call_id: str, outcome: PermissionOption) -> bool:
        """Answer the pending request of ``tool_call_id``; False if none is pending."""
        future = self._pending.get(tool_call_id)
        if future is None or future.done():
            return False
        future.set_result(outcome)
        return True

    async def _ask(self, call: ToolCall, tool: Tool) -> str | None:
        clients = [
            s for s in self.bus.subscribers.values() if s.answers_permissions and not s.closed
        ]
        publish = self.bus.publish
        publish(
            PermissionRequest(
                tool_call_id=call.id, tool=tool.name, args=call.arguments, options=OPTIONS
            )
        )
        if not clients:
            publish(
                PermissionResolved(tool_call_id=call.id, outcome="reject_once", reason=NO_CLIENT)
            )
            return f"Permission denied: {NO_CLIENT}."
        try:
            outcome, why = await self._first_answer(call, tool, clients)
        except asyncio.CancelledError:
            reason = "the run was cancelled"
            publish(PermissionResolved(tool_call_id=call.id, outcome="reject_once", reason=reason))
            raise
        publish(PermissionResolved(tool_call_id=call.id, outcome=outcome, reason=why))
        if outcome in ("allow_always", "reject_always"):
            self.policy.remember(tool.name, call.arguments, outcome == "allow_always")
        if outcome.startswith("allow"):
            return None
        return f"Permission denied: {why or 'the user rejected this tool call'}."

    async def _first_answer(
        self, call: ToolCall, tool: Tool, clients: list[Subscriber]
    ) -> tuple[PermissionOption, str | None]:
        params = RequestPermissionParams(
            session_id=self.bus.session_id,
            tool_call_id=call.id,
            tool=tool.name,
            args=call.arguments,
            options=OPTIONS,
        )
        direct: asyncio.Future[PermissionOption] = asyncio.get_running_loop().create_future()
        self._pending[call.id] = direct
        asks = {asyncio.ensure_future(c.request_permission(params, self.timeout)) for c in clients}
        pending: set[asyncio.Future[PermissionOption | None]] = {*asks, direct}  # type: ignore[arg-type]
        try:
            async with asyncio.timeout(self.timeout):
                while pending:
                    done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                    for task in done:
                        outcome = _answer(task)
                        if outcome is not None:
                            return outcome, None
                    if pending == {direct}:
                        break
        except TimeoutError:
            pass
        finally:
            self._pending.pop(call.id, None)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
        return "reject_once", f"no client answered within {self.timeout:g} s"


def _answer(task: asyncio.Future[PermissionOption | None]) -> PermissionOption | None:
    """The client's answer, or None if that client failed, timed out or went away."""
    try:
        return task.result()
    except (RpcError, OSError, msgspec.ValidationError, asyncio.CancelledError) as exc:
        log.info("permission request not answered", error=str(exc))
        return None
