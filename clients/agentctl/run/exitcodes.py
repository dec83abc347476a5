"""agentctl's exit codes and their words: the one list ``--help``, :mod:`agentctl.run.outcome`
and the READMEs (``README.md``'s "Using it", ``clients/agentctl/README.md``'s "Exit codes")
show; a test keeps the READMEs equal to :data:`EXIT_CODES`. Standard library only: the
argparse grammar imports it."""

from __future__ import annotations

OK = 0
AGENT_ERROR = 1
USAGE_ERROR = 2
MAX_TURNS = 3
TIMEOUT = 4
PERMISSION_REFUSED = 5
BUDGET = 6
CANCELLED = 7
BLOCKED = 8
REWIND_CONFLICTS = 9
INTERRUPTED = 130
OUTPUT_CLOSED = 141

EXIT_CODES: tuple[tuple[int, str], ...] = (
    (OK, "done"),
    (AGENT_ERROR, "agent, provider or daemon error"),
    (USAGE_ERROR, "usage or configuration error"),
    (MAX_TURNS, "max turns reached"),
    (TIMEOUT, "timeout"),
    (PERMISSION_REFUSED, "permission refused"),
    (BUDGET, "budget reached"),
    (CANCELLED, "cancelled from elsewhere"),
    (BLOCKED, "blocked by a hook"),
    (REWIND_CONFLICTS, "rewind stopped by conflicts"),
    (INTERRUPTED, "interrupted"),
    (OUTPUT_CLOSED, "stdout closed"),
)
"""Every exit code with the words that name it, in order."""


def exit_code_words() -> str:
    """``0 done, 1 agent, provider or daemon error, …, 141 stdout closed``."""
    return "; ".join(f"{code} {words}" for code, words in EXIT_CODES)
