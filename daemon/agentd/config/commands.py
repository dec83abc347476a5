"""Custom commands: prompt templates the user types as ``/NAME arguments…``.

One command per Markdown file, named by the file (``review.md`` is ``/review``), with an
optional front matter block::

    ---
    description: Review a file for bugs
    argument-hint: FILE [FOCUS]
    model: mock/mock-model
    ---
    Review $1 for bugs. Focus on: $2. The whole request was: $ARGUMENTS

Front matter keys: ``description`` (default: the body's first line), ``argument-hint`` (shown
after the name in menus) and ``model`` (``model`` or ``provider/model``: the model of the run
the command starts, for that run only); the grammar is :mod:`agentd.config.frontmatter`'s,
the one agent profiles use (strict here: an unknown key or a malformed line is an error).
The body is the prompt: ``$ARGUMENTS`` becomes
everything typed after the name, ``$1`` … ``$9`` the arguments split at spaces (quotes
group: ``"two words"``; a missing one becomes empty). A body with no placeholder gets the
arguments appended after a blank line (``Arguments: …``), so none is lost.

User commands live in ``$XDG_CONFIG_HOME/agentd/commands/*.md``, project ones in the nearest
``.agentd/commands/`` at or above the session's cwd (up to the repository root), read only
when the project's folder is trusted and the folder's content is the one trusted (it is
pinned, :mod:`agentd.config.trust`). A project command wins over
a user one of the same name. A file that cannot be read, has a bad name, an unclosed front
matter block, unknown keys or an empty body is skipped, and a warning says why; so are the
files of a folder beyond the first :data:`MAX_COMMAND_FILES`.

Imports only the standard library, msgspec, the trust helpers and the front matter parser.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

import msgspec

from agentd.config import trust
from agentd.config.frontmatter import parse_front_matter, text_fields
from agentd.config.textfile import pinned_entries, project_folder, read_capped_text

CommandSource = Literal["user", "project"]
MAX_COMMAND_BYTES = 64 * 1024
MAX_EXPANSION_CHARS = 8 * 1024 * 1024
"""Longest prompt a command may expand to (a template repeating ``$ARGUMENTS`` multiplies)."""
MAX_COMMAND_FILES = 200
"""Command files read from one folder (in name order); more are skipped with a warning."""
NAME_PATTERN = r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}"
_NAME = re.compile(rf"^{NAME_PATTERN}$")
_INVOCATION = re.compile(rf"^/({NAME_PATTERN})(?:\s+(.*))?$", re.DOTALL)
_PLACEHOLDER = re.compile(r"\$(ARGUMENTS|[1-9])")
_KEYS = ("description", "argument-hint", "model")
_MODEL = re.compile(r"^[A-Za-z0-9_.:@-]+(/[A-Za-z0-9_.:@/-]+)?$")


class CommandTemplate(msgspec.Struct, frozen=True):
    """One custom command as read from its file."""

    name: str
    description: str
    body: str
    source: CommandSource
    path: str
    argument_hint: str | None = None
    model: str | None = None


class CommandScan(msgspec.Struct, frozen=True):
    """Every command a session may use, by name, and warnings about skipped files."""

    commands: dict[str, CommandTemplate]
    warnings: list[str]


class Invocation(msgspec.Struct, frozen=True):
    """A prompt that names a command: ``/name arguments``."""

    name: str
    arguments: str


def parse_invocation(text: str) -> Invocation | None:
    """The command ``text`` invokes (it starts with ``/`` and a valid name, followed by
    whitespace or nothing), or None: an ordinary prompt (``/etc/hosts is…`` is one)."""
    match = _INVOCATION.match(text.rstrip())
    if match is None:
        return None
    return Invocation(name=match[1], arguments=(match[2] or "").strip())


def load_commands(cwd: Path, env: Mapping[str, str] | None = None) -> CommandScan:
    """The commands for a session in ``cwd`` (see the module docstring for where they come
    from and which wins)."""
    env = os.environ if env is None else env
    folders: list[tuple[Path, CommandSource, dict[str, bytes] | None]] = [
        (trust.config_dir(env) / "commands", "user", None)
    ]
    warnings: list[str] = []
    project = project_folder(cwd, env, "commands")
    if project is not None:
        state, snapshot = trust.checked_folder(project, env)
        if state == "trusted" and snapshot is not None:
            folders.append((project, "project", snapshot.files))
        else:
            problem = snapshot.problem if snapshot else None
            warnings.append(trust.folder_warning(project, "custom commands", state, problem))
    commands: dict[str, CommandTemplate] = {}
    for folder, source, files in folders:
        paths = _markdown_files(folder)
        if files is not None:  # a project's: only the entries its trust has the bytes of
            paths = pinned_entries(paths, files, "custom command file", warnings)
        if len(paths) > MAX_COMMAND_FILES:
            warnings.append(
                f"{folder} holds {len(paths)} command files; only the first "
                f"{MAX_COMMAND_FILES} (by name) were read"
            )
        for path in paths[:MAX_COMMAND_FILES]:
            try:
                data = None if files is None else files[path.name]
                command = parse_command(path, source, data)
            except ValueError as exc:
                warnings.append(f"ignored custom command file {path}: {exc}")
                continue
            commands[command.name] = command
    return CommandScan(commands=dict(sorted(commands.items())), warnings=warnings)


def _markdown_files(folder: Path) -> list[Path]:
    try:
        return sorted(p for p in folder.iterdir() if p.suffix == ".md")
    except OSError:  # no such folder (the usual case), or unreadable
        return []


def parse_command(path: Path, source: CommandSource, data: bytes | None = None) -> CommandTemplate:
    """The command in ``path`` (whose bytes are ``data`` when given: a project's, as their
    trust was checked); ValueError saying what is wrong with the file."""
    name = path.stem
    if not _NAME.match(name):
        raise ValueError(
            f"bad name {name!r}: a command name is 1 to 64 letters, digits, '_' or '-', "
            "starting with a letter or digit"
        )
    if data is not None:
        if len(data) > MAX_COMMAND_BYTES:
            raise ValueError(f"larger than {MAX_COMMAND_BYTES // 1024} KB")
        text = data.decode("utf-8", "replace")
    else:
        text = _read_command(path)
    matter, body = parse_front_matter(text, keys=_KEYS)
    fields = text_fields(matter)
    body = body.strip()
    if not body:
        raise ValueError("its prompt (the text after the front matter) is empty")
    model = fields.get("model") or None
    if model is not None and not _MODEL.match(model):
        raise ValueError(f"bad model {model!r} (write `model` or `provider/model`)")
    first_line = next(line.strip() for line in body.splitlines() if line.strip())
    return CommandTemplate(
        name=name,
        description=fields.get("description") or _shorten(first_line, 80),
        body=body,
        source=source,
        path=str(path),
        argument_hint=fields.get("argument-hint") or None,
        model=model,
    )


def _read_command(path: Path) -> str:
    try:
        if path.stat().st_size > MAX_COMMAND_BYTES:
            raise ValueError(f"larger than {MAX_COMMAND_BYTES // 1024} KB")
        return read_capped_text(path, MAX_COMMAND_BYTES)
    except OSError as exc:
        raise ValueError(exc.strerror or str(exc)) from None


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def split_arguments(text: str) -> list[str]:
    """``text`` split at unquoted whitespace; ``"…"`` and ``'…'`` group words (the quotes are
    dropped), a backslash outside single quotes keeps the next character as it is, and an
    unclosed quote runs to the end. Never fails."""
    words: list[str] = []
    current: list[str] = []
    started = False
    quote = ""
    chars = iter(text)
    for char in chars:
        if char == "\\" and quote != "'":
            current.append(next(chars, "\\"))
            started = True
        elif quote:
            quote, kept = ("", "") if char == quote else (quote, char)
            current.append(kept)
        elif char in "'\"":
            quote, started = char, True
        elif char.isspace():
            if started:
                words.append("".join(current))
            current, started = [], False
        else:
            current.append(char)
            started = True
    if started:
        words.append("".join(current))
    return words


def expand(command: CommandTemplate, arguments: str) -> str:
    """The prompt ``command`` stands for with ``arguments`` (see the module docstring);
    ValueError when it would pass :data:`MAX_EXPANSION_CHARS`."""
    words = split_arguments(arguments)
    uses = max(1, len(_PLACEHOLDER.findall(command.body)))
    if len(command.body) + uses * len(arguments) > MAX_EXPANSION_CHARS:
        raise ValueError(
            f"/{command.name} would expand to more than {MAX_EXPANSION_CHARS // 1024 // 1024} "
            "MiB: its arguments are too long for it"
        )

    def value(match: re.Match[str]) -> str:
        if match[1] == "ARGUMENTS":
            return arguments
        index = int(match[1]) - 1
        return words[index] if index < len(words) else ""

    if _PLACEHOLDER.search(command.body) is None:
        return f"{command.body}\n\nArguments: {arguments}" if arguments else command.body
    return _PLACEHOLDER.sub(value, command.body)
