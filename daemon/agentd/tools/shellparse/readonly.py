"""Whether a bash command only reads: then the change recorder does not watch it.

:func:`reads_only` says yes only when the parsed command (:mod:`agentd.tools.shellparse.grammar`)
leaves no doubt: it parses cleanly; it holds no function definition, here-document, ``eval``
or ``source`` and no variable assignment; every simple command in it (those inside command
substitutions and pipelines included) is a program of :data:`READERS` named by a literal
word, none of the options that make it write or run another program (:data:`WRITING`),
``git`` only with a subcommand of :data:`GIT_READERS` and ``find`` without its actions; and
every redirection reads, or writes to ``/dev/null`` or another descriptor. Anything else, a
nested ``bash -c`` or ``xargs`` included, is watched. A program named by a path (``./ls``) is
not trusted to be the one on the list.
"""

from __future__ import annotations

from agentd.tools.shellparse.grammar import ParsedCommand, SimpleCommand, parse_command

_READER_NAMES = (
    "ls cat head tail wc pwd echo printf true false test [ stat file du df which type whoami "
    "id uname date grep egrep fgrep rg diff cmp sort cut tr basename dirname realpath readlink "
    "nl tac rev column jq cd tree md5sum sha1sum sha256sum od hexdump strings find read"
)
READERS = frozenset(_READER_NAMES.split())
"""Programs that read files and print, unless given an option of :data:`WRITING`."""

WRITING: dict[str, tuple[str, ...]] = {
    "sort": ("-o", "--output", "--compress-program"),
    "file": ("-C", "--compile"),
    "rg": ("--pre",),
    "tree": ("-o",),
    "date": ("-s", "--set"),
    "find": ("-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf",
             "-fls"),
    "git": ("--output", "--ext-diff", "--textconv"),
}  # fmt: skip
"""Options (or option prefixes) that make a reader write a file or run a program."""

_GIT_READER_NAMES = (
    "status log diff show rev-parse ls-files ls-tree blame describe shortlog cat-file "
    "rev-list show-ref"
)
GIT_READERS = frozenset(_GIT_READER_NAMES.split())
"""git subcommands that only read (git's own files under ``.git`` are not watched anyway)."""

_PROGRAMS = READERS | {"git"}
_ALLOWED_OPAQUE = frozenset({"a comment", "a command substitution", "a process substitution"})


def reads_only(command: str) -> bool:
    """True when ``command`` certainly changes no file (see the module docstring); False
    when it may, or when the grammar cannot be loaded."""
    try:
        parsed = parse_command(command)
    except ImportError:
        return False
    return _plain(parsed) and all(_reads(simple) for simple in parsed.distinct)


def _plain(parsed: ParsedCommand) -> bool:
    return bool(parsed.commands) and set(parsed.opaque) <= _ALLOWED_OPAQUE


def _reads(simple: SimpleCommand) -> bool:
    argv = simple.argv
    if not argv or simple.assignments or 0 in simple.dynamic or argv[0] not in _PROGRAMS:
        return False
    if not harmless_redirects(simple):
        return False
    if argv[0] == "git" and (len(argv) < 2 or argv[1] not in GIT_READERS):
        return False
    risky = WRITING.get(argv[0], ())
    return not any(_risky(word, risky) for word in argv[1:])


def _risky(word: str, risky: tuple[str, ...]) -> bool:
    """Whether ``word`` is one of the ``risky`` options: a prefix of it (``--output=x``,
    ``-ox``), or a one-letter one inside a cluster of short options (``-uo``)."""
    if word.startswith(risky):
        return True
    if not word.startswith("-") or word.startswith("--"):
        return False
    return any(len(option) == 2 and option[1] in word[1:] for option in risky)


def harmless_redirects(simple: SimpleCommand) -> bool:
    """Only input, ``/dev/null`` and descriptor-duplicating redirections (permission allow
    rules approve nothing else either)."""
    for operator, target in simple.redirects:
        if ">" not in operator:
            continue
        if target != "/dev/null" and not (
            operator.endswith("&") and (target.isdigit() or target == "-")
        ):
            return False
    return True
