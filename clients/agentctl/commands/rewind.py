"""``agentctl rewind [ID] [--turns N] [--force]``: take a session back to before a prompt.

Calls ``session/rewind`` on the shared daemon (started when none runs) and prints what it
did, one line per file (paths relative to the working directory when beneath it):
``restored``, ``removed`` and ``conflict`` lines (with the reason).
``--json`` prints the result object instead; ``--dry-run`` says what it would do. Without
ID, the latest session of ``--cwd`` (default: the current directory) is rewound.

A rewind that meets conflicts (a file changed outside agentd since, one whose earlier
content was not kept) moves nothing. On a terminal (stdin and stdout, no ``--json``) the
conflicts are shown and agentctl asks whether to rewind anyway: yes forces the same rewind
(the same prompt, by its entry id). Otherwise, or answered no, it exits
:data:`~agentctl.exitcodes.REWIND_CONFLICTS`; ``--force`` rewinds anyway (changed files are
overwritten, unrestorable ones left and listed).
"""

from __future__ import annotations

import asyncio
import io
import os
import sys
import termios
import tty
from typing import TextIO

import msgspec

from agentctl.client import AgentClient
from agentctl.common import UsageError, open_client, resolve_cwd, resolve_session_ids, run_command
from agentctl.options import RewindOptions
from agentctl.run import outcome
from agentd.protocol.methods import SessionListParams
from agentd.protocol.rewind import SessionRewindParams, SessionRewindResult


def rewind_main(options: RewindOptions) -> int:
    """Entry point of ``agentctl rewind``."""
    return run_command(lambda: _rewind(options))


async def _rewind(options: RewindOptions) -> int:
    cwd = resolve_cwd(options.cwd)
    async with await open_client(options) as client:  # starts the shared daemon if needed
        options = await resolve_session_ids(client, options)
        session_id = options.session_id or await _latest(client, cwd)
        params = SessionRewindParams(
            session_id=session_id,
            turns=options.turns,
            entry_id=options.entry,
            files=not options.no_files,
            force=options.force,
            dry_run=options.dry_run,
        )
        result = await client.sessions.rewind(params)
        if _stopped(result, options) and _may_ask(options):
            sys.stdout.write(format_rewind(result, session_id, cwd))
            if await _ask_to_force():
                forced = SessionRewindParams(
                    session_id=session_id,
                    entry_id=result.entry_id,
                    files=params.files,
                    force=True,
                )
                result = await client.sessions.rewind(forced)
            else:
                return outcome.REWIND_CONFLICTS
    if options.json:
        sys.stdout.buffer.write(msgspec.json.encode(result) + b"\n")
    else:
        sys.stdout.write(format_rewind(result, session_id, cwd, dry_run=options.dry_run))
    return outcome.REWIND_CONFLICTS if _stopped(result, options) else outcome.OK


def _stopped(result: SessionRewindResult, options: RewindOptions) -> bool:
    """Whether conflicts stopped the rewind (nothing moved; a dry run is not stopped)."""
    return not result.applied and not options.dry_run


def _may_ask(options: RewindOptions) -> bool:
    """Whether to ask before forcing: people at a terminal, not a script reading JSON."""
    return not options.json and _is_terminal(sys.stdin) and _is_terminal(sys.stdout)


def _is_terminal(stream: TextIO) -> bool:
    try:
        return os.isatty(stream.fileno())
    except (OSError, ValueError, io.UnsupportedOperation):
        return False


async def _ask_to_force() -> bool:
    """Ask on the terminal whether to rewind anyway (one key; Enter is no)."""
    yes = await asyncio.to_thread(_one_key, QUESTION) in ("y", "yes")
    sys.stdout.write("yes\n" if yes else "no: nothing was rewound\n")
    return yes


QUESTION = "Rewind anyway (changed files are overwritten)? [y/N] "


def _one_key(question: str) -> str:
    """Show ``question`` once the terminal reads single keys (so a key typed as soon as it
    shows is not flushed away), and answer the key, lower-cased."""
    fd = sys.stdin.fileno()
    saved = termios.tcgetattr(fd)
    tty.setcbreak(fd)
    try:
        sys.stdout.write(question)
        sys.stdout.flush()
        key = os.read(fd, 1)
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)
        termios.tcflush(fd, termios.TCIFLUSH)
    return key.decode("utf-8", "replace").strip().lower()


async def _latest(client: AgentClient, cwd: str) -> str:
    page = await client.sessions.list(SessionListParams(cwd=cwd, limit=1))
    if not page.sessions:
        raise UsageError(f"no session to rewind in {cwd}")
    return page.sessions[0].session_id


def format_rewind(
    result: SessionRewindResult,
    session_id: str,
    cwd: str,
    *,
    dry_run: bool = False,
    force_hint: str = "--force",
) -> str:
    """The result for people: a heading, then one line per file (``dry_run``: what a rewind
    would do; a result not applied and not a dry run: the conflicts that stopped it, and how
    to force it: ``force_hint``)."""
    prompt = " ".join(result.prompt.split())
    shown = prompt if len(prompt) <= 60 else prompt[:59] + "…"
    stopped = not result.applied and not dry_run
    would = dry_run or stopped
    if stopped:
        lines = [f"not rewound: {session_id} to before: {shown} meets conflicts"]
    else:
        lines = [f"{'would rewind' if dry_run else 'rewound'} {session_id} to before: {shown}"]
    for conflict in result.conflicts:
        lines.append(f"  conflict  {_relative(conflict.path, cwd)}: {conflict.message}")
    lines += [f"  {_verb('restore', would)}  {_relative(p, cwd)}" for p in result.restored]
    lines += [f"  {_verb('remove', would)}   {_relative(p, cwd)}" for p in result.removed]
    if not (result.restored or result.removed or result.conflicts):
        lines.append("  (no files to restore)")
    if stopped:
        lines.append(
            f"nothing was changed; {force_hint} rewinds to before the same prompt anyway "
            "(changed files are overwritten, the others left alone)"
        )
    elif dry_run and result.conflicts:
        lines.append(f"conflicts stop a rewind (nothing is changed) unless {force_hint}")
    elif result.conflicts:
        lines.append("the conflicting files were left alone")
    return "\n".join(lines) + "\n"


def _verb(word: str, dry_run: bool) -> str:
    return word if dry_run else word + "d"


def _relative(path: str, cwd: str) -> str:
    prefix = cwd.rstrip("/") + "/"
    return path[len(prefix) :] if path.startswith(prefix) else path
