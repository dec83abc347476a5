"""What permission rules see of a bash command line (parsed by
:mod:`agentd.tools.shellparse.grammar`).

- :func:`deny_forms`: every simple command as deny rules see it (as written and without
  wrappers, nested ``sh -c``/``eval`` strings included; the plain word split as a fallback
  where the grammar cannot place something);
- :func:`path_words`: the words that may name a path (arguments, ``--opt=value`` values,
  redirection targets), for path deny rules;
- :func:`remembered_rules` / :func:`command_prefix`: the rules an *always* answer stores.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from agentd.tools.shellparse.grammar import ParsedCommand, parse_command
from agentd.tools.shellparse.words import command_name, segments, strip_wrappers

_SUBCOMMAND_NAMES = (
    "git npm pnpm yarn bun npx cargo go docker kubectl pip pip3 uv poetry make dotnet mvn "
    "gradle deno systemctl apt apt-get brew gh helm terraform"
)
SUBCOMMAND_TOOLS = frozenset(_SUBCOMMAND_NAMES.split())
_PLAIN_WORD = re.compile(r"^[A-Za-z0-9][\w.:@+-]*$")
_ASSIGNMENT = re.compile(r"^[A-Za-z_]\w*=")
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh"})
_RUNS_STRINGS = _SHELLS | {"eval", "source", "."}
_NESTING = 3


def parse(command: str) -> ParsedCommand | None:
    """The parse of ``command``, or None when the grammar cannot be loaded."""
    try:
        return parse_command(command)
    except ImportError:
        return None


def deny_forms(command: str, depth: int = 0) -> list[list[str]]:
    """Every simple command of ``command`` as deny rules see it (module docstring)."""
    parsed = parse(command)
    argvs = [list(simple.argv) for simple in parsed.distinct] if parsed else []
    if parsed is None or parsed.syntax_error:
        argvs += segments(command)  # what the grammar could not place
    forms: list[list[str]] = []
    for argv in argvs:
        stripped = strip_wrappers(argv)
        if argv:
            forms.append(argv)
        if stripped and stripped is not argv and len(stripped) != len(argv):
            forms.append(stripped)
        if depth < _NESTING and stripped and command_name(stripped[0]) in _RUNS_STRINGS:
            for inner in _nested_strings(stripped):
                forms += deny_forms(inner, depth + 1)
    return forms


def program(spec: str) -> str:
    """The program name of a bash rule's spec (``npm`` for ``npm test:*``, ``rm`` for
    ``/bin/rm:*``)."""
    words = spec.removesuffix(":*").split()
    return command_name(words[0]) if words else ""


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


def path_words(command: str) -> list[str]:
    """Words of ``command`` that may name a path: arguments (the value of ``--opt=value``)
    and redirection targets, of every simple command; each once, in order."""
    parsed = parse(command)
    if parsed is None:
        return list(dict.fromkeys(word for argv in segments(command) for word in argv[1:]))
    found: dict[str, None] = {}
    for simple in parsed.distinct:
        dynamic = simple.dynamic
        for index, word in enumerate(simple.argv[1:], start=1):
            if word.startswith("-"):
                word = word.partition("=")[2]
            if word and not (dynamic and index in dynamic):
                found[word] = None
        for _operator, target in simple.redirects:
            if target and not target.isdigit():
                found[target] = None
    return list(found)


def remembered_rules(tool_name: str, args: dict[str, Any]) -> list[str]:
    """The rules an *always* answer stores: a prefix rule per simple command for bash
    (:func:`command_prefix`), the whole tool otherwise."""
    command = args.get("command")
    if tool_name == "web_fetch":
        return [_domain_rule(args.get("url"))]
    if tool_name != "bash" or not isinstance(command, str):
        return [tool_name]
    parsed = parse(command)
    argvs = [list(s.words) for s in parsed.commands] if parsed else segments(command)
    texts: list[str] = []
    for words in argvs:
        prefix = command_prefix(words)
        if prefix and f"bash({prefix}:*)" not in texts:
            texts.append(f"bash({prefix}:*)")
    return texts or [f"bash({' '.join(command.split())})"]


def _domain_rule(url: object) -> str:
    """``web_fetch(domain:HOST)`` for the URL's host (the whole tool when it has none)."""
    try:
        host = urlsplit(url.strip()).hostname if isinstance(url, str) else None
    except ValueError:
        host = None
    return f"web_fetch(domain:{host})" if host else "web_fetch"


def command_prefix(words: list[str]) -> str:
    """The command words a remembered rule keys on: ``npm test``, ``git commit``, ``ls``."""
    words = [w for w in words if not _ASSIGNMENT.match(w)] if words else []
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
