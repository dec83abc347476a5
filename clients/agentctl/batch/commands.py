"""A task's ``setup`` and ``check`` commands: ``sh -c`` in the workspace, output to a file.

A command runs in its own process group with a small environment (``PATH``, ``HOME``,
``LANG``, ``LC_ALL``, ``TMPDIR``, ``USER``, ``TERM`` of the batch, plus the task's ``env``
names, plus ``AGENTD_BATCH_TASK`` = the task id); its output (stdout and stderr together)
goes to a temporary file renamed into place at the end. A timeout or a stop request kills
the whole group.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Iterable
from pathlib import Path

from agentctl.batch.engine import StopRequest

BASE_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "USER", "TERM")
TIMED_OUT = 124
"""The exit code recorded for a command that ran out of time (as ``timeout(1)`` does)."""


def command_env(task_id: str, names: Iterable[str]) -> dict[str, str]:
    """The environment of a task's commands (see the module docstring)."""
    env = {name: os.environ[name] for name in (*BASE_ENV, *names) if name in os.environ}
    env["AGENTD_BATCH_TASK"] = task_id
    return env


async def run_command(
    command: str,
    cwd: str,
    output: Path,
    env: dict[str, str],
    timeout: float,
    stop: StopRequest,
) -> int | None:
    """Run ``command``; its exit code (:data:`TIMED_OUT` after ``timeout`` s; a signal's
    negative number), or None when ``stop`` ended it."""
    output.parent.mkdir(parents=True, exist_ok=True)
    temporary = output.with_name(f".{output.name}.tmp")
    with temporary.open("wb") as sink:
        process = await asyncio.create_subprocess_exec(
            "sh", "-c", command, cwd=cwd, env=env, stdin=asyncio.subprocess.DEVNULL,
            stdout=sink, stderr=asyncio.subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    stopped = asyncio.Event()
    stop.on_set(lambda _reason: stopped.set())
    waiter = asyncio.create_task(process.wait())
    stopper = asyncio.create_task(stopped.wait())
    done, _ = await asyncio.wait({waiter, stopper}, timeout=timeout, return_when="FIRST_COMPLETED")
    stopper.cancel()
    code: int | None
    if waiter in done:
        code = waiter.result()
    else:
        _kill_group(process.pid)
        await waiter
        code = None if stop.reason is not None else TIMED_OUT
        with temporary.open("ab") as sink:
            note = "stopped" if code is None else f"timed out after {timeout:g} s"
            sink.write(f"\n[agentctl batch: {note}]\n".encode())
    temporary.replace(output)
    return code


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
