"""The deny-list of destructive shell commands.

:func:`dangerous_reason` returns why a command is destructive, or None. The check works on
shell words (see :mod:`agentd.tools.shellparse.words`), so quoting, spacing, flag order and
spelling variants are normalised: ``rm -fr /``, ``rm -r -f /``, ``rm --recursive --force /``
and ``sudo rm -rf /`` are all caught, while ``rm -rf ./build`` and ``echo "rm -rf /"`` are not.
Commands inside ``bash -c``/``sh -c``/``eval`` strings and ``$(…)`` are checked too.

What is caught:

- recursive ``rm`` of ``/``, ``/*``, ``~``, ``$HOME`` (and their ``/*`` forms), ``..``, or a
  top-level directory such as ``/usr``; any ``rm --no-preserve-root``;
- ``chmod``/``chown``/``chgrp -R`` on those same targets;
- ``find <such target> … -delete``;
- fork bombs (``:(){ :|:& };:`` and the same shape with any function name);
- ``mkfs*``, ``mke2fs``, ``wipefs``; ``dd … of=/dev/<disk>``; redirection into a disk device;
- every forced ``git push``: ``-f``, ``--force``, ``--force-with-lease``,
  ``--force-if-includes`` and ``+refspec`` (all rewrite remote history, so all are refused);
- ``shutdown``, ``reboot``, ``halt``, ``poweroff``, ``init 0``/``init 6``, and
  ``systemctl poweroff|reboot|halt|kexec``.

It is a seat belt against accidents, not a sandbox: a determined command can always be
written in a form no pattern list recognises.
"""

from __future__ import annotations

import itertools
import re

from agentd.tools.shellparse.words import command_name, segments, strip_wrappers, tokens

_FORK_BOMB = re.compile(r"([A-Za-z_][A-Za-z0-9_]*|:)\(\)\{\1\|\1&\};\1")
_DISK = re.compile(r"^/dev/(sd|hd|vd|xvd|nvme|mmcblk|disk|dm-|md)[a-z0-9]*")
_TOP_LEVEL = re.compile(r"^/+[^/*]+/*\*?$")
_HOME = re.compile(r"^(~|\$HOME|\$\{HOME\})(/+\*?)?$")
_ROOTISH = frozenset({"/", "/*", "/.", "/..", "..", "../", "../*"})
_POWER = frozenset({"shutdown", "reboot", "halt", "poweroff"})
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh"})
_WATCHED = _SHELLS | _POWER | {"eval", "rm", "chmod", "chown", "chgrp", "find", "mke2fs"}
_WATCHED |= {"wipefs", "dd", "git", "init", "telinit", "systemctl"}
_GIT_OPTIONS_WITH_ARG = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace"})


def dangerous_reason(command: str) -> str | None:
    """Why ``command`` is on the deny-list (a sentence), or None if it is not."""
    if "{" in command and "(" in command and _FORK_BOMB.search(re.sub(r"\s+", "", command)):
        return "it is a fork bomb (a function that endlessly spawns copies of itself)"
    argvs, redirect_pairs = _structure(command)
    redirect = _disk_redirect(redirect_pairs)
    if redirect:
        return redirect
    for words in argvs:
        reason = _segment_reason(strip_wrappers(words))
        if reason:
            return reason
    return None


def _structure(command: str) -> tuple[list[list[str]], list[tuple[str, str]]]:
    """The simple commands and (operator, target) redirections of ``command``: from the bash
    grammar (:mod:`agentd.tools.shellparse.grammar`), plus the plain word split when the grammar is
    unavailable or the input does not parse cleanly."""
    try:
        from agentd.tools.shellparse.grammar import parse_command

        parsed = parse_command(command)
    except ImportError:
        parsed = None
    if parsed is not None and not parsed.syntax_error:
        argvs = [list(simple.argv) for simple in parsed.distinct]
        return argvs, [pair for simple in parsed.distinct for pair in simple.redirects]
    words = tokens(command)
    argvs = segments(command)
    if parsed is not None:
        argvs += [list(simple.argv) for simple in parsed.commands]
    return argvs, list(itertools.pairwise(words))


def is_dangerous(command: str) -> bool:
    """True when :func:`dangerous_reason` finds something."""
    return dangerous_reason(command) is not None


