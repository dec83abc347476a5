"""What a run leaves on the terminal when it ends: the footer line (stop reason, turns,
tokens, cost, time, session) and, for ``--quiet``, the final assistant text."""

from __future__ import annotations

from agentctl.render.style import Style
from agentctl.render.toolfmt import format_cost, format_count, format_seconds
from agentctl.run.outcome import PERMISSION_REFUSED, RunSummary
from agentd.protocol.content import AssistantMessage
from agentd.protocol.events import Event, MessageEnd

STOP_LABELS = {
    "end_turn": "done",
    "max_turns": "max turns reached",
    "budget": "budget reached",
    "cancelled": "cancelled",
    "blocked": "blocked by a hook",
    "error": "error",
}


def format_footer(style: Style, summary: RunSummary) -> str:
    """``── done · 2 turns · 1.2k in / 345 out tokens · $0.0012 · 4.2s · session ID``."""
    label = STOP_LABELS.get(summary.stop_reason, summary.stop_reason)
    if summary.timed_out:
        label = "timed out"
    elif summary.interrupted:
        label = "interrupted"
    elif summary.exit_code == PERMISSION_REFUSED:
        label = "refused"
    good = summary.exit_code == 0
    painted = style.green(label) if good else style.yellow(label)
    if summary.stop_reason == "error":
        painted = style.red(label)
    tokens_in = int(summary.usage.get("inputTokens", 0))
    tokens_out = int(summary.usage.get("outputTokens", 0))
    parts = [
        f"{summary.turns} turn{'s' if summary.turns != 1 else ''}",
        f"{format_count(tokens_in)} in / {format_count(tokens_out)} out tokens",
    ]
    if summary.cost > 0:  # free (the mock) or unpriced models show no cost
        parts.append(format_cost(summary.cost))
    if summary.duration_ms:
        parts.append(format_seconds(summary.duration_ms / 1000))
    parts.append(f"session {summary.session_id}")
    return f"{style.dim('──')} {painted} {style.dim('· ' + ' · '.join(parts))}"


class FinalText:
    """Keeps the text of the last assistant message that had any (for ``--quiet``)."""

    def __init__(self) -> None:
        self.text = ""

    def event(self, event: Event) -> None:
        """Remember the text of a finished assistant message."""
        if isinstance(event, MessageEnd) and isinstance(event.message, AssistantMessage):
            text = event.message.text()
            if text.strip():
                self.text = text
