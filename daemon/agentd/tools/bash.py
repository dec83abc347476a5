"""The ``bash`` tool: run a shell command in the session's working directory.

Each call is a fresh ``bash -c`` process; **only the working directory persists** between
calls (a ``cd`` is carried over through ``ctx.cwd``). Environment variables, aliases,
functions and shell options set by one command are gone in the next. Output (stdout and
stderr merged) streams through ``ctx.on_update``; the result keeps the tail (last 2000 lines
or 50 KB) and names a spill file holding all of it. A non-zero exit or a timeout is an
ordinary result, not an error.

``ctx.settings`` (:class:`~agentd.tools.defaults.ToolSettings`): ``bash_timeout`` (default
120 s), ``bash_max_timeout`` (600 s), ``bash_kill_grace`` (2 s), ``bash_update_interval``
(0.05 s), ``bash_spill_keep`` (20 spill files kept per session, see
:mod:`agentd.tools.process.spill`), ``bash_spill_max_bytes`` (64 MiB per spill file; the result says
when the file holds only the start), ``permission_policy`` (whose ``allows_dangerous`` lets a
deny-listed command run), ``process_registry`` (a directory, see
:mod:`agentd.tools.process.orphans`), plus the environment settings of
:mod:`agentd.tools.process.environment` and the output limits.

When the session is sandboxed (``ctx.workspace``), commands start in the workspace, a ``cd``
out of it is not kept, and the command may write only in the workspace and its temp dir, with
the project's control files read-only (bubblewrap, :mod:`agentd.tools.process.mountns`; where
it cannot run, Landlock confines writes without protecting those files).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path
from typing import Annotated, ClassVar

import msgspec

from agentd.protocol.events import Location, ToolKind
from agentd.protocol.tool_details import BashDetails
from agentd.tools.base import ToolContext, ToolError, ToolResult
from agentd.tools.bash_setup import Confinement as Confinement
from agentd.tools.bash_setup import confinement as confinement
from agentd.tools.bash_setup import git_restore, git_snapshot, prepare
from agentd.tools.defaults import BASH_MAX_TIMEOUT, BASH_TIMEOUT, ToolSettings
from agentd.tools.files.truncate import Limits, notice
from agentd.tools.process.environment import child_env
from agentd.tools.process.output import OutputCapture
from agentd.tools.process.shell import ShellOutcome, release, run_shell
from agentd.tools.shellparse.danger import dangerous_reason
from agentd.tools.shellparse.readonly import reads_only

DEFAULT_TIMEOUT = BASH_TIMEOUT
DEFAULT_MAX_TIMEOUT = BASH_MAX_TIMEOUT


class BashParams(msgspec.Struct, forbid_unknown_fields=True):
    command: Annotated[str, msgspec.Meta(description="The command line to run with bash -c.")]
    timeout: Annotated[
        Annotated[float, msgspec.Meta(gt=0)] | None,
        msgspec.Meta(description="Seconds before the command is killed (see the tool for limits)."),
    ] = None
    background: Annotated[
        bool,
        msgspec.Meta(
            description="true: start it in the background and return at once with its id "
            "(read with process_output, stop with process_kill); no timeout applies."
        ),
    ] = False
    description: Annotated[
        str | None,
        msgspec.Meta(description="A few words on what a background process is for."),
    ] = None


class BashTool:
    name: ClassVar[str] = "bash"
    description: ClassVar[str] = (
        "Run a shell command with `bash -c` in the current working directory; stdin is "
        "empty, stdout and stderr are merged. Only the working directory carries over to the "
        "next call (a `cd` sticks); environment variables, aliases and functions do not. "
        "Default timeout {bash_timeout} s (max {bash_max_timeout} s): the command and all "
        "its children are killed then. Output over {max_lines} lines or {max_kb} KB keeps "
        "only the last part; the full output is "
        "saved to a file whose path is given. Start servers, watchers and long runs with "
        "`background: true` (at most {bash_max_background} at once): the call returns at "
        "once with an id (`p1`…); process_output reads their output, process_kill stops "
        "them; they keep running until they exit, are killed or the session closes, and "
        "when one ends you are told at your next turn. A non-zero exit code is reported, "
        "not an error. "
        "Destructive commands (e.g. `rm -rf /`, forced git push, mkfs) are refused."
    )
    Params: ClassVar[type[BashParams]] = BashParams
    kind: ClassVar[ToolKind] = "execute"
    mutating: ClassVar[bool] = True

    def locations(self, params: BashParams, ctx: ToolContext) -> list[Location]:
        return []

    async def run(self, params: BashParams, ctx: ToolContext) -> ToolResult:
        command: str = params.command
        if not command.strip():
            raise ToolError("The command is empty; give a shell command to run.")
        if "\0" in command:
            raise ToolError("The command contains a NUL character, which bash cannot run.")
        _refuse_if_dangerous(command, ctx)
        if params.background:
            from agentd.tools.bash_background import run_background

            return await run_background(command, params.description, ctx)
        settings = ctx.settings
        timeout, max_timeout = _timeouts(params.timeout, settings)
        limits = Limits.from_settings(settings)
        capture = OutputCapture(
            limits,
            ctx.spill_dir,
            settings.bash_spill_keep,
            settings.bash_spill_max_bytes,
            ctx.redact,
        )
        env = child_env(ctx.env, settings)
        # Every file-system look-up runs off the event loop (a busy disk stalls them), in one
        # worker-thread hop before the command and one after it.
        start_cwd, notes, (ruleset, wrapper, fds), git_before = await asyncio.to_thread(
            _before, ctx, env
        )
        try:
            async with _watch(command, ctx):
                outcome = await run_shell(
                    command,
                    cwd=start_cwd,
                    env=env,
                    timeout=timeout,
                    capture=capture,
                    on_output=ctx.on_update,
                    kill_grace=settings.bash_kill_grace,
                    update_interval=settings.bash_update_interval,
                    registry=settings.process_registry,
                    ruleset=ruleset,
                    wrapper=wrapper,
                    pass_fds=fds,
                    host_owner=ctx.session_id or None,
                    leave_entry=True,  # dropped in _after's hop
                )
        except BaseException:
            if git_before is not None:
                await asyncio.to_thread(git_restore, git_before)
            raise
        finally:
            _release((ruleset, wrapper, fds))
        try:
            restored, (ctx.cwd, moved) = await asyncio.to_thread(
                _after, ctx, git_before, start_cwd, outcome
            )
        except BaseException:  # a cancel may keep the hop from running: drop the entry here
            release(outcome.registry_entry)
            raise
        notes += restored
        if params.timeout is not None and params.timeout > max_timeout:
            notes.append(f"[The timeout was capped at the {max_timeout:g} s maximum.]")
        notes.extend(moved)
        return _result(command, outcome, capture, limits, timeout, notes)


def _watch(command: str, ctx: ToolContext) -> contextlib.AbstractAsyncContextManager[None]:
    """The change recorder's watch around ``command``; none when it only reads (its parse
    leaves no doubt, :mod:`agentd.tools.shellparse.readonly`) or nothing is recorded."""
    if ctx.changes is None or reads_only(command):
        return contextlib.nullcontext()
    return ctx.changes.watching()


def _refuse_if_dangerous(command: str, ctx: ToolContext) -> None:
    reason = dangerous_reason(command)
    if reason is None:
        return
    policy = ctx.settings.permission_policy
    if policy is not None and policy.allows_dangerous(command):
        return
    raise ToolError(
        f"Refused: {reason}. This command is on the deny-list of destructive commands and "
        "runs only when the user explicitly allows it (permissions: allow_dangerous, or an "
        "allow rule for this exact command). Use a narrower command, e.g. a relative path "
        "inside the project."
    )


def _timeouts(requested: float | None, settings: ToolSettings) -> tuple[float, float]:
    maximum = settings.bash_max_timeout
    default = settings.bash_timeout
    return min(requested if requested is not None else default, maximum), maximum


_GitState = dict[Path, tuple[str, str | bytes | None]] | None


def _before(
    ctx: ToolContext, env: dict[str, str]
) -> tuple[Path, list[str], Confinement, _GitState]:
    """In a worker thread, before the command: where it starts (and notes), its
    confinement, and under the sandbox the repository's ``.git`` entries."""
    start_cwd, notes, confined = prepare(ctx, env)
    try:
        return start_cwd, notes, confined, git_snapshot(ctx)
    except BaseException:
        _release(confined)
        raise


