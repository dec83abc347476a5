"""Permission rules: parsing ``tool`` / ``tool(spec)`` and matching them against calls.

Command rules (``bash(npm test:*)``) match the simple commands of a parsed command line
(:mod:`agentd.tools.shellparse.grammar`); path rules (``write(src/**)``) match normalised,
symlink-resolved paths relative to the session's cwd (see :mod:`agentd.permissions.paths`).
What can be worked out from a rule alone is worked out once per rule (its command pattern,
the literal file name or leading folders of its glob); :class:`CommandRules` indexes a set
of command rules by program word.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Sequence
from fnmatch import fnmatchcase
from functools import cached_property, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import msgspec

from agentd.errors import ConfigError
from agentd.permissions.paths import expand_user, inside, real_root, relative
from agentd.tools import TOOLS

if TYPE_CHECKING:
    from agentd.tools.search.ignore import Rule as GlobRule

PATH_TOOLS = frozenset(
    {"read", "write", "edit", "undo_edit", "notebook_edit", "grep", "find", "ls"}
)
READING_TOOLS = frozenset({"read", "grep", "find", "ls"})
_RULE = re.compile(r"^(?P<tool>[a-z_]+)(?:\((?P<spec>.*)\))?$", re.DOTALL)
_DOMAIN = re.compile(r"^domain:[A-Za-z0-9*.:\[\]-]+$")
MCP_PREFIX = "mcp__"
_MCP_RULE = re.compile(r"^mcp__[A-Za-z0-9_\-*?\[\]]+$")
_GLOB_SYNTAX = frozenset("*?[]{}\\!#")
"""Characters that make a glob segment more than a literal name (``!``/``#`` lead a
negation or a comment in gitignore syntax)."""


class PolicyError(ConfigError, ValueError):
    """A bad mode, rule or ``[permissions]`` value (a config error, -32005 on the wire)."""


class Rule(msgspec.Struct, frozen=True, dict=True):
    """One parsed rule; ``spec`` None means the whole tool."""

    text: str
    tool: str
    spec: str | None = None

    def __hash__(self) -> int:  # the text decides the rest: cheap keys for rule-set caches
        return hash(self.text)

    @classmethod
    def parse(cls, text: str) -> Rule:
        """Parse ``tool``, ``tool(spec)``, or an MCP tool name (``mcp__server__tool``, globs
        allowed: ``mcp__github__*``); raises PolicyError naming what is wrong."""
        if text.strip().startswith(MCP_PREFIX):
            if not _MCP_RULE.match(text.strip()):
                raise PolicyError(
                    f"Bad permission rule {text!r}: an MCP rule is a tool name such as "
                    "`mcp__github__create_issue` or a glob such as `mcp__github__*`."
                )
            return cls(text.strip(), text.strip())
        match = _RULE.match(text.strip())
        if match is None:
            raise PolicyError(f"Bad permission rule {text!r}: write `tool` or `tool(argument)`.")
        tool, spec = match["tool"], match["spec"]
        if tool not in TOOLS:
            raise PolicyError(
                f"Bad permission rule {text!r}: unknown tool {tool!r} (tools: {', '.join(TOOLS)})."
            )
        if spec is not None and tool == "web_fetch" and not _DOMAIN.match(spec.strip()):
            raise PolicyError(
                f"Bad permission rule {text!r}: write web_fetch(domain:HOST), e.g. "
                "web_fetch(domain:docs.python.org) or web_fetch(domain:*.example.com)."
            )
        if spec is not None and tool not in ("bash", "web_fetch") and tool not in PATH_TOOLS:
            raise PolicyError(f"Bad permission rule {text!r}: {tool} takes no argument.")
        if spec is not None and not spec.strip():
            raise PolicyError(f"Bad permission rule {text!r}: the argument is empty.")
        if spec is not None and spec.strip() == "*":
            spec = None
        return cls(text.strip(), tool, spec.strip() if spec else None)

    def matches_mcp(self, tool_name: str) -> bool:
        """Whether this MCP rule (a name or a glob) names the MCP tool ``tool_name``
        (``mcp__SERVER__TOOL``; server names hold no ``__``). A rule with a server part
        (``mcp__github__*``) matches on the (server, tool) pair: its server glob against the
        tool's server, its tool glob against the rest, so no glob reaches from one server
        into another's tools; a rule without one (``mcp__*``) matches the whole name."""
        if not self.tool.startswith(MCP_PREFIX):
            return False
        rule_server, split, rule_tool = self.tool.removeprefix(MCP_PREFIX).partition("__")
        if not split:
            return fnmatch.fnmatchcase(tool_name, self.tool)
        if not tool_name.startswith(MCP_PREFIX):
            return False
        server, split, tool = tool_name.removeprefix(MCP_PREFIX).partition("__")
        return bool(split) and fnmatchcase(server, rule_server) and fnmatchcase(tool, rule_tool)

    @property
    def is_exact_command(self) -> bool:
        return self.tool == "bash" and self.spec is not None and not self.spec.endswith(":*")

    @cached_property
    def pattern(self) -> str:
        """The command words of a bash rule joined by single spaces (``:*`` removed)."""
        spec = self.spec or ""
        return " ".join(spec.removesuffix(":*").split())

    @cached_property
    def _prefix(self) -> str | None:
        """``pattern + " "`` for a ``:*`` rule, None for an exact one."""
        return self.pattern + " " if (self.spec or "").endswith(":*") else None

    def matches_url(self, url: object) -> bool:
        """True when this ``web_fetch`` rule covers ``url``: the whole tool, or a
        ``domain:HOST`` spec equal to (or, with ``*``, glob-matching) the URL's host."""
        if self.spec is None:
            return True
        if not isinstance(url, str):
            return False

        try:
            host = (urlsplit(url.strip()).hostname or "").rstrip(".")
        except ValueError:
            return False
        pattern = self.spec.removeprefix("domain:").lower().strip("[]").rstrip(".")
        return bool(host) and fnmatchcase(host, pattern)

    def matches_command(self, words: list[str]) -> bool:
        """True when this bash rule covers the simple command ``words``."""
        return self.matches_text(" ".join(words))

    def matches_text(self, text: str) -> bool:
        """:meth:`matches_command` for words already joined by single spaces."""
        if self.spec is None or text == self.pattern:
            return True
        prefix = self._prefix
        return prefix is not None and text.startswith(prefix)

    @cached_property
    def _named(self) -> bool:
        """Whether a deny spec names a file wherever it is (no ``/`` but a trailing one)."""
        return "/" not in (self.spec or "").rstrip("/")

    @cached_property
    def literal_name(self) -> str | None:
        """The spec when it is a plain file name (no glob syntax, no trailing ``/``): as a
        deny rule it matches exactly the paths with that last component."""
        spec = self.spec or ""
        return spec if self._named and "/" not in spec and _GLOB_SYNTAX.isdisjoint(spec) else None

    @cached_property
    def _anchor(self) -> str:
        """The literal leading folders of a relative spec with a ``/`` (``src/`` for
        ``src/**``), which a matching relative path starts with; empty when the spec starts
        with a pattern or has no ``/`` (then it matches the file name at any depth)."""
        if self._named:
            return ""
        segments = (self.spec or "").split("/")
        literal = 0
        while literal < len(segments) and segments[literal]:
            if not _GLOB_SYNTAX.isdisjoint(segments[literal]):
                break
            literal += 1
        anchor = "/".join(segments[:literal])
        return anchor + "/" if anchor and literal < len(segments) else anchor

    def matches_path(self, path: str, cwd: Path, *, anywhere: bool = False) -> bool:
        """True when this path rule covers the absolute, normalised ``path``.

        A spec starting with ``/`` or ``~`` is matched against the absolute path; any other
        against the path relative to the (real) session cwd, so it never matches a path
        outside it, except that with ``anywhere`` (deny rules) a spec without ``/`` matches
        the file name wherever it is.
        """
        spec = self.spec
        if spec is None:
            return True
        if anywhere and self._named:
            name = path.rsplit("/", 1)[-1]
            if self.literal_name is not None:
                return name == self.literal_name
            rule = _glob(spec)
            return rule is not None and rule.matches(path.lstrip("/"), name, False)
        if spec.startswith(("/", "~")):
            glob, candidate = expand_user(spec), path
        else:
            root = real_root(str(cwd))
            if not inside(path, root):
                return False
            glob, candidate = spec, relative(path, root)
            if not candidate.startswith(self._anchor):
                return False
        rule = _glob(glob.lstrip("/"))
        name = candidate.rsplit("/", 1)[-1]
        return rule is not None and rule.matches(candidate.lstrip("/"), name, False)