def _segment_reason(words: list[str]) -> str | None:
    if not words:
        return None
    name = command_name(words[0])
    if name not in _WATCHED and not name.startswith("mkfs"):
        return None  # most commands: none of the programs below
    args = words[1:]
    if name in _SHELLS or name == "eval":
        return _nested_reason(name, args)
    if name == "rm":
        return _rm_reason(args)
    if name in ("chmod", "chown", "chgrp"):
        return _recursive_on_root(name, args)
    if name == "find" and "-delete" in args and any(_is_root_target(a) for a in args):
        return "`find … -delete` on the filesystem root or home directory deletes everything"
    if name.startswith("mkfs") or name in ("mke2fs", "wipefs"):
        return f"`{name}` formats or wipes a disk"
    if name == "dd" and any(a.startswith("of=") and _DISK.match(a[3:]) for a in args):
        return "`dd` writing to a disk device destroys its contents"
    if name == "git":
        return _git_reason(args)
    return _power_reason(name, args)


def _nested_reason(name: str, args: list[str]) -> str | None:
    if name == "eval":
        return dangerous_reason(" ".join(args))
    for index, arg in enumerate(args[:-1]):
        if arg.startswith("-") and not arg.startswith("--") and "c" in arg:
            return dangerous_reason(args[index + 1])
    return None


def _is_root_target(arg: str) -> bool:
    target = arg.rstrip("/") or "/"
    return (
        arg in _ROOTISH
        or target in _ROOTISH
        or bool(_HOME.match(arg))
        or bool(_TOP_LEVEL.match(arg))
    )


def _split_flags(args: list[str]) -> tuple[set[str], list[str]]:
    """Short flags (one letter each) and long flags, and the operands."""
    flags: set[str] = set()
    operands: list[str] = []
    for index, arg in enumerate(args):
        if arg == "--":
            operands.extend(args[index + 1 :])
            break
        if arg.startswith("--"):
            flags.add(arg)
        elif arg.startswith("-") and len(arg) > 1:
            flags.update(f"-{letter}" for letter in arg[1:])
        else:
            operands.append(arg)
    return flags, operands


def _rm_reason(args: list[str]) -> str | None:
    flags, operands = _split_flags(args)
    if "--no-preserve-root" in flags:
        return "`rm --no-preserve-root` can delete the whole filesystem"
    recursive = flags & {"-r", "-R", "--recursive"}
    target = next((op for op in operands if _is_root_target(op)), None)
    if recursive and target is not None:
        return f"`rm -r {target}` recursively deletes the root, home or a top-level directory"
    return None


def _recursive_on_root(name: str, args: list[str]) -> str | None:
    flags, operands = _split_flags(args)
    target = next((op for op in operands[1:] if _is_root_target(op)), None)
    if flags & {"-R", "--recursive"} and target is not None:
        return f"`{name} -R` on {target} changes every file below it"
    return None


def _git_reason(args: list[str]) -> str | None:
    index = 0
    while index < len(args) and args[index].startswith("-"):
        index += 2 if args[index] in _GIT_OPTIONS_WITH_ARG else 1
    if index >= len(args) or args[index] != "push":
        return None
    rest = args[index + 1 :]
    forced = any(
        a in ("--force", "--force-if-includes")
        or a.startswith("--force-with-lease")
        or (a.startswith("-") and not a.startswith("--") and "f" in a)
        or (a.startswith("+") and len(a) > 1)
        for a in rest
    )
    if forced:
        return "a forced `git push` rewrites the remote branch's history"
    return None


def _power_reason(name: str, args: list[str]) -> str | None:
    if name in _POWER:
        return f"`{name}` stops or restarts the machine"
    if name in ("init", "telinit") and args[:1] in (["0"], ["6"]):
        return f"`{name} {args[0]}` stops or restarts the machine"
    if name == "systemctl" and any(a in ("poweroff", "reboot", "halt", "kexec") for a in args):
        return "`systemctl` would stop or restart the machine"
    return None


def _disk_redirect(pairs: list[tuple[str, str]]) -> str | None:
    for operator, target in pairs:
        if ">" in operator and _DISK.match(target):
            return f"redirecting output into {target} overwrites the disk"
    return None
