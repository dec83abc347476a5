"""``agentctl daemon start|stop|status|metrics|logs``: manage the shared daemon."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

from agentctl import launch
from agentctl.client import AgentClient, DaemonUnavailable, connect, start_daemon
from agentctl.commands.sessions import command_main, print_json
from agentctl.common import run_command, socket_option
from agentctl.options import DaemonOptions, StatusOptions
from agentctl.run import outcome

STOP_WAIT_S = 5.0
FOLLOW_POLL_S = 0.2


def daemon_main(options: DaemonOptions) -> int:
    """Entry point of ``agentctl daemon``."""
    if options.action == "logs":
        pretty = not options.json
        return show_logs(launch.log_file(), options.lines, follow=options.follow, pretty=pretty)
    if options.action == "status":
        return command_main(
            StatusOptions(command="status", socket=options.socket, json=options.json)
        )
    if options.action == "metrics":
        return run_command(lambda: _metrics(launch.socket_path(socket_option(options)), options))
    action = _start if options.action == "start" else _stop
    return run_command(lambda: action(launch.socket_path(socket_option(options))))


async def _start(path: str) -> int:
    try:
        client = await connect(path)
    except DaemonUnavailable:
        reader, writer = await start_daemon(path)
        client = AgentClient(reader, writer, transport="unix")
        await client.initialize()
        verb = "started"
    else:
        verb = "already running"
    async with client:
        status = await client.status()
    sys.stdout.write(f"agentd {verb} (pid {status.pid}, {path})\n")
    return outcome.OK


async def _metrics(path: str, options: DaemonOptions) -> int:
    """``daemon metrics``: ``daemon/metrics`` as ``name value`` lines (``--json``: as is)."""
    try:
        client = await connect(path)
    except DaemonUnavailable as exc:
        sys.stderr.write(f"agentctl: not running: {exc}\n")
        return outcome.AGENT_ERROR
    async with client:
        metrics = await client.call("daemon/metrics", {})
    if options.json:
        print_json(metrics)
        return outcome.OK
    for name, value in metrics.items():
        if isinstance(value, dict):
            shown = ", ".join(f"{key} {count}" for key, count in value.items()) or "none"
        else:
            shown = str(value).lower() if isinstance(value, bool) else str(value)
        sys.stdout.write(f"{name:<16} {shown}\n")
    return outcome.OK


async def _stop(path: str) -> int:
    try:
        client = await connect(path)
    except DaemonUnavailable:
        sys.stdout.write("agentd is not running\n")
        return outcome.OK
    async with client:
        pid = (await client.status()).pid
        await client.shutdown()
    if not await _wait_gone(path):
        sys.stderr.write(f"agentctl: agentd (pid {pid}) still answers after shutdown\n")
        return outcome.AGENT_ERROR
    sys.stdout.write(f"agentd stopped (pid {pid})\n")
    return outcome.OK


async def _wait_gone(path: str) -> bool:
    """Wait until nothing accepts connections on ``path`` any more."""
    deadline = time.monotonic() + STOP_WAIT_S
    while time.monotonic() < deadline:
        try:
            _, writer = await asyncio.open_unix_connection(path)
        except OSError:
            return True
        writer.close()
        await writer.wait_closed()
        await asyncio.sleep(0.05)
    return False


def show_logs(path: Path, lines: int, *, follow: bool, pretty: bool = False) -> int:
    """Print the last ``lines`` lines of the log; with ``follow`` keep printing new ones;
    ``pretty`` shows each JSON line as ``HH:MM:SS level event key=value…``.

    Following starts exactly where the printed tail ends, so no line is lost or repeated;
    a log that shrinks (rotated or truncated) is followed from its start. Ctrl-C ends it (0).
    """
    if not path.exists() and not follow:
        sys.stderr.write(f"agentctl: no log yet at {path}\n")
        return outcome.AGENT_ERROR
    tail, position = _tail(path, lines)
    if tail:
        sys.stdout.write((pretty_log(tail) if pretty else tail) + "\n")
        sys.stdout.flush()
    if not follow:
        return outcome.OK
    try:
        _follow(path, position, pretty)
    except KeyboardInterrupt:
        return outcome.OK
    return outcome.OK


def _tail(path: Path, lines: int) -> tuple[str, int]:
    """The last ``lines`` lines of the log (from its last 64 KiB) and the offset they end at."""
    try:
        with path.open("rb") as log:
            size = log.seek(0, 2)
            log.seek(max(0, size - launch.LOG_TAIL_BYTES))
            data = log.read(size)
    except OSError:
        return "", 0
    position = max(0, size - launch.LOG_TAIL_BYTES) + len(data)
    if lines <= 0:
        return "", position
    return launch.last_lines(data, lines), position


def pretty_log(text: str) -> str:
    """Each JSON log line as ``HH:MM:SS level event key=value…``; other lines unchanged."""
    return "\n".join(_pretty_line(line) for line in text.split("\n"))


def _pretty_line(line: str) -> str:
    try:
        record = json.loads(line)
    except ValueError:
        return line
    if not isinstance(record, dict):
        return line
    stamp = str(record.pop("timestamp", ""))
    clock = stamp[11:19] if len(stamp) >= 19 else stamp
    level = str(record.pop("level", "")).ljust(7)
    event = str(record.pop("event", ""))
    extra = " ".join(f"{key}={value}" for key, value in record.items())
    return f"{clock} {level} {event}" + (f"  {extra}" if extra else "")


def _follow(path: Path, position: int, pretty: bool = False) -> None:
    partial = ""
    while True:
        time.sleep(FOLLOW_POLL_S)
        try:
            size = path.stat().st_size
        except FileNotFoundError:
            continue
        if size < position:
            position = 0
        if size > position:
            with path.open("rb") as log:
                log.seek(position)
                data = log.read()
            position += len(data)
            text = data.decode("utf-8", "replace")
            if pretty:
                complete, _, partial = (partial + text).rpartition("\n")
                text = pretty_log(complete) + "\n" if complete else ""
            sys.stdout.write(text)
            sys.stdout.flush()
