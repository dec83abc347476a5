"""``session/load {replay}``: a loaded session's history streamed to one subscriber.

The history (the branch's messages as ``message_end`` events with their hook blocks and
questions, the plan, the background processes) is taken as it is when the replay starts and
sent in chunks of about :data:`CHUNK_BYTES` of frames. Between chunks the replay waits for the
subscriber to drain (:class:`~agentd.api.subscriber.Paced`: a JSON-RPC connection's outbound
queue written out) or, for other subscribers, yields to the event loop; so however big the
session, the loop is never held for more than one chunk's encoding and other clients' calls
are answered while it streams. The subscriber then watches the session from the seq the
snapshot was taken at: what the session did meanwhile follows the replayed history, in order
(from the session's replay buffer). A subscriber that was watching already keeps getting the
live events as they happen, between the chunks (seq above 0), and nothing twice.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import TYPE_CHECKING

from agentd.api.subscriber import Paced
from agentd.protocol.events import Event, PlanUpdate
from agentd.session.history import history_events, process_events

if TYPE_CHECKING:
    from agentd.api.subscriber import Subscriber
    from agentd.session.runtime import SessionRuntime

CHUNK_BYTES = 16 * 1024
"""Frames sent between two waits for the subscriber (a millisecond or so of encoding and
redacting; one bigger message is one frame, sent whole)."""


def snapshot(runtime: SessionRuntime) -> tuple[int, Iterator[Event]]:
    """The session's seq now and its history as of now, as events (lazily encoded)."""
    messages = list(runtime.agent.messages)
    blocks = runtime.hook_blocks()
    plan = runtime.file.plan()
    processes = list(process_events(runtime.processes))

    def events() -> Iterator[Event]:
        yield from history_events(messages, blocks)
        if plan:
            yield PlanUpdate(entries=plan)
        yield from processes

    return runtime.bus.seq, events()


async def replay(runtime: SessionRuntime, subscriber: Subscriber) -> int:
    """Stream the session's history to ``subscriber`` as ``seq: 0`` events (see the module
    docstring); return the seq it was taken at (to watch from). Stops early when the
    subscriber goes away."""
    seq, events = snapshot(runtime)
    sent = 0
    for event in events:
        if subscriber.closed:
            break
        sent += runtime.bus.send_one(subscriber, event)
        if sent >= CHUNK_BYTES:
            sent = 0
            await _paced(subscriber)
    return seq


async def _paced(subscriber: Subscriber) -> None:
    if isinstance(subscriber, Paced):
        await subscriber.drained()
    else:
        await asyncio.sleep(0)
