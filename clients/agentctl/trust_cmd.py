"""``agentctl trust [DIR]``, ``--list`` and ``--revoke``: the folders whose ``.agentd.toml``
may loosen settings (pick a provider, allow rules, ``auto`` mode…).

The list is the user's (``$XDG_CONFIG_HOME/agentd/trusted.json``, see
:mod:`agentd.protocol.trust_list`); the daemon reads it whenever it builds a session, so no
daemon needs restarting. :func:`offer_trust` is the question ``chat`` and ``send`` ask on a
terminal when a session ignored settings of an untrusted project file.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
from pathlib import Path
from typing import TextIO

from agentctl import outcome
from agentd.paths import too_broad
from agentd.protocol.trust_list import add_trusted, read_trusted, remove_trusted


def trust_main(options: argparse.Namespace) -> int:
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
    real = add_trusted(target, env)
    if (real / ".agentd.toml").is_file():
        applies = "Its .agentd.toml, as it is now, applies in full: providers, allow rules, "
        applies += "permission mode, sandbox, environment."
    else:
        applies = "It has no .agentd.toml now."
    sys.stdout.write(
        f"trusted: {real}\n{applies}\nA file that changes or appears later (here or in a "
        "subfolder) is untrusted until you run `agentctl trust` for its folder again.\n"
    )
    return outcome.OK


def offer_trust(untrusted_file: str, stdin: TextIO, stderr: TextIO) -> bool:
    """Ask on a terminal whether to trust the folder of ``untrusted_file``, after showing the
    file's settings (what trusting would apply); True when the user answered yes and the
    folder is now trusted. A folder :func:`~agentd.paths.too_broad` is not offered (the
    reason is shown)."""
    folder = Path(untrusted_file).parent
    reason = too_broad(folder)
    if reason:
        stderr.write(f"Not offering to trust {folder}: {reason}.\n")
        return False
    stderr.write(f"{untrusted_file} would apply in full if you trust {folder}:\n")
    for line in describe_settings(Path(untrusted_file)):
        stderr.write(f"  {line}\n")
    stderr.write(f"Trust {folder} so that its .agentd.toml applies in full? [y/N] ")
    stderr.flush()
    answer = read_key(stdin)
    yes = answer in ("y", "yes", "trust")
    if is_terminal(stdin):
        stderr.write("yes\n" if yes else "no\n")
    if not yes:
        return False
    add_trusted(folder, os.environ)
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


MAX_SHOWN_SETTINGS = 40
MAX_SHOWN_VALUE = 120


def describe_settings(path: Path) -> list[str]:
    """The settings of the TOML file ``path`` as ``dotted.key = value`` lines (values as JSON
    with every control character escaped: the file is untrusted and this goes to a terminal;
    long values and long lists are shortened)."""
    import tomllib

    try:
        table = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return [f"(cannot read it: {_shown(str(exc))})"]
    lines = [f"{key} = {_shown(value)}" for key, value in _flatten(table, "")]
    if len(lines) > MAX_SHOWN_SETTINGS:
        hidden = len(lines) - MAX_SHOWN_SETTINGS
        lines = [*lines[:MAX_SHOWN_SETTINGS], f"… and {hidden} more (see the file)"]
    return lines or ["(no settings)"]


def _flatten(table: dict[str, object], prefix: str) -> list[tuple[str, object]]:
    items: list[tuple[str, object]] = []
    for key, value in table.items():
        name = prefix + (key if key.isidentifier() else _shown(key))
        if isinstance(value, dict):
            items += _flatten(value, name + ".")
        else:
            items.append((name, value))
    return items


def _shown(value: object) -> str:
    text = json.dumps(value, ensure_ascii=True, default=str)
    if len(text) > MAX_SHOWN_VALUE:
        text = text[: MAX_SHOWN_VALUE - 1] + "…"
    return text
