"""Driving one run: prompt, stream its events to a view, stop it on timeout or Ctrl-C.

:func:`drive_run` is shared by ``send``, ``chat`` and the demo. The event stream is opened
before the prompt is sent, so no event is missed; the summary is built from the prompt's
result, after every event up to ``agent_end`` was handed to the view.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any, Protocol

import msgspec

from agentctl.events import EventStream, Frame, SessionClient, to_frame
from agentctl.run.outcome import INTERRUPTED, RunSummary
from agentd.errors import ConnectionLost, RpcError
from agentd.protocol.content import ImageContent
from agentd.protocol.events import AgentEnd, PermissionResolved, SessionEvent
from agentd.protocol.methods import PromptParams, PromptResult, SessionIdParams

CANCEL_GRACE_S = 10.0
"""How long a cancelled run may take to report its end before the client gives up."""
TAIL_GRACE_S = 2.0
"""How long to wait for ``agent_end`` once the prompt has answered (it is sent first)."""


class RunView(Protocol):
    """Receives every event of the run: its JSON bytes and the decoded event.

    ``event`` is None for an event type this client does not know.
    """

    def __call__(self, data: bytes, event: SessionEvent | None) -> None: ...


class StopSignal:
    """Requests to stop the run, from Ctrl-C or a timeout. Set once; later sets are ignored."""

    def __init__(self) -> None:
        self.reason: str | None = None
        self._event = asyncio.Event()

    def set(self, reason: str) -> None:
        if self.reason is None:
            self.reason = reason
            self._event.set()

    async def wait(self) -> None:
        await self._event.wait()


@contextlib.contextmanager
def interrupt_handling(
    stop: StopSignal, on_first: Callable[[], None] = lambda: None
) -> Iterator[None]:
    """Within the block, the first Ctrl-C asks ``stop`` to cancel; the second exits (130).

    Works only on the main thread with a running loop; elsewhere it does nothing.
    """
    loop = asyncio.get_running_loop()
    presses = 0

    def on_sigint() -> None:
        nonlocal presses
        presses += 1
        if presses == 1:
            on_first()
            stop.set("interrupted")
            return
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.write("\n")
        os._exit(INTERRUPTED)

    try:
        loop.add_signal_handler(signal.SIGINT, on_sigint)
    except (ValueError, RuntimeError, NotImplementedError):
        yield
        return
    try:
        yield
    finally:
        loop.remove_signal_handler(signal.SIGINT)


class _Tally:
    """What the client learns from the events themselves (of the run's own session, not of
    its subagents')."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.refused = 0
        self.end: AgentEnd | None = None

    def observe(self, event: SessionEvent | None) -> None:
        if event is None or event.session_id != self.session_id:
            return
        inner = event.event
        if isinstance(inner, PermissionResolved) and inner.outcome.startswith("reject"):
            self.refused += 1
        elif isinstance(inner, AgentEnd):
            self.end = inner


class OutputClosed(BrokenPipeError):
    """The client's output went away (a closed pipe); the run was not cancelled."""


async def _pump(stream: EventStream[Frame], view: RunView, tally: _Tally, stop: StopSignal) -> None:
    try:
        async for data, event in stream:
            tally.observe(event)
            view(data, event)
            if tally.end is not None:
                return
    except BrokenPipeError:
        stop.set("detached")


async def drive_run(
    client: SessionClient,
    session_id: str,
    text: str,
    view: RunView,
    *,
    timeout: float | None = None,
    stop: StopSignal | None = None,
    max_turns: int | None = None,
    budget: dict[str, Any] | None = None,
    images: list[ImageContent] | None = None,
    traceparent: str | None = None,
) -> RunSummary:
    """Run ``text`` (with ``images``) on ``session_id``, feeding events to ``view``; return
    how it ended.

    ``max_turns`` limits this run (default: the session's limit); ``budget`` holds the
    ``max_cost`` / ``max_tokens`` caps of :meth:`AgentClient.prompt`; ``traceparent`` puts
    the run's spans under that W3C trace context (docs/telemetry.md).
    ``timeout`` (seconds, whole run) or ``stop`` being set cancels the run with
    ``session/cancel`` and waits for it to end. RPC errors of the prompt itself (busy session,
    unknown session, …) are raised; a lost connection ends the run with stop reason ``error``.
    A view that hits a closed pipe raises :class:`OutputClosed` here, without cancelling.
    """
    stop = stop or StopSignal()
    tally = _Tally(session_id)
    started = time.monotonic()
    stream = client.stream(session_id, to_frame)
    stream.with_subagents = True  # the children's events go to the view too
    pump = asyncio.create_task(_pump(stream, view, tally, stop))
    prompt = asyncio.create_task(
        client.sessions.prompt(
            PromptParams(
                session_id=session_id,
                text=text,
                images=images or [],
                max_turns=max_turns,
                traceparent=traceparent,
                **(budget or {}),
            )
        )
    )
    try:
        await _until_done_or_stopped(prompt, stop, timeout)
        if stop.reason == "detached":
            prompt.add_done_callback(_ignore_outcome)
            raise OutputClosed("the output was closed; the run was not cancelled")
        if not prompt.done():
            await _cancel_run(client, session_id, prompt)
        result = await _prompt_result(prompt)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(pump), TAIL_GRACE_S)
    finally:
        stream.close()
        pump.cancel()
        await asyncio.gather(pump, return_exceptions=True)
    return _summary(session_id, result, tally, started, stop.reason)


