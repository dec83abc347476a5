"""The permission policy: may this tool call run, must it be refused, or must the user decide?

This module decides; the agent loop and server do the asking (``session/requestPermission``).

Modes (the session's ``permissionMode``):

- ``auto``: every call runs (CI, trusted automation);
- ``ask``: mutating tools (write, edit, undo_edit, bash) need the user's approval;
- ``read-only``: mutating tools are refused.

Rules (TOML section ``[permissions]``, plus what the user answers with *always*)::

    [permissions]
    allow = ["grep", "bash(git status)", "bash(npm test:*)", "edit(src/**)"]
    deny = ["bash(rm:*)", "read(.env)"]
    allow_dangerous = false

- ``tool`` — every call of that tool (``bash(*)`` is the same as ``bash``);
- ``bash(cmd)`` — exactly that command; ``bash(prefix:*)`` — that command word(s) followed by
  anything (``npm test:*`` matches ``npm test`` and ``npm test -- -k x``, not ``npm testing``).
  A command made of several parts (``a && b | c``) is allowed only when *every* part is
  allowed, and denied when *any* part is denied (deny rules also see through ``sudo``,
  ``env``…). Allow rules never match a command with ``$(…)``, backticks or ``<(…)``, or one
  redirecting output anywhere but ``/dev/null`` or another descriptor;
- ``tool(glob)`` for tools with a path (read, write, edit, undo_edit, grep, find, ls): a
  gitignore-style glob; without ``/`` it matches the file name (``.env``), with ``/`` the path
  relative to the workspace (``src/**``); a leading ``/`` or ``~`` matches absolute paths.

Order of :meth:`PermissionPolicy.check`: deny rules; then the bash deny-list of destructive
commands (:mod:`agentd.tools.danger`), refused unless ``allow_dangerous`` is true or an
**exact** ``bash(cmd)`` allow rule names the whole command (prefix rules never do); then
allow rules; then the mode.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from agentd.errors import ConfigError
from agentd.tools import TOOLS
from agentd.tools.base import Tool
from agentd.tools.danger import dangerous_reason
from agentd.tools.ignore import parse_rule
from agentd.tools.shellwords import segments, strip_wrappers, tokens

MODES = ("auto", "ask", "read-only")
PATH_TOOLS = frozenset({"read", "write", "edit", "undo_edit", "grep", "find", "ls"})
_SUBCOMMAND_NAMES = (
    "git npm pnpm yarn bun npx cargo go docker kubectl pip pip3 uv poetry make dotnet mvn "
    "gradle deno systemctl apt apt-get brew gh helm terraform"
)
SUBCOMMAND_TOOLS = frozenset(_SUBCOMMAND_NAMES.split())
_RULE = re.compile(r"^(?P<tool>[a-z_]+)(?:\((?P<spec>.*)\))?$", re.DOTALL)
_PLAIN_WORD = re.compile(r"^[A-Za-z0-9][\w.:@+-]*$")
_SUBSTITUTION = re.compile(r"\$\(|`|<\(|>\(")


class PolicyError(ConfigError, ValueError):
    """A bad mode, rule or ``[permissions]`` value (a config error, -32005 on the wire)."""


@dataclass(frozen=True)
class Decision:
    """The policy's answer for one call; ``reason`` is a phrase shown to the model/user."""

    action: Literal["allow", "deny", "ask"]
    reason: str


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
        if self.spec is None:
            return True
        text = " ".join(words)
        if self.spec.endswith(":*"):
            prefix = " ".join(self.spec[:-2].split())
            return text == prefix or text.startswith(prefix + " ")
        return text == " ".join(self.spec.split())

    def matches_path(self, raw: str, workspace: Path | None) -> bool:
        """True when this path rule covers the path argument ``raw``."""
        if self.spec is None:
            return True
        absolute = Path(raw).expanduser()
        if not absolute.is_absolute() and workspace is not None:
            absolute = workspace / absolute
        if self.spec.startswith(("/", "~")):
            glob, candidate = str(Path(self.spec).expanduser()), str(absolute)
        else:
            glob, candidate = self.spec, _relative(absolute, raw, workspace)
        rule = parse_rule(glob.lstrip("/"))
        name = Path(candidate).name
        return rule is not None and rule.matches(candidate.lstrip("/"), name, False)


