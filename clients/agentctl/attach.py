"""``agentctl attach ID``: follow a session's live events (rendered, or ``--json`` lines).

``--since SEQ`` first replays the buffered events after SEQ; when the daemon's buffer no
longer reaches back that far, a warning is printed and the conversation so far is shown
instead. ``--until-end`` leaves after the next ``agent_end`` and exits with that run's code; when
the replay already held a run's end and the session is idle, it exits at once with that run's
code. Otherwise attach follows until Ctrl-C (exit 130) or until the daemon goes away (exit 1);
on an idle session it first says on stderr that it waits for the next run.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

import msgspec

from agentctl import outcome
from agentctl.client import AgentClient, connect
from agentctl.common import resolve_session_ids, run_command, socket_option, warn
from agentctl.events import EventStream, Frame, to_frame
from agentctl.listing import format_transcript
from agentctl.outcome import RunSummary
from agentctl.render import TerminalRenderer
from agentctl.run import StopSignal, interrupt_handling
from agentctl.style import Style, wants_color
from agentd.protocol.events import AgentEnd, PermissionResolved, SessionEvent


def attach_main(options: argparse.Namespace) -> int:
    """Entry point of ``agentctl attach``."""
    return run_command(lambda: _attach(options))


class Follower:
    """Shows the events of one session and notices the end of a run."""

    def __init__(self, options: argparse.Namespace, last_seq: int = 0) -> None:
        self.json = bool(options.json)
        self.until_end = bool(options.until_end)
        color = wants_color(sys.stdout)
        self.renderer = TerminalRenderer(
            sys.stdout,
            style=Style(color),
            animate=color,
            show_user=True,
            markdown=color and not self.json,
        )
        self.last_seq = last_seq
        self.refused = 0
        self.ended: RunSummary | None = None
        self.replayed_end: RunSummary | None = None

    def show(self, data: bytes, event: SessionEvent | None) -> None:
        """Print one event; remember the run's end if it is a live ``agent_end``."""
        if self.json:
            sys.stdout.buffer.write(data + b"\n")
            sys.stdout.buffer.flush()
        elif event is not None:
            self.renderer.event(event.event)
        if event is None:
            return
        inner = event.event
        if isinstance(inner, PermissionResolved) and inner.outcome.startswith("reject"):
            self.refused += 1
        if isinstance(inner, AgentEnd):
            summary = _summary(event.session_id, inner, self.refused)
            if not self.json:
                self.renderer.footer(summary)
            if event.seq > self.last_seq:
                self.ended = summary
            else:
                self.replayed_end = summary
            self.refused = 0


def _summary(session_id: str, end: AgentEnd, refused: int) -> RunSummary:
    return RunSummary(
        session_id=session_id,
        stop_reason=end.stop_reason,
        turns=end.turns,
        usage=msgspec.to_builtins(end.usage),
        cost=end.cost,
        error=end.error,
        refused=refused,
    )


async def _attach(options: argparse.Namespace) -> int:
    async with await connect(socket_option(options)) as client:
        await resolve_session_ids(client, options)
        stream = client.stream(options.session_id, to_frame)
        result = await client.subscribe(options.session_id, options.since)
        follower = Follower(options, result.last_seq)
        if not result.complete:
            await _resync(client, options, follower)
        for data, event in stream.ready():  # the replay came before subscribe's answer
            follower.show(data, event)
        code = await _before_following(client, options.session_id, follower)
        if code is not None:
            follower.renderer.close()
            return code
        stop = StopSignal()
        with interrupt_handling(stop):
            return await _follow(stream, follower, stop)


async def _before_following(client: AgentClient, session_id: str, follower: Follower) -> int | None:
    """The exit code when there is nothing to wait for (``--until-end`` and the run's end
    was replayed, the session now idle); None to follow, saying on stderr when the session is
    idle and attach waits for its next run."""
    if follower.until_end and follower.ended is not None:
        return follower.ended.exit_code
    if follower.ended is not None or (await client.state(session_id)).status != "idle":
        return None
    if follower.until_end and follower.replayed_end is not None:
        warn(f"session {session_id} is idle: its last run ended as shown")
        return follower.replayed_end.exit_code
    warn(f"session {session_id} is idle; waiting for its next run (Ctrl-C to leave)")
    return None


async def _resync(client: AgentClient, options: argparse.Namespace, follower: Follower) -> None:
    warn(f"events after seq {options.since} are no longer buffered; the conversation so far:")
    if not follower.json:
        messages = await client.messages(options.session_id)
        follower.renderer.line(format_transcript(messages, follower.renderer.style))


async def _follow(stream: EventStream[Frame], follower: Follower, stop: StopSignal) -> int:
    async def consume() -> int:
        async for data, event in stream:
            follower.show(data, event)
            if follower.until_end and follower.ended is not None:
                return follower.ended.exit_code
        warn("the daemon closed the connection")
        return outcome.AGENT_ERROR

    consumer = asyncio.create_task(consume())
    stopper = asyncio.create_task(stop.wait())
    done, _ = await asyncio.wait({consumer, stopper}, return_when="FIRST_COMPLETED")
    for task in (consumer, stopper):
        task.cancel()
    await asyncio.gather(consumer, stopper, return_exceptions=True)
    follower.renderer.close()
    if consumer in done and not consumer.cancelled():
        return consumer.result()
    return outcome.INTERRUPTED
