"""``agentctl rewind [ID] [--turns N] [--force]``: take a session back to before a prompt.

Calls ``session/rewind`` on the shared daemon (started when none runs) and prints what it
did, one line per file (paths relative to the working directory when beneath it):
``restored``, ``removed`` and ``conflict`` lines (with the reason; ``--force`` restores
files changed outside agentd).
``--json`` prints the result object instead; ``--dry-run`` says what it would do. Without
ID, the latest session of ``--cwd`` (default: the current directory) is rewound.
"""

from __future__ import annotations

import sys

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
    if options.json:
        sys.stdout.buffer.write(msgspec.json.encode(result) + b"\n")
    else:
        sys.stdout.write(format_rewind(result, session_id, cwd, dry_run=options.dry_run))
    return outcome.OK


async def _latest(client: AgentClient, cwd: str) -> str:
    page = await client.sessions.list(SessionListParams(cwd=cwd, limit=1))
    if not page.sessions:
        raise UsageError(f"no session to rewind in {cwd}")
    return page.sessions[0].session_id


def format_rewind(
    result: SessionRewindResult, session_id: str, cwd: str, *, dry_run: bool = False
) -> str:
    """The result for people: a heading, then one line per file (``dry_run``: what a rewind
    would do)."""
    prompt = " ".join(result.prompt.split())
    shown = prompt if len(prompt) <= 60 else prompt[:59] + "…"
    verb = "would rewind" if dry_run else "rewound"
    lines = [f"{verb} {session_id} to before: {shown}"]
    lines += [f"  {_verb('restore', dry_run)}  {_relative(p, cwd)}" for p in result.restored]
    lines += [f"  {_verb('remove', dry_run)}   {_relative(p, cwd)}" for p in result.removed]
    for conflict in result.conflicts:
        lines.append(f"  conflict  {_relative(conflict.path, cwd)}: {conflict.message}")
    if not (result.restored or result.removed or result.conflicts):
        lines.append("  (no files to restore)")
    if any(c.reason == "changed" for c in result.conflicts):
        lines.append("files changed outside agentd were left alone; --force restores them")
    return "\n".join(lines) + "\n"


def _verb(word: str, dry_run: bool) -> str:
    return word if dry_run else word + "d"


def _relative(path: str, cwd: str) -> str:
    prefix = cwd.rstrip("/") + "/"
    return path[len(prefix) :] if path.startswith(prefix) else path