def _release(confined: Confinement) -> None:
    """Close the confinement's descriptors (the Landlock ruleset, the seccomp pipe)."""
    ruleset, _, fds = confined
    for fd in [*fds, *([] if ruleset is None else [ruleset])]:
        os.close(fd)


def _after(
    ctx: ToolContext, git_before: _GitState, start: Path, outcome: ShellOutcome
) -> tuple[list[str], tuple[Path, list[str]]]:
    """In a worker thread, after the command: its registry entry dropped, the ``.git``
    entries put back (notes), and the session's directory now (:func:`_final_cwd`)."""
    release(outcome.registry_entry)
    restored = git_restore(git_before) if git_before is not None else []
    return restored, _final_cwd(ctx, start, outcome)


def _final_cwd(ctx: ToolContext, start: Path, outcome: ShellOutcome) -> tuple[Path, list[str]]:
    """The session's directory after the call: the shell's final one, unless it is gone or
    outside the workspace (then ``start``); and the note that says so."""
    final = Path(outcome.cwd) if outcome.cwd else None
    if final is None or not final.is_dir():
        return start, []
    if ctx.workspace is not None and not final.resolve().is_relative_to(ctx.workspace.resolve()):
        return start, [f"[{final} is outside the workspace; the working directory stays {start}.]"]
    changed = final != Path(ctx.cwd)
    return final, [f"[Working directory is now {final}.]"] if changed else []


def _result(
    command: str,
    outcome: ShellOutcome,
    capture: OutputCapture,
    limits: Limits,
    timeout: float,
    notes: list[str],
) -> ToolResult:
    tail = capture.tail()
    parts = [tail.text.removesuffix("\n") or "(no output)"]
    if tail.truncated:
        parts.append(f"[{notice(tail, kept='last', limits=limits)} {capture.spill_note()}]")
    if outcome.timed_out:
        parts.append(
            f"[Timed out after {timeout:g} s: the command and its child processes were "
            "killed. Pass a larger timeout, or run it in the background with output "
            "redirected to a file.]"
        )
    elif outcome.signal:
        parts.append(f"[Killed by {outcome.signal}.]")
    elif outcome.exit_code:
        parts.append(f"[Exit code {outcome.exit_code}.]")
    parts.extend(notes)
    details = BashDetails(
        command=command,
        exit_code=outcome.exit_code,
        signal=outcome.signal,
        timed_out=outcome.timed_out,
        duration_ms=outcome.duration_ms,
        truncated=tail.truncated,
        spill_path=str(capture.spill_path) if capture.spill_path else None,
        total_bytes=capture.total_bytes,
        cwd=outcome.cwd,
        spill_complete=not capture.spilled or capture.spill_complete,
    )
    return ToolResult("\n".join(parts), details)
