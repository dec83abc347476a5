"""The chat's ``!command``: run a shell command for the user and keep its output as context.

The command runs in ``bash -c`` in the session's directory, in its own process group, with
output shown live and captured (head and tail kept when long). Ctrl-C stops it. The chat then
records the command and its output in the session with ``session/note`` (a user message the
model reads with the next prompt), so it is kept even if no prompt follows.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from dataclasses import dataclass
from typing import TextIO

MAX_CONTEXT_CHARS = 16_000
"""Longest output kept for the model; longer output keeps its head and tail."""


@dataclass
class ShellResult:
    """One finished ``!command``. ``exit_code`` is None when it was interrupted."""

    command: str
    output: str
    exit_code: int | None


def clip(text: str, limit: int = MAX_CONTEXT_CHARS) -> str:
    """``text`` with its middle replaced by a note when longer than ``limit`` characters."""
    if len(text) <= limit:
        return text
    head, tail = text[: limit // 4], text[-(limit - limit // 4) :]
    return f"{head}\n[… {len(text) - limit} characters omitted …]\n{tail}"


def run_shell(command: str, cwd: str, out: TextIO) -> ShellResult:
    """Run ``command``, echo its output to ``out`` as it comes, and return the result."""
    process = subprocess.Popen(
        ["bash", "-c", command],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    assert process.stdout is not None
    pipe = process.stdout
    chunks: list[str] = []
    try:
        for raw in iter(lambda: os.read(pipe.fileno(), 65536), b""):
            text = raw.decode("utf-8", "replace")
            chunks.append(text)
            out.write(text)
            out.flush()
        code: int | None = process.wait()
    except KeyboardInterrupt:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        code = None
    finally:
        pipe.close()
    output = "".join(chunks)
    if output and not output.endswith("\n"):
        out.write("\n")
    return ShellResult(command, output, code)


def format_context(result: ShellResult) -> str:
    """The text recorded in the session about a ``!command`` (as a ``session/note``)."""
    status = f"exit code {result.exit_code}" if result.exit_code is not None else "interrupted"
    body = clip(result.output.rstrip("\n")) or "(no output)"
    return f"I ran this shell command myself ({status}):\n$ {result.command}\n```\n{body}\n```"
