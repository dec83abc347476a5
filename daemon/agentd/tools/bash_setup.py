"""What a bash call (foreground or background) prepares before its shell starts: the directory
it starts in, the workspace sandbox that confines it (:func:`confinement`, reused by hooks),
and under the sandbox the repository's ``.git`` entries to put back after it.
"""

from __future__ import annotations

import os
from pathlib import Path

from agentd.hardening import landlock_abi
from agentd.tools.base import ToolContext, ToolError

Confinement = tuple[int | None, list[str], list[int]]
"""A Landlock ruleset (or None), a bubblewrap argv prefix (or empty), and the descriptors
the prefix reads (the caller closes the ruleset and the descriptors)."""


def prepare(ctx: ToolContext, env: dict[str, str]) -> tuple[Path, list[str], Confinement]:
    """In a worker thread: the directory to start in (and notes about it) and the
    confinement (see :func:`confinement`)."""
    start_cwd, notes = _start_cwd(ctx)
    return start_cwd, notes, confinement(ctx, env)


def confinement(ctx: ToolContext, env: dict[str, str]) -> Confinement:
    """Under a workspace sandbox, what lets the command write only in the workspace and the
    session's temp dir (set as its ``TMPDIR``) and keeps it off the daemon's control
    channels: a bubblewrap argv prefix that also keeps the project's control files and git
    dirs read-only, hides the daemon's sockets and tokens, gives the command its own process
    namespace and (unless ``sandbox_network``) its own network with only loopback, and loads
    the seccomp filter (:mod:`agentd.tools.process.mountns`,
    :mod:`agentd.tools.process.seccomp`) where bubblewrap runs; else a Landlock ruleset (with
    the same seccomp filter and, without ``sandbox_network``, no TCP); ``(None, [], [])``
    when unconfined."""
    if ctx.workspace is None:
        return None, [], []
    from agentd.tools.process import mountns, seccomp
    from agentd.tools.process.landlock import session_tmp, write_ruleset

    use_bwrap = mountns.available()
    if not use_bwrap and landlock_abi() == 0:
        return None, [], []
    network = ctx.settings.sandbox_network
    try:
        tmp = session_tmp(ctx.session_id)
        env["TMPDIR"] = str(tmp)
        if use_bwrap:
            fd = seccomp.program_fd()
            fds = [] if fd is None else [fd]
            return None, mountns.wrapper(ctx.workspace, [tmp], network=network, seccomp_fd=fd), fds
        seccomp.prepare()
        return write_ruleset([ctx.workspace, tmp], network=network), [], []
    except OSError as error:
        raise ToolError(f"Cannot confine the command to the workspace: {error}.") from None


def git_snapshot(ctx: ToolContext) -> dict[Path, tuple[str, str | bytes | None]] | None:
    """Under the sandbox, how the repository's ``.git`` entries are before the command."""
    if ctx.workspace is None:
        return None
    from agentd.tools.process.gitdirs import snapshot

    return snapshot(Path(os.path.realpath(ctx.workspace)))


def git_restore(before: dict[Path, tuple[str, str | bytes | None]]) -> list[str]:
    from agentd.tools.process.gitdirs import restore

    return restore(before)


def _start_cwd(ctx: ToolContext) -> tuple[Path, list[str]]:
    cwd = ctx.cwd
    notes: list[str] = []
    if ctx.workspace is not None and not Path(cwd).resolve().is_relative_to(
        ctx.workspace.resolve()
    ):
        cwd = ctx.workspace
    if not Path(cwd).is_dir():
        fallback = ctx.workspace or Path.home()
        notes.append(f"[The working directory {cwd} no longer exists; ran in {fallback}.]")
        cwd = fallback
    return Path(cwd), notes
