"""Bash commands parsed with a real shell grammar, for permission rules.

The grammar is tree-sitter-bash (the ``tree-sitter`` and ``tree-sitter-bash`` wheels): a
maintained, complete bash grammar with prebuilt wheels for every platform and no runtime
dependencies. It is loaded on a session's first bash command (a few milliseconds: the
grammar is compiled C), never at daemon start-up or session creation.

:func:`parse_command` returns every simple command of the input, wherever it is (lists,
pipelines, subshells, ``if``/``for``/``case`` bodies, function bodies, command and process
substitutions), each with its words (quotes removed), its leading variable assignments and
its redirections, plus the reasons why *no allow rule* may approve the input:
it does not parse cleanly, or it holds a comment, a command or process substitution, a
here-document, a function definition, a command name that is not a literal word,
``eval``/``source``/``.``, or an assignment on its own.

The syntax tree is walked once, in source order, comparing node kinds by their numeric ids;
word texts are slices of the input. A command of plain words only (the common case) is
split on blanks without visiting its words.
"""

from __future__ import annotations

import re
import threading
from functools import cached_property, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import msgspec

if TYPE_CHECKING:
    from tree_sitter import Language, Node, Parser

_OPAQUE_NODES = {
    "comment": "a comment",
    "command_substitution": "a command substitution",
    "process_substitution": "a process substitution",
    "heredoc_redirect": "a here-document",
    "function_definition": "a function definition",
}
_STANDALONE_ASSIGNMENT = "a variable assignment on its own"
_STRING_RUNNERS = frozenset({"eval", "source", "."})
_DYNAMIC_PARTS = (
    "simple_expansion",
    "expansion",
    "command_substitution",
    "process_substitution",
    "arithmetic_expansion",
    "ansi_c_string",
    "translated_string",
    "brace_expression",
)
SYNTAX_ERROR = "a syntax error (it does not parse cleanly)"
_PLAIN = re.compile(r"[\w./:@%+,-]+(?:[ \t]+[\w./:@%+,-]+)*")
_INERT_REDIRECT = re.compile(r"[\w./:@%+,<>&| \t-]*")
"""The text of a file redirection holding no expansion, quote, escape or substitution."""
_COMMAND, _REDIRECTED, _DECLARATION, _UNSET, _REASON = range(5)
_lock = threading.Lock()
_parser: Parser | None = None
_kinds: _Kinds | None = None


class SimpleCommand(NamedTuple):
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


class ParsedCommand(msgspec.Struct, frozen=True, dict=True):
    """Every simple command of an input, and why allow rules may not approve it (empty:
    they may, if each simple command matches one)."""

    commands: tuple[SimpleCommand, ...]
    opaque: tuple[str, ...] = ()

    @cached_property
    def distinct(self) -> tuple[SimpleCommand, ...]:
        """``commands`` with repeats left out (first occurrences, in order): what a check
        of each simple command needs to look at (``x | tee log && y | tee log``)."""
        return tuple(dict.fromkeys(self.commands))

    @property
    def allowable(self) -> bool:
        return not self.opaque and bool(self.commands)

    @property
    def syntax_error(self) -> bool:
        """Whether the input did not parse cleanly (parts may be missing from ``commands``)."""
        return SYNTAX_ERROR in self.opaque


class _Kinds:
    """The grammar's node kind ids by role (one name can have several ids)."""

    def __init__(self, language: Language) -> None:
        named: dict[str, set[int]] = {}
        anonymous: dict[str, set[int]] = {}
        for kind in range(language.node_kind_count):
            table = named if language.node_kind_is_named(kind) else anonymous
            table.setdefault(language.node_kind_for_id(kind) or "", set()).add(kind)

        def ids(*names: str) -> frozenset[int]:
            missing = [name for name in names if name not in named]
            if missing:  # a grammar without them would let opaque input through unseen
                raise LookupError(f"the bash grammar has no {', '.join(missing)} nodes")
            return frozenset(kind for name in names for kind in named[name])

        self.command = ids("command")
        self.assignment = ids("variable_assignment", "variable_assignments")
        self.redirect = ids(*(name for name in named if name.endswith("_redirect")))
        self.file_redirect = ids("file_redirect")
        self.command_part_redirect = ids("file_redirect", "herestring_redirect")
        self.command_name = ids("command_name")
        self.assignment_word = ids("variable_assignment")
        self.file_descriptor = ids("file_descriptor")
        self.reasons = {kind: why for name, why in _OPAQUE_NODES.items() for kind in ids(name)}
        self.reasons |= dict.fromkeys(self.assignment, _STANDALONE_ASSIGNMENT)
        self.roles = dict.fromkeys(self.reasons, _REASON)
        self.roles |= dict.fromkeys(self.command, _COMMAND)
        self.roles |= dict.fromkeys(ids("redirected_statement"), _REDIRECTED)
        self.roles |= dict.fromkeys(ids("declaration_command"), _DECLARATION)
        self.roles |= dict.fromkeys(ids("unset_command"), _UNSET)
        self.dynamic = ids(*_DYNAMIC_PARTS)
        self.raw_string = ids("raw_string")
        self.word = ids("word")
        self.joined = ids("string", "concatenation", "command_name")
        self.string_content = ids("string_content")
        self.quote = frozenset(anonymous.get('"', ()))


