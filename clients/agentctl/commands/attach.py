"""``agentctl attach ID``: follow a session's live events (rendered, or ``--json`` lines).

By default a session in the middle of a run is shown from that run's start (its buffered
events are replayed first; when the buffer no longer reaches back to it, a warning says so and
the buffered rest is shown). ``--since SEQ`` instead replays the buffered events after SEQ;
when the daemon's buffer no longer reaches back that far, a warning is printed and the
conversation so far is shown instead. ``--until-end`` leaves after the next ``agent_end`` and
exits with that run's code; on an idle session whose last run ended it exits at once with that
run's code. Otherwise attach follows until Ctrl-C (exit 130) or until the daemon goes away (exit 1);
on an idle session it first says on stderr that it waits for the next run. A rewind by
another client prints a ``↶ session rewound to before: PROMPT`` line (printed turns stay).
"""

from __future__ import annotations

import asyncio
import sys

import msgspec

from agentctl.client import AgentClient, connect
from agentctl.common import resolve_session_ids, run_command, socket_option, warn
from agentctl.events import EventStream, Frame, to_frame
from agentctl.options import AttachOptions
from agentctl.render.listing import format_transcript
from agentctl.render.stream import TerminalRenderer
from agentctl.render.style import Style, wants_color
from agentctl.run import outcome
from agentctl.run.drive import StopSignal, interrupt_handling
from agentctl.run.outcome import RunSummary
from agentd.protocol.events import AgentEnd, AgentStart, PermissionResolved, SessionEvent
from agentd.protocol.methods import SessionIdParams, SubscribeParams, SubscribeResult


def attach_main(options: AttachOptions) -> int:
    """Entry point of ``agentctl attach``."""
    return run_command(lambda: _attach(options))


class Follower:
    """Shows the events of one session and notices the end of a run."""

    def __init__(self, options: AttachOptions, last_seq: int = 0) -> None:
        self.json = bool(options.json)
        self.until_end = bool(options.until_end)
        self.session_id: str = options.session_id
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
        self.replayed_end_shown = False

    def show(self, data: bytes, event: SessionEvent | None) -> None:
        """Print one event (a subagent's nested under its task call; with ``--json`` every
        event, a child's under its own ``sessionId``); remember the run's end if it is a live
        ``agent_end`` of the attached session."""
        if self.json:
            sys.stdout.buffer.write(data + b"\n")
            sys.stdout.buffer.flush()
        elif event is not None:
            self.renderer.event(event.event, event.session_id)
        if event is None or event.session_id != self.session_id:
            return  # a subagent's events are drawn nested; its end is not the run's
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
                self.replayed_end_shown = True
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


async def _attach(options: AttachOptions) -> int:
    async with await connect(socket_option(options)) as client:
        options = await resolve_session_ids(client, options)
        stream = client.stream(options.session_id, to_frame)
        stream.with_subagents = True  # a running task's child is drawn under its call
        since = 0 if options.since is None else options.since
        params = SubscribeParams(session_id=options.session_id, since_seq=since)
        result = await client.sessions.subscribe(params)
        follower = Follower(options, result.last_seq)
        frames = stream.ready()  # the replay came before subscribe's answer
        if options.since is None:
            frames = await _current_run(client, options.session_id, frames, follower, result)
        elif not result.complete:
            await _resync(client, options, follower)
        for data, event in frames:
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
    if follower.ended is not None or await _status(client, session_id) != "idle":
        return None
    if follower.until_end and follower.replayed_end is not None:
        end = follower.replayed_end
        how = "as shown" if follower.replayed_end_shown else f"({end.stop_reason})"
        warn(f"session {session_id} is idle: its last run ended {how}")
        return end.exit_code
    warn(f"session {session_id} is idle; waiting for its next run (Ctrl-C to leave)")
    return None


async def _current_run(
    client: AgentClient,
    session_id: str,
    frames: list[Frame],
    follower: Follower,
    result: SubscribeResult,
) -> list[Frame]:
    """What to show of the whole replay: a running session's current run from its
    ``agent_start`` (and live events); nothing of an idle one, whose last run's end is kept for
    ``--until-end``."""
    replayed = [f for f in frames if f[1] is not None and f[1].seq <= follower.last_seq]
    live = frames[len(replayed) :]
    if await _status(client, session_id) == "idle":
        ends = [
            f[1].event for f in replayed if f[1] is not None and isinstance(f[1].event, AgentEnd)
        ]
        if ends and isinstance(ends[-1], AgentEnd):
            follower.replayed_end = _summary(session_id, ends[-1], 0)
        return live
    starts = [
        i for i, f in enumerate(replayed) if f[1] is not None and isinstance(f[1].event, AgentStart)
    ]
    if starts:
        return replayed[starts[-1] :] + live
    if not result.complete:
        warn("the start of the current run is no longer buffered; showing what is")
    return replayed + live


async def _status(client: AgentClient, session_id: str) -> str:
    """``idle`` or ``running`` (``session/state``)."""
    return (await client.sessions.state(SessionIdParams(session_id=session_id))).status


async def _resync(client: AgentClient, options: AttachOptions, follower: Follower) -> None:
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
