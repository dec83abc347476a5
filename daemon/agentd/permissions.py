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
  Commands are parsed with a bash grammar (:mod:`agentd.tools.bashparse`). An allow rule
  approves a command only when the whole input parses cleanly, holds no comment,
  substitution (``$(…)``, backticks, ``<(…)``), here-document, function definition, ``eval``
  or ``source``, redirects output nowhere but ``/dev/null`` or another descriptor, and
  *every* simple command in it (wherever it is nested) matches an allow rule; otherwise the
  call falls back to the mode (asking in ``ask``, refused when no client can answer).
  Deny rules match *every* simple command of the parse by the basename of its program
  (``/bin/rm`` is ``rm``), also behind wrappers (``sudo``, ``env``, ``timeout``…) and inside
  ``bash -c``/``sh -c``/``eval`` strings;
- ``tool(glob)`` for tools with a path (read, write, edit, undo_edit, grep, find, ls): a
  gitignore-style glob matched against the normalised, symlink-resolved path relative to the
  session's cwd (a rule never matches a path outside it, except that a deny rule without
  ``/`` such as ``read(.env)`` matches that file name anywhere); a leading ``/`` or ``~``
  matches absolute paths. Deny rules match the lexical path too (``src/../.git/x`` is
  ``.git/x``). A ``read(…)`` deny rule covers every reading tool (read, grep, find, ls), and
  path deny rules also refuse bash commands naming a denied path (best effort: a command can
  compute a path no rule sees; the sandbox is the boundary, not the rules).

Order of :meth:`PermissionPolicy.check` (the mode is a ceiling): deny rules; then
``read-only`` refuses every mutating tool whatever the allow rules say; then the bash
deny-list of destructive commands (:mod:`agentd.tools.danger`, a guard against accidents),
refused unless ``allow_dangerous`` is true or an **exact** ``bash(cmd)`` allow rule names the
whole command; then allow rules; then the mode (``ask`` asks, ``auto`` runs).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from agentd.permission_rules import (
    PATH_TOOLS,
    READING_TOOLS,
    PathView,
    PolicyError,
    Rule,
)
from agentd.tools.base import Tool
from agentd.tools.bashparse import ParsedCommand, SimpleCommand, parse_command
from agentd.tools.danger import dangerous_reason
from agentd.tools.shellwords import command_name, segments, strip_wrappers, tokens

__all__ = ["MODES", "Decision", "PermissionPolicy", "PolicyError", "Rule", "command_prefix"]

MODES = ("auto", "ask", "read-only")
_SUBCOMMAND_NAMES = (
    "git npm pnpm yarn bun npx cargo go docker kubectl pip pip3 uv poetry make dotnet mvn "
    "gradle deno systemctl apt apt-get brew gh helm terraform"
)
SUBCOMMAND_TOOLS = frozenset(_SUBCOMMAND_NAMES.split())
_PLAIN_WORD = re.compile(r"^[A-Za-z0-9][\w.:@+-]*$")
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh"})
_NESTING = 3


@dataclass(frozen=True)
class Decision:
    """The policy's answer for one call; ``reason`` is a phrase shown to the model/user."""

    action: Literal["allow", "deny", "ask"]
    reason: str