class CommandRules:
    """Bash rules indexed by their program word, for matching many simple commands: a
    command's words joined by single spaces can only match a rule with the same first
    word."""

    def __init__(self, rules: Sequence[Rule]) -> None:
        self.whole = next((rule for rule in rules if rule.spec is None), None)
        self._by_head: dict[str, list[Rule]] = {}
        for rule in rules:
            if rule.spec is not None:
                self._by_head.setdefault(rule.pattern.partition(" ")[0], []).append(rule)

    def first_match(self, text: str) -> Rule | None:
        """The first rule (in rule order) matching the joined words ``text``."""
        if self.whole is not None:
            return self.whole
        for rule in self._by_head.get(text.partition(" ")[0], ()):
            if rule.matches_text(text):
                return rule
        return None


@lru_cache(maxsize=64)
def command_rules(rules: tuple[Rule, ...]) -> CommandRules:
    """The :class:`CommandRules` of a rule set (built once per set)."""
    return CommandRules(rules)


@lru_cache(maxsize=256)
def _glob(text: str) -> GlobRule | None:
    """A path rule's glob, gitignore-style (the walker's parser, imported with the first
    path rule: a session whose rules name no path never loads the walker)."""
    from agentd.tools.search.ignore import parse_rule

    return parse_rule(text)