class _Source:
    """The input as bytes (what the parser reads) and node texts sliced from it."""

    def __init__(self, command: str) -> None:
        self.data = command.encode("utf-8", "surrogateescape")
        self.text = command if command.isascii() else None

    def raw(self, node: Node) -> str:
        if self.text is not None:
            return self.text[node.start_byte : node.end_byte]
        return self.data[node.start_byte : node.end_byte].decode("utf-8", "surrogateescape")


def parser() -> Parser:
    """The shared bash parser (loaded once, thread-safe)."""
    global _parser, _kinds
    with _lock:
        if _parser is None:
            import tree_sitter

            language = tree_sitter.Language(_bash_language())
            _kinds = _Kinds(language)
            _parser = tree_sitter.Parser(language)
        return _parser


def _bash_language() -> object:
    """tree-sitter-bash's language, from its compiled binding alone when it can be found:
    the package's ``__init__`` imports ``importlib.resources`` (and with it ``tempfile``,
    ``shutil``, ``random``, ``bz2`` and ``lzma``, some 15 ms) for a highlighting query that
    is never read here. Anything unexpected falls back to importing the package."""
    import importlib.machinery
    import importlib.util

    name = "tree_sitter_bash._binding"
    try:
        package = importlib.util.find_spec("tree_sitter_bash")  # found, not imported
        folders = list(package.submodule_search_locations or []) if package else []
        path = next(
            str(Path(folder, f"_binding{suffix}"))
            for folder in folders
            for suffix in importlib.machinery.EXTENSION_SUFFIXES
            if Path(folder, f"_binding{suffix}").is_file()
        )
        loader = importlib.machinery.ExtensionFileLoader(name, path)
        spec = importlib.util.spec_from_loader(name, loader)
        assert spec is not None
        binding = importlib.util.module_from_spec(spec)
        loader.exec_module(binding)
        return binding.language()
    except (ImportError, OSError, StopIteration, AssertionError, AttributeError):
        import tree_sitter_bash

        return tree_sitter_bash.language()


@lru_cache(maxsize=512)
def parse_command(command: str) -> ParsedCommand:
    """The simple commands of ``command`` and the reasons it is opaque (module docstring)."""
    source = _Source(command)
    tree = parser().parse(source.data)
    assert _kinds is not None
    return _Walk(source, _kinds).run(tree.root_node)


Redirects = tuple[tuple[str, str], ...]


