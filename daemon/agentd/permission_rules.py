"""Permission rules: parsing ``tool`` / ``tool(spec)`` and matching them against calls.

Command rules (``bash(npm test:*)``) match the simple commands of a parsed command line
(:mod:`agentd.tools.bashparse`); path rules (``write(src/**)``) match normalised,
symlink-resolved paths relative to the session's cwd (see :class:`PathView`).
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from agentd.errors import ConfigError
from agentd.tools import TOOLS
from agentd.tools.ignore import Rule as GlobRule
from agentd.tools.ignore import parse_rule

PATH_TOOLS = frozenset({"read", "write", "edit", "undo_edit", "grep", "find", "ls"})
READING_TOOLS = frozenset({"read", "grep", "find", "ls"})
_RULE = re.compile(r"^(?P<tool>[a-z_]+)(?:\((?P<spec>.*)\))?$", re.DOTALL)


class PolicyError(ConfigError, ValueError):
    """A bad mode, rule or ``[permissions]`` value (a config error, -32005 on the wire)."""


@dataclass(frozen=True)
class PathView:
    """One path argument seen two ways: ``lexical`` (``~`` expanded, made absolute against
    the cwd, ``..`` collapsed, symlinks kept) and ``real`` (symlinks resolved too)."""

    lexical: str
    real: str

    @classmethod
    def of(cls, raw: str, cwd: Path, parents: dict[str, str] | None = None) -> PathView:
        """The views of ``raw``; ``parents`` caches resolved directories across calls."""
        expanded = _expand(raw)
        absolute = expanded if expanded.startswith("/") else f"{cwd}/{expanded}"
        return cls(os.path.normpath(absolute), _real(absolute, {} if parents is None else parents))


@dataclass(frozen=True)
class Rule:
    """One parsed rule; ``spec`` None means the whole tool."""

    text: str
    tool: str
    spec: str | None = None

    @classmethod
    def parse(cls, text: str) -> Rule:
        """Parse ``tool``, ``tool(spec)``; raises PolicyError naming what is wrong."""
        match = _RULE.match(text.strip())
        if match is None:
            raise PolicyError(f"Bad permission rule {text!r}: write `tool` or `tool(argument)`.")
        tool, spec = match["tool"], match["spec"]
        if tool not in TOOLS:
            raise PolicyError(
                f"Bad permission rule {text!r}: unknown tool {tool!r} (tools: {', '.join(TOOLS)})."
            )
        if spec is not None and tool != "bash" and tool not in PATH_TOOLS:
            raise PolicyError(f"Bad permission rule {text!r}: {tool} takes no argument.")
        if spec is not None and not spec.strip():
            raise PolicyError(f"Bad permission rule {text!r}: the argument is empty.")
        if spec is not None and spec.strip() == "*":
            spec = None
        return cls(text.strip(), tool, spec.strip() if spec else None)

    @property
    def is_exact_command(self) -> bool:
        return self.tool == "bash" and self.spec is not None and not self.spec.endswith(":*")

    def matches_command(self, words: list[str]) -> bool:
        """True when this bash rule covers the simple command ``words``."""
        return self.matches_text(" ".join(words))

    def matches_text(self, text: str) -> bool:
        """:meth:`matches_command` for words already joined by single spaces."""
        if self.spec is None:
            return True
        if self.spec.endswith(":*"):
            prefix = " ".join(self.spec[:-2].split())
            return text == prefix or text.startswith(prefix + " ")
        return text == " ".join(self.spec.split())

    def matches_path(self, path: str, cwd: Path, *, anywhere: bool = False) -> bool:
        """True when this path rule covers the absolute, normalised ``path``.

        A spec starting with ``/`` or ``~`` is matched against the absolute path; any other
        against the path relative to the (real) session cwd, so it never matches a path
        outside it, except that with ``anywhere`` (deny rules) a spec without ``/`` matches
        the file name wherever it is.
        """
        if self.spec is None:
            return True
        if anywhere and "/" not in self.spec.rstrip("/"):
            rule = _glob(self.spec)
            return rule is not None and rule.matches(
                path.lstrip("/"), path.rsplit("/", 1)[-1], False
            )
        if self.spec.startswith(("/", "~")):
            glob, candidate = _expand(self.spec), path
        else:
            root = _real_root(str(cwd))
            named_only = "/" not in self.spec.rstrip("/")
            if not _inside(path, root) and not (anywhere and named_only):
                return False
            glob = self.spec
            candidate = _relative(path, root)
        rule = _glob(glob.lstrip("/"))
        name = candidate.rsplit("/", 1)[-1]
        return rule is not None and rule.matches(candidate.lstrip("/"), name, False)


@lru_cache(maxsize=256)
def _glob(text: str) -> GlobRule | None:
    return parse_rule(text)


def _real(absolute: str, parents: dict[str, str]) -> str:
    """``os.path.realpath(absolute)``, resolving each parent directory once per ``parents``
    cache: the parent is resolved, then the last component if it is a symlink."""
    head, tail = os.path.split(absolute)
    if tail in ("", ".", ".."):
        return os.path.realpath(absolute)
    parent = parents.get(head)
    if parent is None:
        parent = parents[head] = os.path.realpath(head)
    candidate = f"{parent.rstrip('/')}/{tail}"
    try:
        is_link = stat.S_ISLNK(os.lstat(candidate).st_mode)
    except (OSError, ValueError):  # missing, a name too long or with NUL: not a link
        return candidate
    return os.path.realpath(candidate) if is_link else candidate


def _expand(raw: str) -> str:
    """``raw`` with a leading ``~`` expanded (kept as written when it cannot be)."""
    try:
        return str(Path(raw).expanduser()) if raw.startswith("~") else raw
    except RuntimeError:
        return raw


@lru_cache(maxsize=64)
def _real_root(cwd: str) -> str:
    """The session cwd resolved (it does not change while a session lives)."""
    return os.path.realpath(cwd)


def _relative(path: str, root: str) -> str:
    """``path`` relative to ``root`` when inside it (``.`` for the root), else ``path``."""
    if path == root:
        return "."
    prefix = root.rstrip("/") + "/"
    return path[len(prefix) :] if path.startswith(prefix) else path


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")