class PermissionPolicy:
    """Mode + allow/deny rules of one session; :meth:`remember` adds session rules.

    ``cwd`` is the session's working directory (relative paths and rules are relative to
    it); ``workspace`` is set when the session is sandboxed to that root.
    """

    def __init__(
        self,
        mode: str,
        allow: Sequence[str] = (),
        deny: Sequence[str] = (),
        *,
        workspace: Path | None = None,
        cwd: Path | None = None,
        allow_dangerous: bool = False,
    ) -> None:
        if mode not in MODES:
            raise PolicyError(f"Unknown permission mode {mode!r}; use one of {', '.join(MODES)}.")
        self.mode = mode
        self.allow = [Rule.parse(text) for text in allow]
        self.deny = [Rule.parse(text) for text in deny]
        self.workspace = workspace
        self.cwd = cwd or workspace or Path.cwd()
        self.allow_dangerous = allow_dangerous

    @classmethod
    def from_config(
        cls,
        mode: str,
        section: Mapping[str, Any] | None,
        workspace: Path | None = None,
        cwd: Path | None = None,
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
            cwd=cwd,
            allow_dangerous=allow_dangerous,
        )

    def check(self, tool: Tool, args: dict[str, Any]) -> Decision:
        """Decide one call (see the module docstring for the order)."""
        denied = self._denying_rule(tool, args)
        if denied is not None:
            return Decision("deny", f"{tool.name} is denied by the rule `{denied.text}`")
        if self.mode == "read-only" and tool.mutating:
            return Decision(
                "deny",
                f"{tool.name} can change files or run commands, and the session is read-only",
            )
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

    def read_denied(self, path: Path) -> bool:
        """Whether a ``read(…)`` deny rule covers ``path`` (reading tools skip such files
        while they walk a directory)."""
        rules = [rule for rule in self.deny if rule.tool == "read"]
        if not rules:
            return False
        view = PathView.of(str(path), self.cwd)
        return any(self._path_rule_hits(rule, view) for rule in rules)

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
            real = PathView.of(raw, self.cwd).real
            return [rule for rule in rules if rule.matches_path(real, self.cwd)][:1]
        command = args.get("command")
        parsed = _parse(command) if isinstance(command, str) else None
        if parsed is None or not parsed.allowable:
            return []
        chosen: list[Rule] = []
        for simple in parsed.commands:
            if not _harmless_redirects(simple):
                return []
            rule = next((rule for rule in rules if rule.matches_command(simple.words)), None)
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

    def _denying_rule(self, tool: Tool, args: dict[str, Any]) -> Rule | None:
        """The first deny rule that covers this call, or None."""
        if not self.deny:
            return None
        if tool.name == "bash":
            command = args.get("command")
            return self._denying_command_rule(command) if isinstance(command, str) else None
        raw = args.get("path") or "."
        view = PathView.of(raw, self.cwd) if isinstance(raw, str) else None
        for rule in self.deny:
            if rule.tool != tool.name and not (rule.tool == "read" and tool.name in READING_TOOLS):
                continue
            if rule.spec is None or (view is not None and self._path_rule_hits(rule, view)):
                return rule
        return None

    def _path_rule_hits(self, rule: Rule, view: PathView) -> bool:
        if rule.matches_path(view.real, self.cwd, anywhere=True):
            return True
        return view.lexical != view.real and rule.matches_path(
            view.lexical, self.cwd, anywhere=True
        )

    def _denying_command_rule(self, command: str) -> Rule | None:
        """A bash rule against every simple command; a path rule against every word that
        may name a path (see the module docstring)."""
        command_rules = [rule for rule in self.deny if rule.tool == "bash"]
        whole = next((rule for rule in command_rules if rule.spec is None), None)
        if whole is not None:
            return whole
        heads = {command_name(_head(rule.spec or "")) for rule in command_rules}
        for words in _deny_forms(command, 0) if heads else ():
            if command_name(words[0]) not in heads:
                continue
            texts = {" ".join(words), " ".join([command_name(words[0]), *words[1:]])}
            for rule in command_rules:
                if any(rule.matches_text(text) for text in texts):
                    return rule
        path_rules = [r for r in self.deny if r.tool in PATH_TOOLS and r.spec is not None]
        if not path_rules:
            return None
        parents: dict[str, str] = {}
        views = [
            PathView.of(word, self.cwd, parents) for word in dict.fromkeys(_path_words(command))
        ]
        return next(
            (rule for rule in path_rules for view in views if self._path_rule_hits(rule, view)),
            None,
        )

    def remember(self, tool_name: str, args: dict[str, Any], allow: bool) -> str:
        """Store an *always* answer as session rules and return their text.

        bash gets a prefix rule per simple command (its first word, or two or three for
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


def _parse(command: str) -> ParsedCommand | None:
    """The parse of ``command``, or None when the grammar cannot be loaded."""
    try:
        return parse_command(command)
    except ImportError:
        return None


def _harmless_redirects(simple: SimpleCommand) -> bool:
    """Only input, ``/dev/null`` and descriptor-duplicating redirections."""
    for operator, target in simple.redirects:
        if ">" not in operator:
            continue
        if target != "/dev/null" and not (
            operator.endswith("&") and (target.isdigit() or target == "-")
        ):
            return False
    return True


def _deny_forms(command: str, depth: int) -> list[list[str]]:
    """Every simple command of ``command`` as deny rules see it: as written and without
    wrappers (rules compare the program's basename too); nested ``sh -c``/``eval`` strings
    included, and the plain word split of the input as a fallback."""
    parsed = _parse(command)
    argvs = [list(simple.argv) for simple in parsed.commands] if parsed else []
    if parsed is None or parsed.syntax_error:
        argvs += segments(command)  # what the grammar could not place
    forms: list[list[str]] = []
    for argv in argvs:
        stripped = strip_wrappers(argv)
        if argv:
            forms.append(argv)
        if stripped and stripped is not argv and len(stripped) != len(argv):
            forms.append(stripped)
        if depth < _NESTING and stripped:
            for inner in _nested_strings(stripped):
                forms += _deny_forms(inner, depth + 1)
    return forms


def _head(spec: str) -> str:
    """The program word of a bash rule's spec (``npm`` for ``npm test:*``)."""
    words = spec.removesuffix(":*").split()
    return words[0] if words else ""


def _nested_strings(words: list[str]) -> list[str]:
    """The command strings run by ``sh -c STRING`` or ``eval WORDS…``."""
    if not words:
        return []
    name = command_name(words[0])
    if name in ("eval", "source", "."):
        return [" ".join(words[1:])]
    if name in _SHELLS:
        for index, word in enumerate(words[1:-1], start=1):
            if word.startswith("-") and not word.startswith("--") and "c" in word:
                return [words[index + 1]]
    return []


def _path_words(command: str) -> list[str]:
    """Words of ``command`` that may name a path: arguments (the value of ``--opt=value``)
    and redirection targets, of every simple command."""
    parsed = _parse(command)
    found: list[str] = []
    if parsed is None:
        return [word for argv in segments(command) for word in argv[1:]]
    for simple in parsed.commands:
        for index, word in enumerate(simple.argv[1:], start=1):
            if index in simple.dynamic or not word:
                continue
            if word.startswith("-"):
                word = word.partition("=")[2]
            if word:
                found.append(word)
        found += [
            target for operator, target in simple.redirects if target and not target.isdigit()
        ]
    return found


def _remembered_rules(tool_name: str, args: dict[str, Any]) -> list[str]:
    command = args.get("command")
    if tool_name != "bash" or not isinstance(command, str):
        return [tool_name]
    parsed = _parse(command)
    argvs = [list(s.words) for s in parsed.commands] if parsed else segments(command)
    texts: list[str] = []
    for words in argvs:
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
