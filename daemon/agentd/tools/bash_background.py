"""``bash`` with ``background: true``: start the command and return at once.

The command gets what a foreground call gets: the permission decision was the same call's
(the approver saw ``background`` among its arguments), the same environment filtering, the
same workspace sandbox (bubblewrap or Landlock, :func:`agentd.tools.bash_setup.confinement`), the
same process group, marker, registry entry and death signal; its file changes are found by
the same tree watch (:meth:`agentd.tools.base.FileChanges.watching`), held from before it
starts until it ends, so ``session/rewind`` knows what it created. It starts in the
session's working directory and does not move it.

The call waits :data:`GRACE_SECONDS` for first output (less when the process ends sooner),
then returns its id, pid and that output; the process is the session's from then on
(:class:`~agentd.tools.process.table.ProcessTable`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time

from agentd.protocol.processes import ProcessDetails
from agentd.tools.base import ToolContext, ToolError, ToolResult
from agentd.tools.bash_setup import git_restore, git_snapshot, prepare
from agentd.tools.files.truncate import Limits, truncate_tail
from agentd.tools.process.background import BackgroundProcess
from agentd.tools.process.environment import child_env
from agentd.tools.process.proctree import MARKER_VAR, new_marker
from agentd.tools.process.shell import start_shell
from agentd.tools.process.spill import fallback_dir
from agentd.tools.process.spill_pool import PooledSpillWriter
from agentd.tools.process.table import ProcessRefused, ProcessTable

GRACE_SECONDS = 0.008
"""How long the call waits for a background process's first lines (the call returns within
20 ms of the start)."""


async def run_background(command: str, description: str | None, ctx: ToolContext) -> ToolResult:
    """Start ``command`` as a background process of the session (see the module docstring)."""
    table = ctx.processes
    if table is None:
        raise ToolError(
            "This session cannot keep background processes; run the command without background."
        )
    try:
        ident = table.reserve(ctx.settings.bash_max_background)
    except ProcessRefused as refused:
        raise ToolError(str(refused)) from None
    try:
        process, notes = await _start(ident, command, description, ctx, table)
    finally:
        table.unreserve()
    deadline = time.monotonic() + GRACE_SECONDS
    while process.running and not process.has_unread(None):
        left = deadline - time.monotonic()
        if left <= 0:
            break
        await process.changed(left)
    return _started_result(process, notes, Limits.from_settings(ctx.settings))


async def _start(
    ident: str, command: str, description: str | None, ctx: ToolContext, table: ProcessTable
) -> tuple[BackgroundProcess, list[str]]:
    settings = ctx.settings
    env = child_env(ctx.env, settings)
    marker = new_marker()
    env[MARKER_VAR] = marker
    start_cwd, notes, (ruleset, wrapper, fds) = await asyncio.to_thread(prepare, ctx, env)
    git_before = await asyncio.to_thread(git_snapshot, ctx)
    watch = contextlib.AsyncExitStack()
    try:
        if ctx.changes is not None:
            await watch.enter_async_context(ctx.changes.watching())
        spill = await asyncio.to_thread(
            PooledSpillWriter.open,
            ctx.spill_dir or fallback_dir(),
            settings.bash_spill_keep,
            settings.bash_spill_max_bytes,
            ctx.redact,
        )
        confined = (ruleset, tuple(wrapper), tuple(fds))
        started = await start_shell(command, start_cwd, env, confined, settings.process_registry)
    except BaseException:
        await watch.aclose()
        raise
    finally:
        for fd in [*fds, *([] if ruleset is None else [ruleset])]:
            os.close(fd)
    process = BackgroundProcess(
        ident, command, started, marker=marker, spill=spill,
        keep=Limits.from_settings(settings).max_bytes, on_output=table.output,
        update_interval=max(settings.bash_update_interval, 0.2), description=description,
        tool_call_id=ctx.tool_call_id,
    )  # fmt: skip

    async def finish() -> None:
        await watch.aclose()
        if git_before is not None:
            await asyncio.to_thread(git_restore, git_before)

    await process.attach()
    table.add(process, finish)
    return process, notes


def _started_result(process: BackgroundProcess, notes: list[str], limits: Limits) -> ToolResult:
    text, _skipped = process.take(None)
    shown = truncate_tail(text, limits).text.removesuffix("\n")
    state = process.state_text()
    parts = [
        f"Started background process {process.id} (pid {process.pid}); it is {state}.",
        f"Read its output with process_output (id {process.id!r}), stop it with process_kill.",
    ]
    if shown:
        parts.append(f"Its first output:\n{shown}")
    if not process.running:
        process.exit_seen = True
    parts.extend(notes)
    return ToolResult("\n".join(parts), ProcessDetails(process=process.info()))
