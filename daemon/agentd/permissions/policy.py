"""The permission policy: may this tool call run, must it be refused, or must the user decide?

This module decides; the agent loop and server do the asking (``session/requestPermission``).

Modes (the session's ``permissionMode``):

- ``ask`` (the default): mutating tools (write, edit, notebook_edit, undo_edit, bash) need the
  user's approval;
- ``read-only``: mutating tools are refused, and network tools (``web_fetch``, ``web_search``)
  ask as in ``ask`` (refused when no client can answer) unless an allow rule names the host:
  reading a page sends the URL, and a URL or a query can carry what the session read;
- ``auto``: every call runs (CI, trusted automation). Only in a session sandboxed to its
  workspace, unless the user's configuration sets ``[permissions]
  allow_auto_without_sandbox = true`` (:func:`unsandboxed_auto`).

Rules (TOML section ``[permissions]``, plus what the user answers with *always*)::

    [permissions]
    allow = ["grep", "bash(git status)", "bash(npm test:*)", "edit(src/**)"]
    deny = ["bash(rm:*)", "read(.env)"]
    allow_dangerous = false

- ``tool`` — every call of that tool (``bash(*)`` is the same as ``bash``);
- ``bash(cmd)`` — exactly that command; ``bash(prefix:*)`` — that command word(s) followed by
  anything (``npm test:*`` matches ``npm test`` and ``npm test -- -k x``, not ``npm testing``).
  Commands are parsed with a bash grammar (:mod:`agentd.tools.shellparse.grammar`). An allow rule
  approves a command only when the whole input parses cleanly, holds no comment,
  substitution (``$(…)``, backticks, ``<(…)``), here-document, function definition, ``eval``
  or ``source``, redirects output nowhere but ``/dev/null`` or another descriptor (a
  redirection of a list, pipeline or compound statement counts for each command in it), and
  *every* simple command in it (wherever it is nested) matches an allow rule; otherwise the
  call falls back to the mode (asking in ``ask``, refused when no client can answer).
  Deny rules match *every* simple command of the parse by the basename of its program
  (``/bin/rm`` is ``rm``), also behind wrappers (``sudo``, ``env``, ``timeout``…) and inside
  ``bash -c``/``sh -c``/``eval`` strings;
- ``mcp__server__tool`` — that MCP tool; a glob names several (``mcp__github__*``). An MCP
  tool asks in ``ask`` mode and is refused in ``read-only`` unless its server marks it
  ``readOnlyHint``;
- ``tool(glob)`` for tools with a path (read, write, edit, undo_edit, notebook_edit, grep,
  find, ls): a gitignore-style glob matched against the normalised, symlink-resolved path
  relative to the session's cwd (a rule never matches a path outside it, except that a deny
  rule without ``/`` such as ``read(.env)`` matches that file name anywhere); a leading
  ``/`` or ``~`` matches absolute paths. Deny rules match the lexical path too
  (``src/../.git/x`` is ``.git/x``). A ``read(…)`` deny rule covers every reading tool
  (read, grep, find, ls), and path deny rules also refuse bash commands naming a denied path
  (best effort: a command can compute a path no rule sees; the sandbox is the boundary, not
  the rules).

Order of :meth:`PermissionPolicy.check` (the mode is a ceiling): deny rules; then
``read-only`` refuses every mutating tool whatever the allow rules say; then the bash
deny-list of destructive commands (:mod:`agentd.tools.shellparse.danger`, a guard against
accidents),
refused unless ``allow_dangerous`` is true or an **exact** ``bash(cmd)`` allow rule names the
whole command; then allow rules; then the mode (``ask`` asks, ``auto`` runs).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, TypeGuard

import msgspec

from agentd.paths import config_dir
from agentd.permissions.commands import (
    command_prefix,
    deny_forms,
    parse,
    path_words,
    program,
    remembered_rules,
)
from agentd.permissions.paths import PathView, Resolver
from agentd.permissions.rules import (
    MCP_PREFIX,
    PATH_TOOLS,
    READING_TOOLS,
    PolicyError,
    Rule,
    command_rules,
)
from agentd.protocol.methods import PermissionMode
from agentd.tools.base import Tool
from agentd.tools.shellparse.danger import dangerous_reason
from agentd.tools.shellparse.readonly import harmless_redirects
from agentd.tools.shellparse.words import command_name, tokens

__all__ = [
    "MODES",
    "Decision",
    "PermissionPolicy",
    "PolicyError",
    "Rule",
    "command_prefix",
    "unsandboxed_auto",
]

MODES = ("auto", "ask", "read-only")


def _is_mode(mode: str) -> TypeGuard[PermissionMode]:
    return mode in MODES


def unsandboxed_auto(
    mode: str, *, sandboxed: bool, allowed: bool, config_file: Path | None = None
) -> str | None:
    """Why ``mode`` may not apply to a session (None: it may): ``auto`` runs every call
    unasked, so it needs the workspace sandbox or the user's explicit opt-in. The message
    names both ways out: the sandbox as every client sets it, and the opt-in's exact line in
    the user's ``config_file`` (default: ``$XDG_CONFIG_HOME/agentd/config.toml``, the real
    path)."""
    if mode != "auto" or sandboxed or allowed:
        return None
    where = config_file or config_dir() / "config.toml"
    return (
        "`auto` mode runs every tool call without asking, so it needs the workspace sandbox: "
        "start the session with `--sandbox workspace` (agentctl send/chat, agentd acp/mcp/lsp), "
        '`"sandbox": "workspace"` (session/new, the agentd_run tool) or '
        '`sandbox = "workspace"` in the configuration; or, to run auto without a sandbox, add '
        f"the line `allow_auto_without_sandbox = true` under `[permissions]` in {where}."
    )


class Decision(msgspec.Struct, frozen=True):
    """The policy's answer for one call; ``reason`` is a phrase shown to the model/user."""

    action: Literal["allow", "deny", "ask"]
    reason: str