def _relative(absolute: Path, raw: str, workspace: Path | None) -> str:
    if workspace is not None and absolute.is_relative_to(workspace):
        return str(absolute.relative_to(workspace))
    return raw[2:] if raw.startswith("./") else raw


class PermissionPolicy:
    """Mode + allow/deny rules of one session; :meth:`remember` adds session rules."""

    def __init__(
        self,
        mode: str,
        allow: Sequence[str] = (),
        deny: Sequence[str] = (),
        *,
        workspace: Path | None = None,
        allow_dangerous: bool = False,
    ) -> None:
        if mode not in MODES:
            raise PolicyError(f"Unknown permission mode {mode!r}; use one of {', '.join(MODES)}.")
        self.mode = mode
        self.allow = [Rule.parse(text) for text in allow]
        self.deny = [Rule.parse(text) for text in deny]
        self.workspace = workspace
        self.allow_dangerous = allow_dangerous

    @classmethod
    def from_config(
        cls, mode: str, section: Mapping[str, Any] | None, workspace: Path | None = None
    ) -> PermissionPolicy:
        """Build from the ``[permissions]`` table (None: no rules); PolicyError if invalid."""
        section = section or {}
        unknown = set(section) - {"allow", "deny", "allow_dangerous"}
        if unknown:
            raise PolicyError(
                f"Unknown key(s) in [permissions]: {', '.join(sorted(unknown))} "
                "(valid: allow, deny, allow_dangerous)."
            )
        allow_dangerous = section.get("allow_dangerous", False)
        if not isinstance(allow_dangerous, bool):
            raise PolicyError("[permissions] allow_dangerous must be true or false.")
        return cls(
            mode,
            _rule_list(section, "allow"),
            _rule_list(section, "deny"),
            workspace=workspace,
            allow_dangerous=allow_dangerous,
        )

    def check(self, tool: Tool, args: dict[str, Any]) -> Decision:
        """Decide one call (see the module docstring for the order)."""
        denied = next((rule for rule in self.deny if self._denies(rule, tool, args)), None)
        if denied is not None:
            return Decision("deny", f"{tool.name} is denied by the rule `{denied.text}`")
        command = args.get("command") if tool.name == "bash" else None
        danger = dangerous_reason(command) if isinstance(command, str) else None
        if danger is not None and isinstance(command, str):
            if self.allows_dangerous(command):
                return Decision("allow", "this destructive command is explicitly allowed")
            return Decision("deny", f"the command is on the deny-list: {danger}")
        allowed = self._allowing_rules(tool, args)
        if allowed:
            names = ", ".join(f"`{rule.text}`" for rule in allowed)
            return Decision("allow", f"allowed by {names}")
        return self._by_mode(tool)

    def _allowing_rules(self, tool: Tool, args: dict[str, Any]) -> list[Rule]:
        """The allow rules that together cover this call (empty: not allowed by rules)."""
        rules = [rule for rule in self.allow if rule.tool == tool.name]
        whole = [rule for rule in rules if rule.spec is None]
        if whole or not rules:
            return whole[:1]
        if tool.name != "bash":
            raw = args.get("path") or "."
            if not isinstance(raw, str):
                return []
            return [rule for rule in rules if rule.matches_path(raw, self.workspace)][:1]
        command = args.get("command")
        parts = _allowable_parts(command) if isinstance(command, str) else None
        chosen: list[Rule] = []
        for words in parts or []:
            rule = next((rule for rule in rules if rule.matches_command(words)), None)
            if rule is None:
                return []
            if rule not in chosen:
                chosen.append(rule)
        return chosen

    def _by_mode(self, tool: Tool) -> Decision:
        if self.mode == "auto" or not tool.mutating:
            return Decision("allow", f"{self.mode} mode")
        if self.mode == "read-only":
            return Decision(
                "deny",
                f"{tool.name} can change files or run commands, and the session is read-only",
            )
        return Decision("ask", f"{tool.name} needs approval in ask mode")

    def allows_dangerous(self, command: str) -> bool:
        """True when a deny-listed ``command`` may run: ``allow_dangerous`` or an exact
        ``bash(command)`` allow rule."""
        if self.allow_dangerous:
            return True
        forms = {" ".join(command.split()), " ".join(tokens(command))}
        return any(
            rule.is_exact_command and " ".join((rule.spec or "").split()) in forms
            for rule in self.allow
        )

    def _denies(self, rule: Rule, tool: Tool, args: dict[str, Any]) -> bool:
        if rule.tool != tool.name:
            return False
        if rule.spec is None:
            return True
        if tool.name == "bash":
            command = args.get("command")
            return isinstance(command, str) and any(
                rule.matches_command(words) or rule.matches_command(strip_wrappers(words))
                for words in segments(command)
            )
        raw = args.get("path") or "."
        return isinstance(raw, str) and rule.matches_path(raw, self.workspace)

    def remember(self, tool_name: str, args: dict[str, Any], allow: bool) -> str:
        """Store an *always* answer as session rules and return their text.

        bash gets a prefix rule per part of the command (its first word, or two or three for
        tools with subcommands: ``npm test:*``, ``git commit:*``); other tools a whole-tool
        rule.
        """
        texts = _remembered_rules(tool_name, args)
        target = self.allow if allow else self.deny
        for text in texts:
            rule = Rule.parse(text)
            if rule not in target:
                target.append(rule)
        return ", ".join(texts)


