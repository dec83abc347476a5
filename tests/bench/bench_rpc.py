"""Budgets of the JSON-RPC core and transports.

* ``stdio start → initialize``: spawn ``python -m agentd --stdio`` 10 times; time from spawn
  to the ``initialize`` answer on stdout; median.
* ``stdio round trip``: one ``agentd --stdio`` child; a client :class:`Connection` sends 2,000
  sequential ``daemon/status`` requests after 200 warm-up calls; median (and p99) per call.
  Judged against this machine's floor for the same shape: a bare asyncio child that echoes
  each line back over its stdio pipes, driven by a bare asyncio client (:data:`ECHO`); a
  virtual machine's wake-ups alone can take more than 100 µs a round trip.
* ``notifications/s``: in one process, a server :class:`Connection` sends 200,000
  ``session/event`` notifications (a ``message_update`` text delta each, encoded from the
  Struct) with :meth:`Connection.notify` over a Unix socket pair to a client
  :class:`Connection` that decodes every one; the rate is count / time until the last arrives.
  Sender and receiver share one core, so this is a floor for either side alone. The same
  count divided by the process's CPU time is reported too: it does not depend on what else
  the machine is running.
* ``idle RSS``: ``VmRSS`` of a started ``agentd serve --socket`` after it has settled.

Run: ``python -m tests.bench.bench_rpc`` (or ``python -m tests.bench`` for every area).
"""

from __future__ import annotations

import asyncio
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from agentd.protocol.events import MessageUpdate, SessionEvent, TextDelta
from agentd.rpc import Connection, Router
from agentd.rpc.connect import open_connection
from tests.bench.smoke import size
from tests.harness import IsolatedHome, scaled, spawn_stdio_connection, stop

Row = tuple[str, str, str]
INITIALIZE = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}\n'


def stdio_start(sandbox: IsolatedHome, runs: int = 10) -> float:
    """Median seconds from spawning ``agentd --stdio`` to its ``initialize`` answer."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        with subprocess.Popen(
            sandbox.agentd("--stdio"),
            env=sandbox.env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        ) as process:
            assert process.stdin is not None
            assert process.stdout is not None
            process.stdin.write(INITIALIZE)
            process.stdin.flush()
            answer = process.stdout.readline()
            times.append(time.perf_counter() - started)
            assert b'"result"' in answer, answer
            process.stdin.close()
            process.wait(scaled(30))
    return statistics.median(times)


ECHO = (
    "import asyncio, sys\n"
    "async def main():\n"
    "    loop = asyncio.get_running_loop()\n"
    "    reader = asyncio.StreamReader()\n"
    "    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)\n"
    "    transport, _ = await loop.connect_write_pipe(asyncio.Protocol, sys.stdout)\n"
    "    while line := await reader.readline():\n"
    "        transport.write(line)\n"
    "asyncio.run(main())\n"
)
"""The floor of a stdio round trip: a child echoing every line it reads."""


async def echo_round_trip(calls: int = 2000) -> float:
    """Median seconds of one line sent to :data:`ECHO`'s child and read back."""
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-c", ECHO, stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert child.stdin is not None
    assert child.stdout is not None
    line = b'{"jsonrpc":"2.0","id":1,"method":"daemon/status"}\n'
    times = []
    try:
        for number in range(200 + calls):
            started = time.perf_counter()
            child.stdin.write(line)
            await child.stdout.readline()
            if number >= 200:
                times.append(time.perf_counter() - started)
    finally:
        child.stdin.close()
        await child.wait()
    return statistics.median(times)


async def stdio_round_trip(sandbox: IsolatedHome, calls: int = 2000) -> tuple[float, float]:
    """(median, p99) seconds of one ``daemon/status`` call over stdio."""
    process, conn = await spawn_stdio_connection(sandbox)
    try:
        await conn.request("initialize", {})
        for _ in range(200):
            await conn.request("daemon/status")
        times = []
        for _ in range(calls):
            started = time.perf_counter()
            await conn.request("daemon/status")
            times.append(time.perf_counter() - started)
    finally:
        await conn.close()
        await process.wait()
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.99)]


async def notification_rate(count: int) -> tuple[float, float]:
    """Notifications per second (wall clock, CPU time) from one Connection to a decoding
    client Connection. A client the sender's backlog limit dropped (it fell that far behind,
    on a machine too busy to let it read) fails the measurement instead of waiting forever."""
    server_sock, client_sock = socket.socketpair()
    done = asyncio.Event()
    received = 0

    def on_event(conn: Connection, params: Any) -> None:
        nonlocal received
        received += 1
        if received == count:
            done.set()

    client_router = Router()
    client_router.on_notification("session/event", on_event)
    reader, writer = await asyncio.open_unix_connection(sock=server_sock)
    server = Connection(reader, writer, Router(), name="bench")
    reader, writer = await asyncio.open_unix_connection(sock=client_sock)
    client = open_connection(reader, writer, client_router)
    event = MessageUpdate(delta=TextDelta(text="token "))
    started, cpu_started = time.perf_counter(), time.process_time()
    for seq in range(count):
        server.notify(
            "session/event", SessionEvent(session_id="3f2a9c4e7b1d0a56", seq=seq, event=event)
        )
        if seq % 256 == 0:
            await asyncio.sleep(0)
    try:
        await asyncio.wait_for(done.wait(), scaled(120))
    except TimeoutError:
        raise RuntimeError(f"{received} of {count} notifications arrived (dropped?)") from None
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    await client.close()
    await server.close()
    return count / elapsed, count / cpu


def idle_rss_mib(sandbox: IsolatedHome) -> float:
    """Resident memory of a settled socket daemon, in MiB."""
    process = sandbox.start_socket_daemon()
    try:
        time.sleep(0.5)  # an idle period: the row is the RSS of a daemon that has idled
        status = Path(f"/proc/{process.pid}/status").read_text()
        kib = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS"))
    finally:
        stop(process)
    return kib / 1024


def main() -> list[Row]:
    """Measure every RPC budget; returns (measure, value, budget) rows."""
    sandbox = IsolatedHome()
    try:
        start = stdio_start(sandbox)
        median, p99 = asyncio.run(stdio_round_trip(sandbox))
        echo = asyncio.run(echo_round_trip())
        rate, cpu_rate = asyncio.run(notification_rate(size(200_000, 2_000)))
        rss = idle_rss_mib(sandbox)
    finally:
        sandbox.cleanup()
    return [
        ("stdio start → initialize answered (median of 10)", f"{start * 1000:.0f} ms", "≤ 150 ms"),
        ("stdio round trip floor: a bare asyncio echo child (median)", f"{echo * 1e6:.0f} µs", "—"),
        (
            "stdio round trip daemon/status (median)",
            f"{median * 1e6:.0f} µs = {median / echo:.2f}× the echo",
            "≤ 1.6× the echo",
        ),
        ("stdio round trip daemon/status (p99)", f"{p99 * 1e6:.0f} µs", "—"),
        ("session/event notifications to one client", f"{rate / 1000:.0f}k/s", "≥ 200k/s"),
        ("  same, per CPU second (load-independent)", f"{cpu_rate / 1000:.0f}k/s", "—"),
        ("idle socket daemon RSS", f"{rss:.1f} MiB", "≤ 40 MiB"),
    ]


if __name__ == "__main__":
    rows = main()
    width = max(len(row[0]) for row in rows)
    for measure, value, budget in rows:
        print(f"{measure:<{width}}  {value:>10}  {budget}")
