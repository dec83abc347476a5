"""``agentctl trust [DIR]``, ``--list`` and ``--revoke``: the folders whose ``.agentd.toml``
may loosen settings (pick a provider, allow rules, ``auto`` mode…).

The list is the user's (``$XDG_CONFIG_HOME/agentd/trusted.json``, see
:mod:`agentd.protocol.trust_list`); the daemon reads it whenever it builds a session, so no
daemon needs restarting. :func:`offer_trust` is the question ``chat`` and ``send`` ask on a
terminal when a session ignored settings of an untrusted project file.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TextIO

from agentctl import outcome
from agentd.protocol.trust_list import add_trusted, read_trusted, remove_trusted


def trust_main(options: argparse.Namespace) -> int:
    """Trust, list or revoke; exit 0, or 2 for a folder that does not exist / is not listed."""
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
    real = add_trusted(target, env)
    sys.stdout.write(
        f"trusted: {real}\nIts .agentd.toml (and those of its subfolders) now apply in full: "
        "providers, allow rules, permission mode, sandbox, environment.\n"
    )
    return outcome.OK


def offer_trust(untrusted_file: str, stdin: TextIO, stderr: TextIO) -> bool:
    """Ask on a terminal whether to trust the folder of ``untrusted_file``; True when the
    user answered yes and the folder is now trusted."""
    folder = Path(untrusted_file).parent
    stderr.write(f"Trust {folder} so that its .agentd.toml applies in full? [y/N] ")
    stderr.flush()
    answer = stdin.readline().strip().lower()
    if answer not in ("y", "yes", "trust"):
        return False
    add_trusted(folder, os.environ)
    stderr.write(f"trusted: {folder}\n")
    return True