class PermissionPolicy:
    """Mode + allow/deny rules of one session; :meth:`remember` adds session rules.

    ``mode`` is the session's permission mode, kept here only (``session/setPermissionMode``
    changes it; the session's state reports it from here). ``cwd`` is the session's working
    directory (relative paths and rules are relative to it); ``workspace`` is set when the
    session is sandboxed to that root.
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
        allow_auto_without_sandbox: bool = False,
        keep_in_project: Callable[[list[str]], None] | None = None,
        config_file: Path | None = None,
    ) -> None:
        if not _is_mode(mode):
            raise PolicyError(f"Unknown permission mode {mode!r}; use one of {', '.join(MODES)}.")
        self.mode: PermissionMode = mode
        self.allow = [Rule.parse(text) for text in allow]
        self.deny = [Rule.parse(text) for text in deny]
        self.workspace = workspace
        self.cwd = cwd or workspace or Path.cwd()
        self.allow_dangerous = allow_dangerous
        self.allow_auto_without_sandbox = allow_auto_without_sandbox
        """The user's opt-in to ``auto`` without a sandbox (see :func:`unsandboxed_auto`)."""
        self.keep_in_project = keep_in_project
        """Saves allow rules for the session's folder in the user's config (given by the
        session factory; None: "always in this project" is not offered)."""
        self.config_file = config_file
        """The user's configuration file, named when ``auto`` is refused (None: the default)."""

    def switch_mode(self, mode: PermissionMode) -> None:
        """Apply ``mode`` from the next tool call on (``session/setPermissionMode``)."""
        self.mode = mode

    @classmethod
    def from_config(
        cls,
        mode: str,
        section: Mapping[str, Any] | None,
        workspace: Path | None = None,
        cwd: Path | None = None,
    ) -> PermissionPolicy:
        """Build from a ``[permissions]`` table as parsed (None: no rules), checking it first;
        PolicyError if invalid. (The daemon passes the fields of the validated configuration,
        ``agentd.config.schema.PermissionsSection``, to the constructor instead.)"""
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
        if tool.name.startswith(MCP_PREFIX):
            return self._check_mcp(tool)
        denied = self._denying_rule(tool, args)
        if denied is not None:
            return Decision("deny", f"{tool.name} is denied by the rule `{denied.text}`")
        mutating = _mutating(tool, args)
        if self.mode == "read-only" and mutating:
            return self._read_only(tool)
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
        network = getattr(tool, "network", False)
        if self.mode == "auto" or not (mutating or network):
            return Decision("allow", f"{self.mode} mode")
        if self.mode == "read-only":
            reason = f"{tool.name} reaches the network: it needs approval in read-only mode"
            return Decision("ask", reason)
        return Decision("ask", f"{tool.name} needs approval in ask mode")

    def runs_unasked(self, tool: Tool, args: dict[str, Any]) -> bool:
        """Whether :meth:`check` allows the call outright (no approval asked)."""
        return self.check(tool, args).action == "allow"

    def _check_mcp(self, tool: Tool) -> Decision:
        """An MCP tool (``mcp__server__tool``): deny rules, the read-only ceiling, allow
        rules, then the mode; only a tool its server marks ``readOnlyHint`` counts as not
        mutating."""
        for rule in self.deny:
            if rule.matches_mcp(tool.name):
                return Decision("deny", f"{tool.name} is denied by the rule `{rule.text}`")
        if self.mode == "read-only" and tool.mutating:
            return self._read_only(tool)
        for rule in self.allow:
            if rule.matches_mcp(tool.name):
                return Decision("allow", f"allowed by `{rule.text}`")
        if self.mode == "auto" or not tool.mutating:
            return Decision("allow", f"{self.mode} mode")
        return Decision("ask", f"{tool.name} needs approval in ask mode")

    @staticmethod
    def _read_only(tool: Tool) -> Decision:
        return Decision(
            "deny", f"{tool.name} can change files or run commands, and the session is read-only"
        )

    def read_denied(self, path: Path) -> bool:
        """Whether a ``read(…)`` deny rule covers ``path`` (reading tools skip such files
        while they walk a directory)."""
        rules = [rule for rule in self.deny if rule.tool == "read"]
        if not rules:
            return False
        view = PathView.of(str(path), self.cwd)
        return any(self._path_rule_hits(rule, view) for rule in rules)

    def allows_dangerous(self, command: str) -> bool:
        """True when a deny-listed ``command`` may run: ``allow_dangerous`` or an exact
        ``bash(command)`` allow rule."""
        if self.allow_dangerous:
            return True
        forms = {" ".join(command.split()), " ".join(tokens(command))}
        return any(rule.is_exact_command and rule.pattern in forms for rule in self.allow)

    def remember(self, tool_name: str, args: dict[str, Any], allow: bool) -> str:
        """Store an *always* answer as session rules and return their text.

        bash gets a prefix rule per simple command (its first word, or two or three for
        tools with subcommands: ``npm test:*``, ``git commit:*``); other tools a whole-tool
        rule.
        """
        texts = remembered_rules(tool_name, args)
        target = self.allow if allow else self.deny
        for text in texts:
            rule = Rule.parse(text)
            if rule not in target:
                target.append(rule)
        return ", ".join(texts)

    def _allowing_rules(self, tool: Tool, args: dict[str, Any]) -> list[Rule]:
        """The allow rules that together cover this call (empty: not allowed by rules)."""
        rules = [rule for rule in self.allow if rule.tool == tool.name]
        whole = [rule for rule in rules if rule.spec is None]
        if whole or not rules:
            return whole[:1]
        if tool.name == "bash":
            command = args.get("command")
            return self._allowing_command_rules(rules, command) if isinstance(command, str) else []
        if tool.name == "web_fetch":
            return [rule for rule in rules if rule.matches_url(args.get("url"))][:1]
        raw = args.get("path") or "."
        if not isinstance(raw, str):
            return []
        real = PathView.of(raw, self.cwd).real
        return [rule for rule in rules if rule.matches_path(real, self.cwd)][:1]

    @staticmethod
    def _allowing_command_rules(rules: list[Rule], command: str) -> list[Rule]:
        """The bash allow rules covering every simple command of ``command`` (empty: not
        all of them are covered, or the command is opaque)."""
        parsed = parse(command)
        if parsed is None or not parsed.allowable:
            return []
        index = command_rules(tuple(rules))
        chosen: dict[Rule, None] = {}
        for simple in parsed.distinct:
            if not harmless_redirects(simple):
                return []
            words = simple.argv if not simple.assignments else simple.words
            rule = index.first_match(" ".join(words))
            if rule is None:
                return []
            chosen[rule] = None
        return list(chosen)

    def _denying_rule(self, tool: Tool, args: dict[str, Any]) -> Rule | None:
        """The first deny rule that covers this call, or None."""
        if not self.deny:
            return None
        if tool.name == "bash":
            command = args.get("command")
            return self._denying_command_rule(command) if isinstance(command, str) else None
        if tool.name == "web_fetch":
            url = args.get("url")
            return next((r for r in self.deny if r.tool == tool.name and r.matches_url(url)), None)
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
        command_deny = [rule for rule in self.deny if rule.tool == "bash"]
        whole = next((rule for rule in command_deny if rule.spec is None), None)
        if whole is not None:
            return whole
        programs = {program(rule.spec or "") for rule in command_deny}
        for words in deny_forms(command) if programs else ():
            if command_name(words[0]) not in programs:
                continue
            texts = {" ".join(words), " ".join([command_name(words[0]), *words[1:]])}
            for rule in command_deny:
                if any(rule.matches_text(text) for text in texts):
                    return rule
        path_rules = [r for r in self.deny if r.tool in PATH_TOOLS and r.spec is not None]
        if not path_rules:
            return None
        resolver = Resolver(self.cwd)
        views = [resolver.view(word) for word in path_words(command)]
        names = {path.rsplit("/", 1)[-1] for view in views for path in view}
        for rule in path_rules:
            if rule.literal_name is not None:  # a file name: compared with every name at once
                if rule.literal_name in names:
                    return rule
            elif any(self._path_rule_hits(rule, view) for view in views):
                return rule
        return None


def _rule_list(section: Mapping[str, Any], key: str) -> list[str]:
    value = section.get(key, [])
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise PolicyError(f"[permissions] {key} must be a list of strings.")
    return value


def _mutating(tool: Tool, args: dict[str, Any]) -> bool:
    """Whether this call changes files: the tool's ``mutating``, or for a tool whose calls
    differ (``lsp``: a rename) what its ``mutates(args)`` says."""
    mutates = getattr(tool, "mutates", None)
    return bool(tool.mutating or (mutates is not None and mutates(args)))
