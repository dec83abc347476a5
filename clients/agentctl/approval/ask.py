"""Answering ``session/requestPermission`` at the terminal (``--permission ask``).

The question goes to stderr; the answer is read from stdin without blocking the event loop
(``loop.add_reader``), so events, timeouts and Ctrl-C keep working while the user thinks.
Above the question: what the call would do (the daemon's preview: the diff, the command and
its directory, the URL, the MCP call; :mod:`agentctl.approval.preview`); ``[a]lways`` names the rule
it adds for this session, ``[p]roject`` keeps it in the user's config for the folder. On a
terminal one key answers (no Enter needed; the terminal is in cbreak mode only while
asking); from a pipe a line does. Enter, an empty answer or end of input refuses (the
default, shown as ``[N]o``): nothing runs without an explicit yes.

What is shown is never what a terminal would make of it: every control character and bidi
override in the request (the command, its arguments, names) is written as a visible escape
(``\x1b``, ``\r``, ``\u202e``; :func:`agentd.protocol.controls.scrub`), with a warning line
when there was any, so the command asked about is the command that runs.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from typing import TextIO

from agentctl.approval.preview import preview_lines
from agentctl.render.style import Style, terminal_width
from agentctl.render.toolfmt import describe_call, shorten
from agentd.protocol.controls import scrub
from agentd.protocol.events import PermissionOption
from agentd.protocol.methods import RequestPermissionParams

ANSWERS: dict[str, PermissionOption] = {
    "y": "allow_once",
    "yes": "allow_once",
    "a": "allow_always",
    "always": "allow_always",
    "n": "reject_once",
    "no": "reject_once",
    "": "reject_once",
    "p": "allow_always_project",
    "project": "allow_always_project",
    "v": "reject_always",
    "never": "reject_always",
}

MAX_ATTEMPTS = 3
HINT = "  answer y, n, a (always this session), p (always in this project) or v (never)"
CONTROLS_WARNING = (
    "  ! this call holds control or bidi characters, shown escaped (\\x1b, \\r, \\u202e): "
    "a terminal would have hidden or reordered them"
)


def parse_answer(text: str) -> PermissionOption | None:
    """The option a typed answer stands for (case-insensitive), or None if unrecognised."""
    return ANSWERS.get(text.strip().lower())


def question(style: Style, params: RequestPermissionParams, cwd: str | None) -> str:
    """The one-line question shown for a permission request; ``[a]lways`` names the rule it
    adds and that it lasts for this session; ``always in this [p]roject`` (when offered)
    keeps the rule in the user's config for the session's folder."""
    summary = shorten(describe_call(params.tool, params.args, cwd), 200)
    rule = f" ({params.always_rule})" if params.always_rule else ""
    choices = ["[y]es", "[N]o", f"[a]lways this session{rule}"]
    if "allow_always_project" in params.options:
        choices.append("always in this [p]roject")
    choices.append("ne[v]er this session")
    shown = style.dim(" / ".join(choices))
    return f"{style.yellow('?')} allow {style.bold(params.tool)}  {summary}  {shown} "


def preview_block(style: Style, params: RequestPermissionParams) -> str:
    """What the call would do (the daemon's preview), shown once above the question."""
    lines = preview_lines(style, params.preview, terminal_width())
    return "".join(line + "\n" for line in lines)


WORDS: dict[PermissionOption, str] = {
    "allow_once": "yes",
    "allow_always": "always (this session)",
    "allow_always_project": "always in this project (saved in your config)",
    "reject_once": "no",
    "reject_always": "never (this session)",
}


async def read_answer(fd: int) -> str | None:
    """One key from a terminal (cbreak mode while waiting), else one line; None at EOF."""
    if not os.isatty(fd):
        return await read_line(fd)
    import termios
    import tty

    saved = termios.tcgetattr(fd)
    tty.setcbreak(fd)
    try:
        return await read_line(fd, size=1)
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


async def read_line(fd: int, size: int = 4096) -> str | None:
    """Up to ``size`` bytes from ``fd`` without their line end, or None at end of input."""
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[None] = loop.create_future()

    def on_readable() -> None:
        if not ready.done():
            ready.set_result(None)

    loop.add_reader(fd, on_readable)
    try:
        await ready
    finally:
        loop.remove_reader(fd)
    data = os.read(fd, size)
    if not data:
        return None
    return data.decode("utf-8", "replace").rstrip("\r\n")


class TerminalApprover:
    """A permission handler that asks the person at the terminal.

    ``before_asking`` is called first (the renderer stops its spinner there); the allowed
    option must be one the daemon offered, otherwise the request is refused.
    """

    def __init__(
        self,
        err: TextIO,
        style: Style,
        *,
        before_asking: Callable[[], None] = lambda: None,
        input_fd: int = 0,
        cwd: str | None = None,
    ) -> None:
        self.err = err
        self.style = style
        self.before_asking = before_asking
        self.input_fd = input_fd
        self.cwd = cwd

    async def __call__(self, params: RequestPermissionParams) -> PermissionOption:
        self.before_asking()
        shown = scrub(params, crlf=False)
        self.err.write(preview_block(self.style, shown))
        if shown is not params:
            self.err.write(self.style.yellow(CONTROLS_WARNING) + "\n")
        params = shown
        for _ in range(MAX_ATTEMPTS):
            self.err.write(question(self.style, params, self.cwd))
            self.err.flush()
            line = await read_answer(self.input_fd)
            if line is None:
                self.err.write("\n")
                return "reject_once"
            answer = parse_answer(line)
            if answer is not None:
                chosen = answer if answer in params.options else "reject_once"
                if os.isatty(self.input_fd):
                    self.err.write(WORDS[chosen] + "\n")
                return chosen
            self.err.write(self.style.dim(HINT) + "\n")
        return "reject_once"