def _ignore_outcome(task: asyncio.Task[Any]) -> None:
    if not task.cancelled():
        task.exception()


async def _until_done_or_stopped(
    prompt: asyncio.Task[PromptResult], stop: StopSignal, timeout: float | None
) -> None:
    stopper = asyncio.create_task(stop.wait())
    try:
        await asyncio.wait({prompt, stopper}, timeout=timeout, return_when="FIRST_COMPLETED")
    finally:
        stopper.cancel()
    if not prompt.done() and stop.reason is None:
        stop.set("timeout")


async def _cancel_run(client: SessionClient, session_id: str, prompt: asyncio.Task[Any]) -> None:
    with contextlib.suppress(RpcError, OSError, TimeoutError):
        await asyncio.wait_for(
            client.sessions.cancel(SessionIdParams(session_id=session_id)), CANCEL_GRACE_S
        )
    with contextlib.suppress(TimeoutError):
        await asyncio.wait({prompt}, timeout=CANCEL_GRACE_S)


async def _prompt_result(prompt: asyncio.Task[PromptResult]) -> PromptResult | str:
    """The prompt's result, or the text of why the connection failed."""
    if not prompt.done():
        prompt.cancel()
        await asyncio.gather(prompt, return_exceptions=True)
        return "the run did not stop after session/cancel"
    try:
        return prompt.result()
    except (ConnectionLost, ConnectionError, EOFError) as exc:
        return f"lost the connection to the daemon: {exc}"


def _summary(
    session_id: str,
    result: PromptResult | str,
    tally: _Tally,
    started: float,
    stop_reason: str | None,
) -> RunSummary:
    duration_ms = int((time.monotonic() - started) * 1000)
    summary = RunSummary(
        session_id=session_id,
        stop_reason="error",
        duration_ms=duration_ms,
        refused=tally.refused,
        interrupted=stop_reason == "interrupted",
        timed_out=stop_reason == "timeout",
    )
    if isinstance(result, str):
        summary.error = result
        return summary
    summary.stop_reason = result.stop_reason
    summary.turns = result.turns
    summary.usage = msgspec.to_builtins(result.usage)
    summary.cost = result.cost
    summary.error = result.error
    summary.refused = max(summary.refused, len(result.permissions_refused))  # policy denials too
    return summary
