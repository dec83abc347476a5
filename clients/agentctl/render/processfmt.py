"""How background processes read in the terminal: ``running`` / ``exited 3`` /
``killed (SIGTERM)``, the ``⚙`` line printed for a ``process_start`` or ``process_exit``,
and the cells of ``agentctl ps``."""

from __future__ import annotations

from agentctl.render.toolfmt import format_seconds
from agentd.protocol.controls import escape_controls
from agentd.protocol.processes import ProcessInfo


def state_text(info: ProcessInfo) -> str:
    """``running``, ``exited 3``, ``killed (SIGTERM)``."""
    if info.state == "exited":
        return f"exited {info.exit_code}"
    if info.state == "killed":
        return f"killed ({info.signal})" if info.signal else "killed"
    return "running"


def process_line(info: ProcessInfo, *, started: bool) -> str:
    """``⚙ p1 started: npm run dev (pid 4242)`` / ``⚙ p1 exited 0 after 3.2s: npm run dev``."""
    if started:
        return f"⚙ {info.id} started: {command_text(info)} (pid {info.pid})"
    return f"⚙ {info.id} {state_text(info)} after {seconds(info.runtime_ms)}: {command_text(info)}"


def command_text(info: ProcessInfo, limit: int = 80) -> str:
    """The command on one line (control characters escaped, cut at ``limit``), with its
    description."""
    line = escape_controls(" ".join(info.command.split()))
    if len(line) > limit:
        line = line[: limit - 1] + "…"
    return f"{line} ({escape_controls(info.description)})" if info.description else line


def seconds(ms: float) -> str:
    return format_seconds(ms / 1000)


def size(count: int) -> str:
    """``812B``, ``4KB``, ``12MB``."""
    for unit in ("B", "KB", "MB"):
        if count < 1024:
            return f"{count}{unit}"
        count //= 1024
    return f"{count}GB"
