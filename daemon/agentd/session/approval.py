"""Tool-call approval: the session's policy first, then the session's clients.

In ``ask`` mode a call the policy cannot decide is sent as a server→client request
``session/requestPermission`` to every subscribed connection that declared the ``permissions``
capability in ``initialize``. The first answer wins; the other requests are cancelled and every
subscriber sees ``permission_resolved``. With no client able to answer, the call is refused at
once (a headless run never hangs).

A pending request belongs to the session, not to the clients first asked: a client that goes
away (a reloaded page, a restarted editor) does not end the wait, and every client that
subscribes while it is pending is asked too (its replay also holds the ``permission_request``).
Only the timeout refuses it, saying so. A cancel of the run cancels the pending requests; every
``permission_request`` is followed by one ``permission_resolved`` (``reject_once``, "the run was
cancelled", on cancel).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import msgspec

from agentd.errors import ConfigError, ConnectionLost, PeerTimeout, RequestCancelled, RpcError
from agentd.log import get_logger
from agentd.permissions.commands import remembered_rules
from agentd.protocol.events import (
    PermissionOption,
    PermissionRequest,
    PermissionResolved,
    SessionWarning,
)
from agentd.protocol.methods import RequestPermissionParams

if TYPE_CHECKING:
    from agentd.api.subscriber import Subscriber
    from agentd.permissions.policy import PermissionPolicy
    from agentd.protocol.content import ToolCall
    from agentd.session.bus import EventBus
    from agentd.tools.base import Tool, ToolContext

log = get_logger("agentd.approval")

OPTIONS: list[PermissionOption] = ["allow_once", "allow_always", "reject_once", "reject_always"]
PROJECT_OPTIONS: list[PermissionOption] = [*OPTIONS, "allow_always_project"]
"""The options when the policy can keep a rule for the folder (``keep_in_project``); the new
one last, so the others keep their places in a client's numbered list."""
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
        self,
        policy: PermissionPolicy,
        bus: EventBus,
        timeout: float = DEFAULT_TIMEOUT,
        context: ToolContext | None = None,
    ) -> None:
        """``context``: the session's tool context, which the preview of a call is computed
        in (None: requests carry no preview)."""
        self.policy = policy
        self.bus = bus
        self.timeout = timeout
        self.context = context
        self._pending: dict[str, _Ask] = {}

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
        ask = self._pending.get(tool_call_id)
        return ask is not None and ask.settle(outcome)

    def offer_pending(self, subscriber: Subscriber) -> None:
        """Ask a client that just subscribed about every request still pending."""
        for ask in self._pending.values():
            ask.offer(subscriber, self.timeout)

    async def _ask(self, call: ToolCall, tool: Tool) -> str | None:
        from agentd.session.preview import without_texts

        params = await self._params(call, tool)
        clients = [
            s for s in self.bus.subscribers.values() if s.answers_permissions and not s.closed
        ]
        publish = self.bus.publish
        publish(
            PermissionRequest(
                tool_call_id=call.id,
                tool=tool.name,
                args=call.arguments,
                options=params.options,
                preview=without_texts(params.preview),
                always_rule=params.always_rule,
            )
        )
        if not clients:
            publish(
                PermissionResolved(tool_call_id=call.id, outcome="reject_once", reason=NO_CLIENT)
            )
            return f"Permission denied: {NO_CLIENT}."
        try:
            outcome, why = await self._first_answer(call.id, params, clients)
        except asyncio.CancelledError:
            reason = "the run was cancelled"
            publish(PermissionResolved(tool_call_id=call.id, outcome="reject_once", reason=reason))
            raise
        publish(PermissionResolved(tool_call_id=call.id, outcome=outcome, reason=why))
        if outcome in ("allow_always", "allow_always_project", "reject_always"):
            self.policy.remember(tool.name, call.arguments, outcome != "reject_always")
        if outcome == "allow_always_project":
            await self._keep_in_project(remembered_rules(tool.name, call.arguments))
        if outcome.startswith("allow"):
            return None
        return f"Permission denied: {why or 'the user rejected this tool call'}."

    async def _keep_in_project(self, rules: list[str]) -> None:
        """Write ``rules`` to the user's config for the session's folder; a failure is a
        session warning (the rules still hold for this session)."""
        keep = self.policy.keep_in_project
        if keep is None or not rules:
            return
        try:
            await asyncio.to_thread(keep, rules)
        except (OSError, ConfigError) as exc:
            log.info("project rule not saved", error=str(exc))
            self.bus.publish(SessionWarning(message=f"{', '.join(rules)} was not saved: {exc}"))

    async def _params(self, call: ToolCall, tool: Tool) -> RequestPermissionParams:
        """The request for ``call``: its arguments, the preview of what it would do and the
        rule an *always* answer adds."""
        from agentd.session.preview import approval_preview

        ctx = self.context
        view = None if ctx is None else ctx.for_call(ctx.on_update, call.id)  # the call's own
        preview = None if view is None else await approval_preview(tool, call.arguments, view)
        return RequestPermissionParams(
            session_id=self.bus.session_id,
            tool_call_id=call.id,
            tool=tool.name,
            args=call.arguments,
            options=OPTIONS if self.policy.keep_in_project is None else PROJECT_OPTIONS,
            preview=preview,
            always_rule=", ".join(remembered_rules(tool.name, call.arguments)),
        )

    async def _first_answer(
        self, call_id: str, params: RequestPermissionParams, clients: list[Subscriber]
    ) -> tuple[PermissionOption, str | None]:
        ask = _Ask(params, asyncio.get_running_loop().create_future())
        self._pending[call_id] = ask
        for client in clients:
            ask.offer(client, self.timeout)
        try:
            async with asyncio.timeout(self.timeout):
                return await asyncio.shield(ask.outcome)
        except TimeoutError:
            return "reject_once", f"no client answered within {self.timeout:g} s"
        finally:
            self._pending.pop(call_id, None)
            await ask.close()


class _Ask:
    """One pending request: the clients asked so far and the first answer (from a client, or
    from :meth:`Approver.answer`)."""

    def __init__(
        self,
        params: RequestPermissionParams,
        outcome: asyncio.Future[tuple[PermissionOption, str | None]],
    ) -> None:
        self.params = params
        self.outcome = outcome
        self._asked: set[int] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    def settle(self, outcome: PermissionOption, reason: str | None = None) -> bool:
        """Take ``outcome`` (and why) as the answer unless one came first."""
        if self.outcome.done():
            return False
        self.outcome.set_result((outcome, reason))
        return True

    def offer(self, subscriber: Subscriber, timeout: float) -> None:
        """Ask ``subscriber`` (once) if it answers permission requests."""
        if subscriber.key in self._asked or subscriber.closed or not subscriber.answers_permissions:
            return
        self._asked.add(subscriber.key)
        self._tasks.add(asyncio.ensure_future(self._relay(subscriber, timeout)))

    async def _relay(self, subscriber: Subscriber, timeout: float) -> None:
        """One client's answer; a client that went away leaves the request pending for the
        others (and those still to come), one that answered wrongly refuses the call."""
        try:
            outcome = await subscriber.request_permission(self.params, timeout)
        except (ConnectionLost, PeerTimeout, RequestCancelled, OSError) as exc:
            log.info("permission request not answered", error=str(exc))
            return
        except (RpcError, msgspec.ValidationError) as exc:
            log.info("permission request answered wrongly", error=str(exc))
            self.settle("reject_once", f"the client's answer was not one of the options ({exc})")
            return
        if outcome is not None:
            self.settle(outcome)

    async def close(self) -> None:
        """Withdraw the request from the clients still asked."""
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
