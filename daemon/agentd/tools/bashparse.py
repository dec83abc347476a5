"""Bash commands parsed with a real shell grammar, for permission rules.

The grammar is tree-sitter-bash (the ``tree-sitter`` and ``tree-sitter-bash`` wheels): a
maintained, complete bash grammar with prebuilt wheels for every platform and no runtime
dependencies. It is loaded on first use (about 30 ms), never at daemon start-up;
:func:`warm_up` loads it in a background thread when a session with bash is created.

:func:`parse_command` returns every simple command of the input, wherever it is (lists,
pipelines, subshells, ``if``/``for``/``case`` bodies, function bodies, command and process
substitutions), each with its words (quotes removed), its leading variable assignments and
its redirections, plus the reasons why *no allow rule* may approve the input:
it does not parse cleanly, or it holds a comment, a command or process substitution, a
here-document, a function definition, a command name that is not a literal word,
``eval``/``source``/``.``, or an assignment on its own.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tree_sitter import Node, Parser, Query

_OPAQUE_NODES = {
    "comment": "a comment",
    "command_substitution": "a command substitution",
    "process_substitution": "a process substitution",
    "heredoc_redirect": "a here-document",
    "function_definition": "a function definition",
}
_STRING_RUNNERS = frozenset({"eval", "source", "."})
_DYNAMIC_PARTS = frozenset(
    {
        "simple_expansion",
        "expansion",
        "command_substitution",
        "process_substitution",
        "arithmetic_expansion",
        "ansi_c_string",
        "translated_string",
        "brace_expression",
    }
)
SYNTAX_ERROR = "a syntax error (it does not parse cleanly)"
_PLAIN = re.compile(r"[\w./:@%+,-]+(?:[ \t]+[\w./:@%+,-]+)*")
_lock = threading.Lock()
_parser: Parser | None = None


@dataclass(frozen=True)
class SimpleCommand:
    """One simple command: ``argv`` (quotes removed), the ``VAR=value`` words before it,
    and its redirections as ``(operator, target)``. ``dynamic`` marks argv words holding
    expansions (their text is the source text)."""

    argv: tuple[str, ...]
    assignments: tuple[str, ...] = ()
    redirects: tuple[tuple[str, str], ...] = ()
    dynamic: frozenset[int] = frozenset()

    @property
    def words(self) -> list[str]:
        """Assignments then argv: what allow rules are matched against."""
        return [*self.assignments, *self.argv]


@dataclass(frozen=True)
class ParsedCommand:
    """Every simple command of an input, and why allow rules may not approve it (empty:
    they may, if each simple command matches one)."""

    commands: tuple[SimpleCommand, ...]
    opaque: tuple[str, ...] = ()

    @property
    def allowable(self) -> bool:
        return not self.opaque and bool(self.commands)

    @property
    def syntax_error(self) -> bool:
        """Whether the input did not parse cleanly (parts may be missing from ``commands``)."""
        return SYNTAX_ERROR in self.opaque


@dataclass
class _Walk:
    commands: list[SimpleCommand] = field(default_factory=list)
    opaque: list[str] = field(default_factory=list)

    def flag(self, reason: str) -> None:
        if reason not in self.opaque:
            self.opaque.append(reason)


_QUERY = """
(command) @command
(declaration_command) @declaration
(unset_command) @declaration
(variable_assignment) @assignment
(variable_assignments) @assignment
(comment) @comment
(command_substitution) @command_substitution
(process_substitution) @process_substitution
(heredoc_redirect) @heredoc_redirect
(function_definition) @function_definition
"""
_query: Query | None = None


def parser() -> Parser:
    """The shared bash parser (loaded once, thread-safe)."""
    global _parser, _query
    with _lock:
        if _parser is None:
            import tree_sitter
            import tree_sitter_bash

            language = tree_sitter.Language(tree_sitter_bash.language())
            _query = tree_sitter.Query(language, _QUERY)
            _parser = tree_sitter.Parser(language)
        return _parser


def warm_up() -> None:
    """Load the grammar in a background thread (so the first bash call does not wait)."""
    if _parser is None:
        threading.Thread(target=parser, name="bash-grammar", daemon=True).start()


@lru_cache(maxsize=512)
def parse_command(command: str) -> ParsedCommand:
    """The simple commands of ``command`` and the reasons it is opaque (module docstring).

    The interesting nodes are found by a tree-sitter query (in C); only they are visited.
    """
    from tree_sitter import QueryCursor

    tree = parser().parse(command.encode("utf-8", "surrogateescape"))
    assert _query is not None
    found = QueryCursor(_query).captures(tree.root_node)
    walk = _Walk()
    if tree.root_node.has_error:
        walk.flag(SYNTAX_ERROR)
    for name, reason in _OPAQUE_NODES.items():
        if found.get(name):
            walk.flag(reason)
    if any(_standalone(node) for node in found.get("assignment", ())):
        walk.flag("a variable assignment on its own")
    commands = [*found.get("command", ()), *found.get("declaration", ())]
    for node in sorted(commands, key=lambda node: node.start_byte):
        if node.type == "command":
            plain = _plain_command(node)
            walk.commands.append(plain if plain is not None else _simple_command(node, walk))
        else:
            words = [_text(child)[0] for child in node.children if child.is_named]
            walk.commands.append(SimpleCommand((_text(node.children[0])[0], *words)))
    return ParsedCommand(tuple(walk.commands), tuple(walk.opaque))


def _standalone(node: Node) -> bool:
    parent = node.parent
    return parent is not None and parent.type not in ("command", "declaration_command")


def _plain_command(node: Node) -> SimpleCommand | None:
    """The fast path for a command of plain words only (no quotes, expansions, assignments,
    globs or redirections of its own): its words are its text split on blanks."""
    text = _raw(node)
    if not _PLAIN.fullmatch(text):
        return None
    argv = tuple(text.split())
    if argv[0].rsplit("/", 1)[-1] in _STRING_RUNNERS:
        return None
    parent = node.parent
    redirects: tuple[tuple[str, str], ...] = ()
    if parent is not None and parent.type == "redirected_statement":
        redirects = tuple(_redirect(c) for c in parent.children if c.type.endswith("_redirect"))
    return SimpleCommand(argv, (), redirects)


def _simple_command(node: Node, walk: _Walk) -> SimpleCommand:
    argv: list[str] = []
    assignments: list[str] = []
    redirects: list[tuple[str, str]] = []
    dynamic: set[int] = set()
    for child in node.children:
        if child.type == "variable_assignment":
            assignments.append(_text(child)[0])
        elif child.type in ("file_redirect", "herestring_redirect"):
            redirects.append(_redirect(child))
        elif child.type == "command_name":
            text, is_dynamic = _text(child)
            if is_dynamic:
                walk.flag("a command name that is not a plain word")
            argv.append(text)
        elif child.is_named:
            text, is_dynamic = _text(child)
            if is_dynamic:
                dynamic.add(len(argv))
            argv.append(text)
    if argv and argv[0].rsplit("/", 1)[-1] in _STRING_RUNNERS:
        walk.flag(f"`{argv[0]}`, which runs a string as commands")
    parent = node.parent
    if parent is not None and parent.type == "redirected_statement":
        redirects += [_redirect(c) for c in parent.children if c.type.endswith("_redirect")]
    return SimpleCommand(tuple(argv), tuple(assignments), tuple(redirects), frozenset(dynamic))


def _redirect(node: Node) -> tuple[str, str]:
    operator = next((c.type for c in node.children if not c.is_named), "")
    targets = [c for c in node.children if c.is_named and c.type != "file_descriptor"]
    target = _text(targets[-1])[0] if targets else ""
    descriptor = next((_raw(c) for c in node.children if c.type == "file_descriptor"), "")
    return descriptor + operator, target


def _text(node: Node) -> tuple[str, bool]:
    """The word's value with quotes removed, and whether it holds an expansion."""
    kind = node.type
    if kind in _DYNAMIC_PARTS:
        return _raw(node), True
    if kind == "raw_string":
        return _raw(node)[1:-1], False
    if kind == "word":
        return _unescape(_raw(node)), False
    if kind in ("string", "concatenation", "command_name"):
        parts = [_text(child) for child in node.children if child.type != '"']
        return "".join(text for text, _d in parts), any(d for _t, d in parts)
    if kind == "string_content":
        return _raw(node), False
    return _raw(node), node.named_child_count > 0


def _raw(node: Any) -> str:
    return bytes(node.text or b"").decode("utf-8", "surrogateescape")


def _unescape(text: str) -> str:
    if "\\" not in text:
        return text
    out: list[str] = []
    index = 0
    while index < len(text):
        if text[index] == "\\" and index + 1 < len(text):
            index += 1
        out.append(text[index])
        index += 1
    return "".join(out)
