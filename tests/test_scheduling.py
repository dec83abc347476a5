"""The agent loop's queues and tool-call schedule, on their own."""

from __future__ import annotations

import asyncio

from agentd.agent.scheduling import MessageQueues, ToolSchedule
from agentd.protocol.events import QueueUpdate
from agentd.tools.base import ToolResult


def test_steering_goes_first_and_follow_ups_only_when_the_loop_would_stop() -> None:
    updates: list[QueueUpdate] = []
    queues = MessageQueues(updates.append)
    queues.enqueue("later", steer=False)
    queues.enqueue("now", steer=True)
    assert queues.next_texts(tools_ran=False) == ["now"]
    assert queues.next_texts(tools_ran=True) == []  # tools ran: the loop goes on anyway
    assert queues.next_texts(tools_ran=False) == ["later"]
    assert queues.next_texts(tools_ran=False) == []
    assert updates[-1] == QueueUpdate(steering=[], follow_up=[])
    assert len(updates) == 4  # two enqueues, two takes; empty takes report nothing


def test_drop_empties_both_and_returns_what_was_dropped() -> None:
    updates: list[QueueUpdate] = []
    queues = MessageQueues(updates.append)
    assert queues.drop() == []
    assert updates == []
    queues.enqueue("a", steer=True)
    queues.enqueue("b", steer=False)
    assert queues.drop() == ["a", "b"]
    assert updates[-1] == QueueUpdate(steering=[], follow_up=[])


async def test_a_mutating_call_waits_for_all_earlier_ones_a_read_only_one_for_the_last_write() -> (
    None
):
    schedule = ToolSchedule()
    assert schedule.barrier(mutating=True) == []

    async def done() -> ToolResult:
        return ToolResult("ok")

    read = schedule.add(done(), mutating=False)
    write = schedule.add(done(), mutating=True)
    assert schedule.barrier(mutating=False) == [write]
    assert schedule.barrier(mutating=True) == [read, write]
    await schedule.cancel_all()
    assert all(task.done() for task in (read, write))


async def test_cancel_all_ends_running_tasks() -> None:
    schedule = ToolSchedule()

    async def forever() -> ToolResult:
        await asyncio.Event().wait()
        raise AssertionError("never")

    task = schedule.add(forever(), mutating=True)
    await asyncio.sleep(0)
    await schedule.cancel_all()
    assert task.cancelled()
