"""The daemon is not dumpable: a command bash runs as the same (non-root) user cannot read
the daemon's /proc/<pid>/environ (where API keys live). Runs the check as `nobody`."""

from __future__ import annotations

import asyncio
import os
import pwd
from pathlib import Path

import pytest

from agentd.hardening import PR_SET_DUMPABLE, is_dumpable, libc, make_undumpable
from agentd.tools import build_tools, run_tool
from agentd.tools.base import ToolContext

PROBE = "cat /proc/$PPID/environ > /dev/null 2>&1 && echo readable || echo denied"


def _bash_as_nobody(undumpable: bool, workdir: Path) -> str:
    """Fork, become `nobody`, optionally go non-dumpable, and run PROBE through the bash
    tool (so the reader is a real bash child of the process that holds the secrets)."""
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 1
        try:
            os.close(reader)
            # one run as root first: `nobody` may not read the interpreter's lazily imported
            # modules (a root-owned 0700 home), so load them while it still can
            asyncio.run(
                run_tool(build_tools()["bash"], {"command": "true"}, ToolContext(cwd=workdir))
            )
            nobody = pwd.getpwnam("nobody")
            os.setgroups([])
            os.setgid(nobody.pw_gid)
            os.setuid(nobody.pw_uid)
            if undumpable:
                make_undumpable()
            else:  # a uid change clears the flag; a plain user process is dumpable
                libc().prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)
            flag = "dumpable" if is_dumpable() else "undumpable"
            ctx = ToolContext(cwd=workdir)
            result = asyncio.run(run_tool(build_tools()["bash"], {"command": PROBE}, ctx))
            os.write(writer, f"{flag} {result.output}".encode())
            code = 0
        finally:
            os._exit(code)
    os.close(writer)
    with os.fdopen(reader, "rb") as pipe:
        answer = pipe.read().decode()
    os.waitpid(pid, 0)
    return answer


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to switch to the `nobody` uid")
def test_bash_cannot_read_the_environment_of_an_undumpable_daemon(short_tmp: Path) -> None:
    short_tmp.chmod(0o777)
    control = _bash_as_nobody(False, short_tmp)
    assert control.startswith("dumpable"), control
    assert "readable" in control, control
    protected = _bash_as_nobody(True, short_tmp)
    assert protected.startswith("undumpable"), protected
    assert "denied" in protected, protected
