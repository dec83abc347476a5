"""``agentctl chat``'s ``/rewind [N]`` and ``/compact [INSTRUCTIONS]``.

``/rewind [N]`` takes the session back to before its N-th last prompt (default 1), files
included, as ``agentctl rewind`` does (``session/rewind``), prints the same report, and puts
the prompt it went back over (a one-line one) on the next input line, ready to edit and send
again. A rewind that meets conflicts moves nothing and says so; ``/rewind [N] --force``
rewinds anyway. ``/compact`` summarises the older messages now (``session/compact``, with optional
instructions for the summary) and says how many tokens of context that saved.
"""

from __future__ import annotations

from agentctl.client import AgentClient
from agentctl.commands.rewind import format_rewind
from agentctl.common import UsageError
from agentd.protocol.methods import CompactParams, CompactResult
from agentd.protocol.rewind import SessionRewindParams, SessionRewindResult


def rewind_args(words: list[str]) -> tuple[int, bool]:
    """The N of ``/rewind [N] [--force]`` and whether ``--force`` was given."""
    force = "--force" in words
    return rewind_turns([word for word in words if word != "--force"]), force


def rewind_turns(words: list[str]) -> int:
    """The N of ``/rewind [N]`` (1 without one); UsageError for anything but a number ≥ 1."""
    if not words:
        return 1
    if len(words) > 1 or not words[0].isdigit() or int(words[0]) < 1:
        raise UsageError("usage: /rewind [N] (N: how many prompts back, at least 1)")
    return int(words[0])


async def rewind(
    client: AgentClient, session_id: str, turns: int, *, force: bool = False
) -> SessionRewindResult:
    """``session/rewind`` of the chat's session, ``turns`` prompts back, files included."""
    params = SessionRewindParams(session_id=session_id, turns=turns, force=force)
    return await client.sessions.rewind(params)


def rewind_report(result: SessionRewindResult, session_id: str, cwd: str) -> tuple[str, str]:
    """What to print (``agentctl rewind``'s report) and the text to put back on the input
    line: the prompt gone back over, when it is one line (empty otherwise, and when conflicts
    stopped the rewind)."""
    report = format_rewind(result, session_id, cwd, force_hint="/rewind --force").rstrip("\n")
    prompt = result.prompt.strip() if result.applied else ""
    return report, prompt if prompt and "\n" not in prompt else ""


async def compact(client: AgentClient, session_id: str, instructions: str) -> CompactResult:
    """``session/compact`` of the chat's session (``instructions``: for the summary)."""
    params = CompactParams(session_id=session_id, instructions=instructions or None)
    return await client.sessions.compact(params)


def compact_report(result: CompactResult) -> str:
    """``compacted: 12.4k → 1.9k tokens of context`` or why nothing was done."""
    if not result.compacted:
        return "nothing to compact yet (the conversation is short)"
    before, after = _tokens(result.tokens_before), _tokens(result.tokens_after)
    return f"compacted: {before} → {after} tokens of context"


def _tokens(count: int) -> str:
    return f"{count / 1000:.1f}k" if count >= 1000 else str(count)
