"""The Ray engine's parts that need no cluster: the driver channel (token, task keys, the
values it hands out, progress and stop), and the command line's Ray options."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

from agentctl.batch.engine import StopRequest, TaskEvent
from agentctl.batch.ray_channel import ChannelError, DriverChannel, node_session


async def test_a_task_gets_only_its_names_values_and_sends_progress_and_gets_stop() -> None:
    channel = DriverChannel("127.0.0.1", {"A_KEY": "alpha", "B_KEY": "beta", "OTHER": "x"})
    await channel.start()
    events: list[TaskEvent] = []
    stop = StopRequest()
    key = channel.register(events.append, ["A_KEY", "MISSING"], stop)
    try:
        async with node_session("127.0.0.1", channel.port, channel.token, key, "node-1") as link:
            assert link.env == {"A_KEY": "alpha"}
            link.send_event(TaskEvent(kind="turn", task_id="t1", cost=0.5, tokens=7))
            await link.writer.drain()
            for _ in range(200):
                if events:
                    break
                await asyncio.sleep(0.01)
            assert [(e.kind, e.task_id, e.tokens) for e in events] == [("turn", "t1", 7)]
            reasons: list[str] = []
            reading = asyncio.create_task(link.stops(reasons.append))
            stop.set("interrupted")
            for _ in range(500):
                if reasons:
                    break
                await asyncio.sleep(0.01)
            reading.cancel()
    finally:
        await channel.close()
    assert reasons == ["interrupted"]
    assert channel.attempts(key) == ["node-1"]


async def test_a_wrong_token_or_an_unknown_or_finished_task_is_refused() -> None:
    channel = DriverChannel("127.0.0.1", {"A_KEY": "alpha"})
    await channel.start()
    key = channel.register(lambda event: None, ["A_KEY"], StopRequest())
    try:
        with pytest.raises(ChannelError, match="refused"):
            async with node_session("127.0.0.1", channel.port, "wrong", key, "n"):
                pass
        with pytest.raises(ChannelError, match="refused"):
            async with node_session("127.0.0.1", channel.port, channel.token, "nokey", "n"):
                pass
        channel.unregister(key)
        with pytest.raises(ChannelError, match="refused"):
            async with node_session("127.0.0.1", channel.port, channel.token, key, "n"):
                pass
    finally:
        await channel.close()
    with pytest.raises(ChannelError, match="cannot reach"):
        async with node_session("127.0.0.1", channel.port, channel.token, key, "n", timeout=5):
            pass


def _batch(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentctl", "batch", "tasks.jsonl", "--out", "out", *args],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--address", "h:1"], "--address is for --engine ray"),
        (["--ray-resources", '{"x": 1}'], "--ray-resources is for --engine ray"),
        (["--max-retries", "2"], "--max-retries is for --engine ray"),
        (["--engine", "ray", "--ray-resources", "{"], "not JSON"),
        (["--engine", "ray", "--ray-resources", '{"CPU": 1}'], "use --ray-num-cpus"),
        (["--engine", "ray", "--ray-resources", '{"x": -1}'], "x: expected a number ≥ 0"),
        (["--engine", "ray", "--ray-resources", "[1]"], "expected an object"),
        (["--engine", "ray", "--max-retries", "-1"], "must be 0 or more"),
    ],
)
def test_ray_options_are_checked(args: list[str], message: str) -> None:
    done = _batch(*args)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr
    assert "Traceback" not in done.stderr