def _rule_list(section: Mapping[str, Any], key: str) -> list[str]:
    value = section.get(key, [])
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise PolicyError(f"[permissions] {key} must be a list of strings.")
    return value


def _allowable_parts(command: str) -> list[list[str]] | None:
    """The parts of ``command`` allow rules are matched against (harmless redirects
    dropped), or None when no allow rule may match it at all."""
    if _SUBSTITUTION.search(command):
        return None
    parts = [_without_harmless_redirects(words) for words in segments(command)]
    if not parts or any(words is None for words in parts):
        return None
    return [words for words in parts if words is not None]


def _without_harmless_redirects(words: list[str]) -> list[str] | None:
    """``words`` minus ``2>&1``/``>/dev/null``-style redirects; None if any other output
    redirect remains."""
    kept: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        if ">" not in word:
            kept.append(word)
            index += 1
            continue
        target = words[index + 1] if index + 1 < len(words) else ""
        harmless = target == "/dev/null" or (word.endswith("&") and target.isdigit())
        if not harmless:
            return None
        if kept and kept[-1].isdigit():
            kept.pop()
        index += 2
    return kept


def _remembered_rules(tool_name: str, args: dict[str, Any]) -> list[str]:
    command = args.get("command")
    if tool_name != "bash" or not isinstance(command, str):
        return [tool_name]
    texts: list[str] = []
    for words in segments(command):
        prefix = command_prefix(words)
        if prefix and f"bash({prefix}:*)" not in texts:
            texts.append(f"bash({prefix}:*)")
    return texts or [f"bash({' '.join(command.split())})"]


def command_prefix(words: list[str]) -> str:
    """The command words a remembered rule keys on: ``npm test``, ``git commit``, ``ls``."""
    words = [w for w in words if not re.match(r"^[A-Za-z_]\w*=", w)] if words else []
    if not words:
        return ""
    name = words[0].rsplit("/", 1)[-1]
    count = 1
    if name in SUBCOMMAND_TOOLS and len(words) > 1 and _PLAIN_WORD.match(words[1]):
        count = 3 if words[1] in ("run", "exec") and len(words) > 2 else 2
    elif name.startswith("python") and words[1:2] == ["-m"] and len(words) > 2:
        count = 3
    chosen = words[:count]
    if count == 3 and not _PLAIN_WORD.match(chosen[2]):
        chosen = chosen[:2]
    return " ".join(chosen)
