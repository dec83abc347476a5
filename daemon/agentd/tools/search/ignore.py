"""Directory walking with ripgrep's default filters, shared by grep (Python backend) and find.

What is skipped, as ripgrep does by default (run with ``--no-require-git``):

- hidden files and directories (name starts with ``.``);
- paths matched by ``.gitignore`` files, in the walked directories and in every ancestor of
  the search root, whether or not it is a git repository. Supported syntax: ``#`` comments,
  blank lines, ``!`` negation, trailing ``/`` (directories only), a leading or middle ``/``
  (anchored to the ``.gitignore``'s directory), ``*``, ``?``, ``[…]`` and ``**``; deeper
  files take precedence and within a file the last matching line wins;
- symbolic links (not followed; the walk goes by directory descriptors, see :class:`Walker`);
- always, in addition to ripgrep's defaults: ``.git`` and ``node_modules`` directories.

User globs work like ripgrep's ``--glob``: a file matching a positive glob is included even
when hidden or ignored (a file in a skipped directory is not), files matching none are
skipped; ``!glob`` excludes. Globs without ``/`` match the name at any depth; with ``/``
they match the path relative to the search root. Globs and ignore lines match in linear time
(:mod:`agentd.tools.search.globs`). Walk order: names sorted within each
directory, depth first (the order ``rg --sort path`` prints).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path

import msgspec

from agentd.tools.base import ToolError
from agentd.tools.files.safeopen import open_beneath, open_child
from agentd.tools.search.globs import Glob, compile_glob

ALWAYS_SKIPPED = frozenset({".git", "node_modules"})


class Rule(msgspec.Struct, frozen=True):
    """One ignore or glob line. ``anchored`` rules match the whole relative path, others
    the last path component."""

    glob: Glob
    negated: bool
    dir_only: bool
    anchored: bool

    def matches(self, rel: str, name: str, is_dir: bool) -> bool:
        if self.dir_only and not is_dir:
            return False
        return self.glob.match(rel if self.anchored else name)


def parse_rule(line: str) -> Rule | None:
    """A gitignore line as a Rule (None for blanks and comments)."""
    line = line.rstrip("\n").rstrip("\r")
    if not line.endswith("\\ "):
        line = line.rstrip(" ")
    if not line or line.startswith("#"):
        return None
    negated = line.startswith("!")
    if negated or line.startswith("\\!") or line.startswith("\\#"):
        line = line[1:]
    dir_only = line.endswith("/")
    line = line.rstrip("/")
    if not line:
        return None
    anchored = "/" in line
    return Rule(compile_glob(line.lstrip("/")), negated, dir_only, anchored)


def parse_rules(text: str) -> list[Rule]:
    """Every rule of a ``.gitignore`` text, in file order."""
    return [rule for line in text.split("\n") if (rule := parse_rule(line)) is not None]


class RuleSet(msgspec.Struct, frozen=True):
    """The rules of one ``.gitignore``, relative to its directory ``base``."""

    base: str
    rules: tuple[Rule, ...]

    def verdict(self, path: str, name: str, is_dir: bool) -> bool | None:
        """True: ignored; False: re-included by ``!``; None: no rule matches.

        ``path`` must lie below ``base``.
        """
        rel = path[_prefix_length(self.base) :]
        for rule in reversed(self.rules):
            if rule.matches(rel, name, is_dir):
                return not rule.negated
        return None


def _prefix_length(base: str) -> int:
    return len(base) if base.endswith("/") else len(base) + 1


def _load_path(directory: str, workspace: Path | None) -> RuleSet | None:
    """The rules of ``directory/.gitignore`` above the search root: opened beneath the
    workspace when the directory lies in it, else (an ancestor of the workspace) by path."""
    path = Path(directory, ".gitignore")
    inside = workspace is not None and path.is_relative_to(os.path.realpath(workspace))
    try:
        fd = open_beneath(path, workspace if inside else None, os.O_RDONLY | os.O_NONBLOCK)
    except (OSError, ToolError):
        return None
    return _rules_from(fd, directory)


def _load_at(dir_fd: int, directory: str) -> RuleSet | None:
    """The rules of the ``.gitignore`` in the walked directory ``dir_fd`` (no symlink)."""
    fd = open_child(dir_fd, ".gitignore", directory=False)
    return None if fd is None else _rules_from(fd, directory)


def _rules_from(fd: int, directory: str) -> RuleSet | None:
    try:
        with os.fdopen(fd, "rb") as file:
            text = file.read().decode("utf-8", "replace")
    except OSError:
        return None
    rules = parse_rules(text)
    return RuleSet(directory, tuple(rules)) if rules else None


class Entry(msgspec.Struct, frozen=True):
    """A walked path: absolute, relative to the search root (``/``-separated), and kind.

    ``dir_fd`` is the descriptor of the directory the entry was listed in and ``name`` its
    name there; the descriptor stays open until the walk moves past the entry, so
    :meth:`open` reads the very file that was listed (see :func:`open_child`)."""

    path: str
    rel: str
    is_dir: bool
    dir_fd: int = -1
    name: str = ""

    def open(self) -> int | None:
        """A descriptor of this regular file (None if it changed or cannot be read)."""
        return open_child(self.dir_fd, self.name, directory=False)


class Walker:
    """Walks ``root`` applying the filters above; optional user ``globs``.

    The walk goes by directory descriptors: ``root`` is opened beneath ``workspace`` (when
    set) and every directory below it relative to its parent's descriptor, without
    following symlinks, so no swap of a folder for a symlink can lead the walk elsewhere.
    """

    def __init__(
        self, root: Path, globs: Sequence[str] = (), workspace: Path | None = None
    ) -> None:
        self.root = str(root)
        self.workspace = workspace
        self.overrides = [rule for glob in globs if (rule := parse_rule(glob)) is not None]
        self._skip = _prefix_length(self.root)
        self.whitelist = any(not rule.negated for rule in self.overrides)
        ancestors = [str(p) for p in reversed(Path(self.root).parents)]
        self.base_rules = [rs for d in ancestors if (rs := _load_path(d, workspace)) is not None]

    def walk(self, include_dirs: bool = False) -> Iterator[Entry]:
        """Entries below the root in walk order (directories only with ``include_dirs``).

        Raises ToolError when the root leads outside the workspace, OSError when it cannot
        be opened."""
        fd = open_beneath(Path(self.root), self.workspace, os.O_RDONLY | os.O_DIRECTORY)
        try:
            yield from self._walk(fd, self.root, self.base_rules, include_dirs)
        finally:
            os.close(fd)

    def _walk(self, fd: int, directory: str, rules: list[RuleSet], dirs: bool) -> Iterator[Entry]:
        own = _load_at(fd, directory)
        rules = [*rules, own] if own is not None else rules
        try:
            with os.scandir(fd) as scan:
                items = sorted(scan, key=lambda item: item.name)
        except OSError:
            return
        prefix = directory if directory.endswith("/") else directory + "/"
        for item in items:
            if item.is_symlink():
                continue
            is_dir = item.is_dir(follow_symlinks=False)
            path = prefix + item.name
            rel = path[self._skip :]
            if not self._included(path, rel, item.name, is_dir, rules):
                continue
            if is_dir:
                if dirs:
                    yield Entry(path, rel, True, fd, item.name)
                yield from self._below(fd, item.name, path, rules, dirs)
            elif item.is_file(follow_symlinks=False):
                yield Entry(path, rel, False, fd, item.name)

    def _below(
        self, fd: int, name: str, path: str, rules: list[RuleSet], dirs: bool
    ) -> Iterator[Entry]:
        """The walk of the child directory ``name`` of ``fd`` (nothing if it is no longer a
        directory, e.g. swapped for a symlink since it was listed)."""
        child = open_child(fd, name, directory=True)
        if child is None:
            return
        try:
            yield from self._walk(child, path, rules, dirs)
        finally:
            os.close(child)

    def _included(self, path: str, rel: str, name: str, is_dir: bool, rules: list[RuleSet]) -> bool:
        if is_dir and name in ALWAYS_SKIPPED:
            return False
        for rule in reversed(self.overrides):
            if rule.matches(rel, name, is_dir):
                return not rule.negated
        if self.whitelist and not is_dir:
            return False
        if name.startswith("."):
            return False
        return not is_ignored(path, name, is_dir, rules)


def is_ignored(path: str, name: str, is_dir: bool, rules: list[RuleSet]) -> bool:
    """True when the deepest ``.gitignore`` with a matching rule ignores ``path``."""
    for rule_set in reversed(rules):
        verdict = rule_set.verdict(path, name, is_dir)
        if verdict is not None:
            return verdict
    return False
