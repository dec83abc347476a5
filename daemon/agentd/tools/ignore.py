"""Directory walking with ripgrep's default filters, shared by grep (Python backend) and find.

What is skipped, as ripgrep does by default (run with ``--no-require-git``):

- hidden files and directories (name starts with ``.``);
- paths matched by ``.gitignore`` files, in the walked directories and in every ancestor of
  the search root, whether or not it is a git repository. Supported syntax: ``#`` comments,
  blank lines, ``!`` negation, trailing ``/`` (directories only), a leading or middle ``/``
  (anchored to the ``.gitignore``'s directory), ``*``, ``?``, ``[…]`` and ``**``; deeper
  files take precedence and within a file the last matching line wins;
- symbolic links (not followed);
- always, in addition to ripgrep's defaults: ``.git`` and ``node_modules`` directories.

User globs work like ripgrep's ``--glob``: a file matching a positive glob is included even
when hidden or ignored (a file in a skipped directory is not), files matching none are
skipped; ``!glob`` excludes. Globs without ``/`` match the name at any depth; with ``/``
they match the path relative to the search root. Globs and ignore lines match in linear time
(:mod:`agentd.tools.globs`). Walk order: names sorted within each
directory, depth first (the order ``rg --sort path`` prints).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from agentd.tools.globs import Glob, compile_glob

ALWAYS_SKIPPED = frozenset({".git", "node_modules"})


@dataclass(frozen=True)
class Rule:
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


@dataclass(frozen=True)
class RuleSet:
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


def _load(directory: str) -> RuleSet | None:
    try:
        text = Path(directory, ".gitignore").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    rules = parse_rules(text)
    return RuleSet(directory, tuple(rules)) if rules else None


@dataclass(frozen=True)
class Entry:
    """A walked path: absolute, relative to the search root (``/``-separated), and kind."""

    path: str
    rel: str
    is_dir: bool


class Walker:
    """Walks ``root`` applying the filters above; optional user ``globs``."""

    def __init__(self, root: Path, globs: Sequence[str] = ()) -> None:
        self.root = str(root)
        self.overrides = [rule for glob in globs if (rule := parse_rule(glob)) is not None]
        self._skip = _prefix_length(self.root)
        self.whitelist = any(not rule.negated for rule in self.overrides)
        ancestors = [str(p) for p in reversed(Path(self.root).parents)]
        self.base_rules = [rs for d in ancestors if (rs := _load(d)) is not None]

    def walk(self, include_dirs: bool = False) -> Iterator[Entry]:
        """Entries below the root in walk order (directories only with ``include_dirs``)."""
        yield from self._walk(self.root, self.base_rules, include_dirs)

    def _walk(self, directory: str, rules: list[RuleSet], dirs: bool) -> Iterator[Entry]:
        own = _load(directory)
        rules = [*rules, own] if own is not None else rules
        try:
            with os.scandir(directory) as scan:
                items = sorted(scan, key=lambda item: item.name)
        except OSError:
            return
        for item in items:
            if item.is_symlink():
                continue
            is_dir = item.is_dir()
            rel = item.path[self._skip :]
            if not self._included(item.path, rel, item.name, is_dir, rules):
                continue
            if is_dir:
                if dirs:
                    yield Entry(item.path, rel, True)
                yield from self._walk(item.path, rules, dirs)
            elif item.is_file():
                yield Entry(item.path, rel, False)

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
