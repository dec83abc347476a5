"""``agentctl trust [DIR]``, ``--list`` and ``--revoke``: the folders whose control files
(``.agentd.toml``, which may loosen settings — pick a provider, allow rules, ``auto`` mode… —,
``.mcp.json`` servers, hooks, commands, agent profiles, skills) agentd uses, each pinned to
its content when the folder is trusted (:mod:`agentctl.commands.trust_show` lists them).

The list is the user's (``$XDG_CONFIG_HOME/agentd/trusted.json``, see
:mod:`agentd.protocol.trust_list`); the daemon reads it whenever it builds a session, so no
daemon needs restarting. :func:`offer_trust` is the question ``chat`` and ``send`` ask on a
terminal when a session ignored settings of an untrusted project file or did not start the
servers of an untrusted ``.mcp.json``.
"""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path
from typing import TextIO

from agentctl.commands.trust_show import covered, later_changes
from agentctl.options import TrustOptions
from agentctl.run import outcome
from agentd.paths import too_broad
from agentd.protocol.control_pins import owner_of
from agentd.protocol.trust_list import add_trusted, read_trusted, remove_trusted


def trust_main(options: TrustOptions) -> int:
    """Trust, list or revoke; exit 0, or 2 for a folder that does not exist / is not listed,
    or that is too broad to trust without ``--force`` (see :func:`agentd.paths.too_broad`)."""
    env = os.environ
    if options.list:
        for path in read_trusted(env):
            sys.stdout.write(f"{path}\n")
        return outcome.OK
    target = Path(options.dir or ".").expanduser()
    if options.revoke:
        if not remove_trusted(target, env):
            sys.stderr.write(f"agentctl: {target} is not in the trusted list\n")
            return outcome.USAGE_ERROR
        sys.stdout.write(f"no longer trusted: {Path(os.path.realpath(target))}\n")
        return outcome.OK
    if not target.is_dir():
        sys.stderr.write(f"agentctl: {target} is not a directory\n")
        return outcome.USAGE_ERROR
    reason = too_broad(target)
    if reason and not options.force:
        sys.stderr.write(
            f"agentctl: refusing to trust {os.path.realpath(target)}: {reason}. Every "
            ".agentd.toml below it could then choose providers, allow rules, the permission "
            "mode, the sandbox and the environment. Trust the project folders themselves, or "
            "add --force if you really mean it.\n"
        )
        return outcome.USAGE_ERROR
    if reason:
        sys.stderr.write(
            f"WARNING: trusting {os.path.realpath(target)} although {reason}: every "
            ".agentd.toml below it now applies in full, including files other people or "
            "downloaded code put there.\n"
        )
    real = Path(os.path.realpath(target))
    lines, snapshots = covered(real)
    add_trusted(real, env, snapshots)
    sys.stdout.write(f"trusted: {real}\nIt covers, as they are now:\n")
    sys.stdout.writelines(f"  {line}\n" for line in lines)
    sys.stdout.write(later_changes(real) + "\n")
    return outcome.OK


def offer_trust(untrusted_file: str, stdin: TextIO, stderr: TextIO) -> bool:
    """Ask on a terminal whether to trust the folder of the control file ``untrusted_file``
    (an ``.agentd.toml`` or ``.mcp.json``), after listing everything trusting it would cover
    (:func:`agentctl.commands.trust_show.covered`); True when the user answered yes and the
    folder is now trusted, pinned to what was shown. A folder :func:`~agentd.paths.too_broad` is
    not offered (the reason is shown)."""
    folder = Path(os.path.realpath(owner_of(Path(untrusted_file))))
    reason = too_broad(folder)
    if reason:
        stderr.write(f"Not offering to trust {folder}: {reason}.\n")
        return False
    lines, snapshots = covered(folder)
    stderr.write(f"{untrusted_file} would apply in full if you trust {folder}, with:\n")
    stderr.writelines(f"  {line}\n" for line in lines)
    stderr.write(later_changes(folder) + "\n")
    stderr.write(f"Trust {folder} so that these apply in full? [y/N] ")
    stderr.flush()
    answer = read_key(stdin)
    yes = answer in ("y", "yes", "trust")
    if is_terminal(stdin):
        stderr.write("yes\n" if yes else "no\n")
    if not yes:
        return False
    add_trusted(folder, os.environ, snapshots)
    stderr.write(f"trusted: {folder}\n")
    return True


def is_terminal(stream: TextIO) -> bool:
    """Whether ``stream`` is a terminal (a closed or fake stream is not)."""
    try:
        return os.isatty(stream.fileno())
    except (OSError, ValueError, io.UnsupportedOperation):
        return False


def read_key(stdin: TextIO) -> str:
    """The answer, lower-cased: one key on a terminal (cbreak mode while waiting, as the
    approval prompt reads it; keys typed after it are dropped, so a habitual Enter answers
    nothing else), else one line. Enter or end of input is the empty answer (no)."""
    if not is_terminal(stdin):
        return stdin.readline().strip().lower()
    import termios
    import tty

    fd = stdin.fileno()
    saved = termios.tcgetattr(fd)
    tty.setcbreak(fd)
    try:
        key = os.read(fd, 1)
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)
        termios.tcflush(fd, termios.TCIFLUSH)
    return key.decode("utf-8", "replace").strip().lower()