class _Walk:
    """One pre-order walk of a syntax tree, over named nodes (anonymous ones are tokens), with
    an explicit stack (nesting depth is unbounded). Beside each node waiting on the stack,
    the redirections of the statements around it, which its simple commands take on."""

    def __init__(self, source: _Source, kinds: _Kinds) -> None:
        self.source = source
        self.kinds = kinds
        self.commands: list[SimpleCommand] = []
        self.found: set[str] = set()
        self.flags: list[str] = []
        self.redirect_texts: dict[str, tuple[str, str]] = {}
        """Plain file redirections (no expansion, quote or substitution) by their text."""

    def run(self, root: Node) -> ParsedCommand:
        roles, reasons = self.kinds.roles, self.kinds.reasons
        stack: list[Node] = [root]
        around: list[Redirects] = [()]
        while stack:
            node, redirects = stack.pop(), around.pop()
            role = roles.get(node.kind_id)
            if role == _COMMAND:
                parts = self._command(node, redirects)
                redirects = ()  # what runs inside its words does not write where it writes
            elif role == _REDIRECTED:
                parts, redirects = self._redirected(node, redirects)
            elif role == _DECLARATION:
                self.commands.append(self._declaration(node))
                parts = self._parts(node)
            elif role == _UNSET:
                self.commands.append(self._declaration(node))
                parts = node.named_children
            else:
                if role == _REASON:  # opaque, or an assignment on its own (see _parts)
                    self.found.add(reasons[node.kind_id])
                parts = node.named_children
            if parts:
                stack.extend(reversed(parts))
                around.extend([redirects] * len(parts))
        return ParsedCommand(tuple(self.commands), self._reasons(root))

    def _reasons(self, root: Node) -> tuple[str, ...]:
        """Why allow rules may not approve the input, in a stable order."""
        reasons = [SYNTAX_ERROR] if root.has_error else []
        reasons += [why for why in _OPAQUE_NODES.values() if why in self.found]
        if _STANDALONE_ASSIGNMENT in self.found:
            reasons.append(_STANDALONE_ASSIGNMENT)
        return tuple(reasons + [flag for flag in dict.fromkeys(self.flags)])

    def _command(self, node: Node, redirects: Redirects) -> list[Node]:
        """Record a simple command; return the parts still to walk (none for plain words:
        nothing can be nested in them, and the words are the text split on blanks)."""
        text = self.source.raw(node)
        if _PLAIN.fullmatch(text):
            argv = tuple(text.split())
            if argv[0].rsplit("/", 1)[-1] not in _STRING_RUNNERS:
                self.commands.append(SimpleCommand(argv, (), redirects))
                return []
        self.commands.append(self._simple_command(node, redirects))
        return self._parts(node)

    def _parts(self, node: Node) -> list[Node]:
        """The named children of a command or declaration, its own assignments replaced by
        their parts (an assignment there is not standalone; its value may hold commands)."""
        assignment = self.kinds.assignment
        parts: list[Node] = []
        for child in node.named_children:
            if child.kind_id in assignment:
                parts += child.named_children
            else:
                parts.append(child)
        return parts

    def _redirected(self, node: Node, around: Redirects) -> tuple[list[Node], Redirects]:
        """A statement with redirections, and the parts still to walk with the redirections
        their simple commands take on: these and the ones around. The grammar reads
        ``a && b > f`` as a list redirected as a whole, so every simple command of a
        redirected list, pipeline or compound statement takes them on (bash gives them to
        ``b`` only; a rule can only be stricter for it). Redirections without expansions,
        quotes or substitutions have nothing to walk."""
        kinds, parts = self.kinds, []
        redirects: list[tuple[str, str]] = []
        for child in node.named_children:
            if child.kind_id not in kinds.redirect:
                parts.append(child)
                continue
            redirect, inert = self._statement_redirect(child)
            redirects.append(redirect)
            if not inert:
                parts.append(child)  # it may hold commands to walk
        if not around:
            return parts, tuple(redirects)
        return parts, tuple(dict.fromkeys((*redirects, *around)))  # each once

    def _statement_redirect(self, node: Node) -> tuple[tuple[str, str], bool]:
        """A statement's redirection, and whether it is inert: a file redirection without
        expansion, quote or substitution has nothing to walk (and is read once per text)."""
        if node.kind_id not in self.kinds.file_redirect:
            return self._redirect(node), False
        text = self.source.raw(node)
        known = self.redirect_texts.get(text)
        if known is not None:
            return known, True
        redirect = self._redirect(node)
        if not _INERT_REDIRECT.fullmatch(text):
            return redirect, False
        self.redirect_texts[text] = redirect
        return redirect, True

    def _simple_command(self, node: Node, inherited: Redirects) -> SimpleCommand:
        kinds = self.kinds
        argv: list[str] = []
        assignments: list[str] = []
        redirects: list[tuple[str, str]] = []
        dynamic: set[int] = set()
        for child in node.children:
            kind = child.kind_id
            if kind in kinds.assignment_word:
                assignments.append(self._text(child)[0])
            elif kind in kinds.command_part_redirect:
                redirects.append(self._redirect(child))
            elif kind in kinds.command_name:
                text, is_dynamic = self._text(child)
                if is_dynamic:
                    self.flags.append("a command name that is not a plain word")
                argv.append(text)
            elif child.is_named:
                text, is_dynamic = self._text(child)
                if is_dynamic:
                    dynamic.add(len(argv))
                argv.append(text)
        if argv and argv[0].rsplit("/", 1)[-1] in _STRING_RUNNERS:
            self.flags.append(f"`{argv[0]}`, which runs a string as commands")
        return SimpleCommand(
            tuple(argv), tuple(assignments), (*redirects, *inherited), frozenset(dynamic)
        )

    def _declaration(self, node: Node) -> SimpleCommand:
        """``export``/``declare``/``unset …``: the keyword and its named parts."""
        children = node.children
        words = [self._text(child)[0] for child in children if child.is_named]
        return SimpleCommand((self._text(children[0])[0], *words))

    def _redirects(self, children: list[Node]) -> tuple[tuple[str, str], ...]:
        redirect = self.kinds.redirect
        return tuple(self._redirect(child) for child in children if child.kind_id in redirect)

    def _redirect(self, node: Node) -> tuple[str, str]:
        children = node.children
        operator = next((child.type for child in children if not child.is_named), "")
        descriptors = self.kinds.file_descriptor
        targets = [c for c in children if c.is_named and c.kind_id not in descriptors]
        target = self._text(targets[-1])[0] if targets else ""
        descriptor = next((self.source.raw(c) for c in children if c.kind_id in descriptors), "")
        return descriptor + operator, target

    def _text(self, node: Node) -> tuple[str, bool]:
        """The word's value with quotes removed, and whether it holds an expansion."""
        kinds, kind = self.kinds, node.kind_id
        if kind in kinds.dynamic:
            return self.source.raw(node), True
        if kind in kinds.raw_string:
            return self.source.raw(node)[1:-1], False
        if kind in kinds.word:
            return _unescape(self.source.raw(node)), False
        if kind in kinds.joined:
            parts = [self._text(c) for c in node.children if c.kind_id not in kinds.quote]
            return "".join(text for text, _d in parts), any(d for _t, d in parts)
        if kind in kinds.string_content:
            return self.source.raw(node), False
        return self.source.raw(node), node.named_child_count > 0


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
