"""The daemon's error messages in agentctl's terms.

The daemon words its errors for any JSON-RPC client ("see session/list", "pass force: true");
at the command line the same advice reads as commands and flags. :func:`cli_words` rewrites
the phrases agentctl knows and leaves everything else as it is.
"""

from __future__ import annotations

import re

_REWRITES: tuple[tuple[str, str], ...] = (
    (r"\(see session/list\)", "(see `agentctl sessions list`)"),
    (
        r"session (\S+) is running; cancel it or pass force: true",
        r"session \1 is running; cancel it (`agentctl cancel \1`) or use --force",
    ),
    (
        r"session (\S+) is running; wait for it to finish, or use session/steer, "
        r"session/followUp or session/cancel",
        r"session \1 is running; wait for it to finish, or stop it with `agentctl cancel \1`",
    ),
    (r"send the text with session/prompt", "send it with `agentctl send --session ID`"),
    (
        r"run with permission mode 'auto', or connect a client that handles "
        r"session/requestPermission",
        "use --permission auto, or --permission ask on a terminal",
    ),
    (r"or pass provider\b", "or pass --provider"),
    (r"the client's environment, sent with the request", "agentctl's environment"),
    (r"`cwd` must be", "--cwd must be"),
)
"""Patterns and their replacements, compiled (and cached) by ``re`` when the first message is
rewritten: most runs have none."""


def cli_words(message: str) -> str:
    """``message`` with protocol jargon replaced by agentctl commands and flags."""
    for pattern, replacement in _REWRITES:
        message = re.sub(pattern, replacement, message)
    return message
