"""What the terminal renderer's spinner line shows: a running tool call, or the wait for the
model (with a retry countdown)."""

from __future__ import annotations

import time

import msgspec

from agentctl.render.style import Style
from agentctl.render.toolfmt import format_seconds

WAITING_LABEL = "thinking…"


class Call(msgspec.Struct):
    """A tool call being shown: its name, a one-line summary, and when it started."""

    name: str
    summary: str
    started: float


class Wait(msgspec.Struct):
    """The wait for the model: since ``started``, or a retry due at ``until``."""

    started: float
    until: float | None = None
    reason: str = ""
    label: str = WAITING_LABEL


def wait_text(wait: Wait, style: Style) -> str:
    """The spinner's text: the retry countdown while one is due, else the label and, after
    a second, the time waited."""
    now = time.monotonic()
    if wait.until is not None and now < wait.until:
        left = max(1, round(wait.until - now))
        return style.yellow(f"retrying in {left} s ({wait.reason})")
    elapsed = now - (wait.until or wait.started)
    suffix = style.dim(f"  {format_seconds(elapsed)}") if elapsed >= 1 else ""
    return style.dim(wait.label) + suffix
