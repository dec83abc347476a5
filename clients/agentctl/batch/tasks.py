"""The task file: one JSON object a line, each a :class:`Task` (validated line by line).

A line that is not a valid task is a :class:`TaskLineError` naming its line number and the
field at fault; :func:`read_tasks` yields it in place of the task, so a caller can run the
others (or refuse the whole file: ``--strict``). Blank lines and lines starting with ``#``
are skipped. Ids must be unique and safe as a folder name (``DIR/ID``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Literal

import msgspec

ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"
"""A task id: letters, digits, ``.``, ``_``, ``-`` (not first), at most 128 characters."""
ENV_NAME = r"^[A-Za-z_][A-Za-z0-9_]*$"

TaskId = Annotated[str, msgspec.Meta(pattern=ID_PATTERN)]
EnvName = Annotated[str, msgspec.Meta(pattern=ENV_NAME)]


class Task(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One task. It runs in ``cwd`` (a folder, copied; or a git repository's worktree when
    ``ref`` is given too) or ``repo`` + ``ref`` (a repository path or URL and a commit-ish,
    default ``HEAD``). ``setup`` runs (``sh -c``) in the workspace before the agent, ``check``
    after it: its exit code is the task's pass (0) or fail. ``env`` names variables of the
    batch's environment passed to ``setup``/``check`` (and, the provider ones, to the session);
    their values are never written to the output folder."""

    id: TaskId
    prompt: Annotated[str, msgspec.Meta(min_length=1)]
    cwd: str | None = None
    repo: str | None = None
    ref: str | None = None
    setup: str | None = None
    check: str | None = None
    provider: str | None = None
    model: str | None = None
    permission: Literal["auto", "ask", "read-only"] | None = None
    max_turns: Annotated[int, msgspec.Meta(ge=1)] | None = None
    max_cost: Annotated[float, msgspec.Meta(gt=0)] | None = None
    timeout: Annotated[float, msgspec.Meta(gt=0)] | None = None
    env: list[EnvName] = []


class TaskLineError(msgspec.Struct, frozen=True):
    """A line of the task file that is not a valid task."""

    line: int
    field: str
    message: str
    id: str | None = None

    def __str__(self) -> str:
        where = f"line {self.line}" + (f" (task {self.id})" if self.id else "")
        return f"{where}: {self.field}: {self.message}"


_DECODER = msgspec.json.Decoder(Task)
_PATH_IN_ERROR = re.compile(r"at `\$\.([A-Za-z_]+)")
_UNKNOWN = re.compile(r"unknown field `([^`]+)`")
_MISSING = re.compile(r"missing required field `([^`]+)`")


def parse_line(text: str | bytes, line: int) -> Task | TaskLineError:
    """One line as a task, or the error naming ``line`` and the field."""
    try:
        task = _DECODER.decode(text)
    except msgspec.ValidationError as exc:
        return TaskLineError(line, _field_of(str(exc)), _message_of(str(exc)), _id_of(text))
    except msgspec.DecodeError as exc:
        return TaskLineError(line, "(line)", f"not a JSON object: {exc}")
    problem = _placement_problem(task)
    if problem is not None:
        return TaskLineError(line, problem[0], problem[1], task.id)
    return task


def _placement_problem(task: Task) -> tuple[str, str] | None:
    """Where the task runs must be said exactly once: ``cwd`` or ``repo``."""
    if task.cwd is None and task.repo is None:
        return "cwd", "one of cwd or repo is required"
    if task.cwd is not None and task.repo is not None:
        return "repo", "give cwd or repo, not both"
    return None


def _field_of(message: str) -> str:
    for pattern in (_UNKNOWN, _MISSING, _PATH_IN_ERROR):
        found = pattern.search(message)
        if found:
            return found[1]
    return "(line)"


def _message_of(message: str) -> str:
    return re.sub(r" - at `\$[^`]*`$", "", message)


def _id_of(text: str | bytes) -> str | None:
    try:
        value = msgspec.json.decode(text)
    except msgspec.DecodeError:
        return None
    found = value.get("id") if isinstance(value, dict) else None
    return found if isinstance(found, str) and re.match(ID_PATTERN, found) else None


def read_tasks(path: Path) -> Iterator[Task | TaskLineError]:
    """The tasks of ``path`` in order, a :class:`TaskLineError` in place of each bad line
    (a repeated id is one too, the first keeping it). Raises ``OSError`` when the file
    cannot be read."""
    seen: set[str] = set()
    with path.open("rb") as lines:
        for number, raw in enumerate(lines, start=1):
            text = raw.strip()
            if not text or text.startswith(b"#"):
                continue
            item = parse_line(text, number)
            if isinstance(item, Task):
                if item.id in seen:
                    item = TaskLineError(number, "id", f"repeats the id {item.id!r}", item.id)
                else:
                    seen.add(item.id)
            yield item


def in_shard(position: int, shard: tuple[int, int] | None) -> bool:
    """Whether the task at ``position`` (0-based, among the file's task lines) is in shard
    ``K/N`` (1-based K): position modulo N is K - 1. No shard: every task."""
    return shard is None or position % shard[1] == shard[0] - 1
