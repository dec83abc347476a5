"""Tab completion of ``/`` names in ``agentctl chat``: the chat's own commands first, then the
session's custom commands (``session/commands``, read again before every prompt line).

Only the first word of a line is completed, and only when it starts with ``/``; the chat's
built-ins (``/help``, ``/clear``…) win over a custom command of the same name, which the help
text then marks as hidden.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentd.protocol.commands import CommandInfo

BUILT_INS: dict[str, str] = {
    "/help": "this text",
    "/clear": "start a new session",
    "/sessions": "sessions of this directory; with an id (or prefix), switch to it",
    "/model": "list the models, or switch (/model PROVIDER NAME: provider too)",
    "/image": "attach an image (PNG, JPEG, GIF, WebP) to your next message",
    "/rewind": "go back to before the last prompt (/rewind N: N prompts), files included",
    "/compact": "summarise older messages now (/compact INSTRUCTIONS: what to keep)",
    "/exit": "leave (also Ctrl-D, or Ctrl-C when idle)",
    "/quit": "leave",
}
"""The chat's own commands: handled by the chat, never sent to the daemon."""


class SlashCompleter:
    """A readline completer over the built-ins and the current session's custom commands."""

    def __init__(self) -> None:
        self.custom: list[CommandInfo] = []
        self._matches: list[str] = []

    def names(self) -> list[str]:
        """Every ``/name`` a line may start with, built-ins first."""
        custom = [f"/{c.name}" for c in self.custom if f"/{c.name}" not in BUILT_INS]
        return [*BUILT_INS, *custom]

    def candidates(self, line: str, begidx: int, text: str) -> list[str]:
        """The completions of ``text``, the word of ``line`` that starts at ``begidx``: ``/``
        names (each followed by a space) when it is the line's first word."""
        if line[:begidx].strip() or not text.startswith("/"):
            return []
        return [f"{name} " for name in self.names() if name.startswith(text)]

    def complete(self, text: str, state: int) -> str | None:
        """The readline completer function (``state``-th match of ``text``)."""
        import readline

        if state == 0:
            self._matches = self.candidates(readline.get_line_buffer(), readline.get_begidx(), text)
        return self._matches[state] if state < len(self._matches) else None

    def install(self) -> None:
        """Make this readline's completer, Tab its key, words split at blanks only (so
        ``/name`` is one word). Nothing happens without readline."""
        try:
            import readline
        except ImportError:
            return
        readline.set_completer_delims(" \t\n")
        readline.set_completer(self.complete)
        binding = (
            "bind ^I rl_complete" if "libedit" in (readline.__doc__ or "") else "tab: complete"
        )
        readline.parse_and_bind(binding)


def custom_help(commands: Sequence[CommandInfo]) -> str:
    """The help text's list of custom commands (empty when there are none)."""
    if not commands:
        return ""
    lines = ["custom commands (.agentd/commands/, ~/.config/agentd/commands/):"]
    for command in commands:
        usage = f"/{command.name} {command.argument_hint or ''}".rstrip()
        hidden = " (hidden by the chat's own command)" if f"/{command.name}" in BUILT_INS else ""
        lines.append(f"  {usage:<21} {command.description}{hidden}")
    return "\n".join(lines)
