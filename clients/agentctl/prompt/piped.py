"""The prompt of ``agentctl send``: its words, all of a piped stdin, or both.

Words plus a piped stdin (``git diff | agentctl send "review this diff"``) mean the
instruction plus the input: the prompt is the words, a note saying what was attached (lines,
size, whether it was cut), then the input between ``<stdin>`` tags. The attached input is
capped at :data:`STDIN_CAP` bytes; a larger one is cut there and the note says so (with its
full size, counted up to :data:`COUNT_LIMIT`). Only a pipe or a regular file on stdin is
read with words: a terminal, ``/dev/null`` or a socket is left alone, so a script that runs
``agentctl send "…"`` with an inherited stdin does not wait on it.
"""

from __future__ import annotations

import os
import stat
import sys
from typing import BinaryIO

from agentctl.common import UsageError

STDIN_CAP = 256 * 1024
"""The most bytes of a piped stdin attached to a prompt given as words."""
COUNT_LIMIT = 64 * 1024 * 1024
"""How far past the cap a larger input is read to tell its size."""
_CHUNK = 64 * 1024


class Prompt:
    """The prompt to send (``text``), what a report shows of it (``shown``: the words and
    the note, not the attached input) and the note about the input (``note``, or None)."""

    __slots__ = ("note", "shown", "text")

    def __init__(self, text: str, shown: str, note: str | None = None) -> None:
        self.text = text
        self.shown = shown
        self.note = note


def read_prompt(words: list[str], stdin_tty: bool, stdin: BinaryIO | None = None) -> Prompt:
    """The prompt (see the module docstring). ``stdin`` defaults to ``sys.stdin.buffer``;
    :class:`~agentctl.common.UsageError` for no prompt at all or one that is only whitespace."""
    instruction = " ".join(words)
    stream = stdin if stdin is not None else _stdin_buffer()
    if not words:
        if stdin_tty or stream is None:
            raise UsageError("no prompt: pass it as arguments or pipe it on stdin")
        text = stream.read().decode("utf-8", errors="replace")
        if not text.strip():
            raise UsageError("the prompt is empty")
        return Prompt(text, text)
    if not instruction.strip():
        raise UsageError("the prompt is empty")
    if stdin_tty or stream is None or not _is_pipe_or_file(stream):
        return Prompt(instruction, instruction)
    return attach(instruction, stream)


def attach(instruction: str, stream: BinaryIO) -> Prompt:
    """``instruction`` with what ``stream`` holds attached (up to :data:`STDIN_CAP` bytes);
    the instruction alone when the stream is empty."""
    kept = _read_at_most(stream, STDIN_CAP + 1)
    if not kept.strip():
        return Prompt(instruction, instruction)
    total = len(kept)
    cut = total > STDIN_CAP
    if cut:
        kept = kept[:STDIN_CAP]
        total += _count(stream, COUNT_LIMIT - total)
    body = kept.decode("utf-8", errors="replace")
    note = describe(body, len(kept), total, cut)
    text = f"{instruction}\n\n[{note}]\n<stdin>\n{body.rstrip(chr(10))}\n</stdin>\n"
    return Prompt(text, f"{instruction}\n\n[{note}]", note)


def describe(body: str, kept: int, total: int, cut: bool) -> str:
    """``stdin attached: 40 lines, 1.2 KB`` or, cut, ``stdin attached: the first 256 KB
    (5012 lines) of 1.5 MB; the rest was cut``."""
    lines = body.count("\n") + (0 if body.endswith("\n") else 1)
    plural = "s" if lines != 1 else ""
    if not cut:
        return f"stdin attached: {lines} line{plural}, {size(kept)}"
    whole = size(total) if total < COUNT_LIMIT else f"more than {size(COUNT_LIMIT)}"
    return (
        f"stdin attached: the first {size(kept)} ({lines} line{plural}) of {whole}; "
        "the rest was cut"
    )


def size(count: int) -> str:
    """``812 B``, ``1.2 KB``, ``3.4 MB``."""
    if count < 1024:
        return f"{count} B"
    if count < 1024 * 1024:
        return f"{count / 1024:.1f} KB".replace(".0 KB", " KB")
    return f"{count / 1024 / 1024:.1f} MB".replace(".0 MB", " MB")


def _stdin_buffer() -> BinaryIO | None:
    stream: BinaryIO | None = getattr(sys.stdin, "buffer", None)
    return stream


def _is_pipe_or_file(stream: BinaryIO) -> bool:
    try:
        mode = os.fstat(stream.fileno()).st_mode
    except (AttributeError, OSError, ValueError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISREG(mode)


def _read_at_most(stream: BinaryIO, limit: int) -> bytes:
    parts: list[bytes] = []
    left = limit
    while left > 0:
        chunk = stream.read(min(_CHUNK, left))
        if not chunk:
            break
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


def _count(stream: BinaryIO, limit: int) -> int:
    seen = 0
    while seen < limit:
        chunk = stream.read(min(_CHUNK, limit - seen))
        if not chunk:
            break
        seen += len(chunk)
    return seen
