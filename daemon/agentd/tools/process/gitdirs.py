"""Every git directory a workspace's repository enters, so a sandbox keeps them all read-only.

A read-only ``.git`` folder is not the whole repository: ``.git`` may be a symlink (``git init
--separate-git-dir`` into the workspace) or a *gitfile* (``gitdir: PATH``: a linked worktree,
a submodule), each submodule has its own ``.git`` entry and git dir, and a worktree's admin dir
names a ``commondir``. A command that could write any of them, or repoint or create a ``.git``
entry git will follow, plants ``core.fsmonitor`` or a hook that git runs, unsandboxed, at the
user's next ``git status``.

:func:`layout` finds, from the workspace root down through ``.gitmodules`` (a few levels),
the ``.git`` entries (:attr:`GitLayout.entries`: the top one and each submodule's, existing or
not) and the real git dirs they lead to (:attr:`GitLayout.dirs`, symlinks resolved, a
worktree's common dir included). :func:`read_only_git` is what bubblewrap binds read-only on
top of the control files: those dirs, each regular ``.git`` file, and a submodule folder that
has no ``.git`` yet (so none can be created in it). A symlinked ``.git`` cannot be a mount
point (a mount follows the link), and a submodule folder may not exist yet, so
:func:`snapshot` and :func:`restore` compare the entries before and after a sandboxed command
and put back any that was created, removed, repointed or rewritten (except a repository
created by ``git init`` at the top of a workspace that had none). The file tools refuse a
path inside any of the dirs (:func:`inside_git_dir`).
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from pathlib import Path

import msgspec

MAX_DEPTH = 3
"""Levels of nested submodules followed."""
MAX_GITFILE = 4096
_PATH_LINE = re.compile(r"^\s*path\s*=\s*(.+?)\s*$", re.MULTILINE)


class GitLayout(msgspec.Struct, frozen=True):
    """``entries``: the ``.git`` paths git looks at (existing or not); ``dirs``: the real git
    dirs they lead to."""

    entries: tuple[Path, ...]
    dirs: tuple[Path, ...]


def layout(root: Path) -> GitLayout:
    """The git entries and dirs of the repository at ``root`` and its submodules."""
    entries: list[Path] = []
    dirs: list[Path] = []
    pending = [(root, 0)]
    while pending:
        folder, depth = pending.pop()
        entry = folder / ".git"
        entries.append(entry)
        dirs += _git_dirs_of(entry)
        if depth < MAX_DEPTH:
            pending += [(folder / sub, depth + 1) for sub in _submodule_paths(folder)]
    return GitLayout(tuple(entries), tuple(dict.fromkeys(dirs)))


def _git_dirs_of(entry: Path) -> list[Path]:
    """The real git dir behind one ``.git`` entry, and its common dir (a linked worktree's)."""
    if entry.is_symlink() or entry.is_dir():
        target = Path(os.path.realpath(entry))
    else:
        named = _gitfile_target(entry)
        if named is None:
            return []
        target = Path(os.path.realpath(entry.parent / named))
    if not target.is_dir():
        return []
    found = [target]
    common = _read_small(target / "commondir")
    if common:
        shared = Path(os.path.realpath(target / common.strip()))
        if shared.is_dir():
            found.append(shared)
    return found


def _gitfile_target(entry: Path) -> str | None:
    text = _read_small(entry)
    if text is None or not text.startswith("gitdir:"):
        return None
    return text.removeprefix("gitdir:").strip() or None


def _read_small(path: Path) -> str | None:
    """A small regular file's text (None: missing, not regular, or unreadable)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.read(fd, MAX_GITFILE).decode("utf-8", "replace")
    except OSError:
        return None
    finally:
        os.close(fd)


def _submodule_paths(folder: Path) -> list[str]:
    """The ``path =`` entries of ``folder/.gitmodules`` that stay inside ``folder``."""
    text = _read_small(folder / ".gitmodules")
    if not text:
        return []
    real = Path(os.path.realpath(folder))
    kept = []
    for name in _PATH_LINE.findall(text):
        if Path(os.path.realpath(folder / name)).is_relative_to(real) and name.strip("/."):
            kept.append(name)
    return kept


def read_only_git(root: Path) -> list[Path]:
    """What a bubblewrap sandbox of ``root`` binds read-only besides its control files: the
    git dirs, each submodule's regular ``.git`` file, and each submodule folder without a
    ``.git`` (an unpopulated submodule). Nested duplicates are left out."""
    found = layout(root)
    binds: list[Path] = []
    for entry in found.entries[1:]:  # the top .git is a control path already
        if entry.is_symlink():
            continue
        if entry.is_file() or entry.is_dir():
            binds.append(entry)
        elif entry.parent.is_dir() and not entry.parent.is_symlink():
            binds.append(entry.parent)
    binds += found.dirs
    binds.sort(key=lambda path: len(path.parts))
    top = root / ".git"
    kept = [top] if top.is_dir() and not top.is_symlink() else []  # bound as a control path
    for path in binds:
        if not any(path.is_relative_to(done) for done in kept if done.is_dir()):
            kept.append(path)
    return [path for path in kept if path != top]


def inside_git_dir(path: Path, workspace: Path) -> bool:
    """True when the resolved ``path`` lies in (or is) a git dir of ``workspace``'s
    repository (a ``.git`` symlink's target, a submodule's or worktree's git dir)."""
    return any(path.is_relative_to(folder) for folder in layout(workspace).dirs)


_State = tuple[str, str | bytes | None]
"""How one entry was: ("missing"|"link"|"file"|"dir"|"other", link target or file bytes)."""


def snapshot(root: Path) -> dict[Path, _State]:
    """The state of each ``.git`` entry of ``root``'s repository (see :func:`restore`)."""
    return {entry: _state(entry) for entry in layout(root).entries}


def _state(entry: Path) -> _State:
    if entry.is_symlink():
        return "link", str(entry.readlink())
    if entry.is_dir():
        return "dir", None
    if not os.path.lexists(entry):
        return "missing", None
    text = _read_small(entry)
    return ("file", text.encode()) if text is not None else ("other", None)


def restore(before: dict[Path, _State]) -> list[str]:
    """Put back each entry of ``before`` that a command changed: remove a created one,
    re-create a removed or repointed link or a rewritten gitfile. Returns a note per entry
    put back (empty: nothing changed). Left alone: a ``.git`` folder created at the top of a
    workspace that was no repository (``git init``). A removed ``.git`` folder cannot be put
    back here (bubblewrap keeps it mounted); its removal is reported."""
    notes: list[str] = []
    top = next(iter(before), None)
    for entry, was in before.items():
        now = _state(entry)
        if now == was or (entry == top and was[0] == "missing" and now[0] == "dir"):
            continue  # unchanged, or `git init` of a workspace that was no repository
        kind, value = was
        with contextlib.suppress(OSError):
            _remove(entry)
            if kind == "link" and isinstance(value, str):
                entry.symlink_to(value)
            elif kind == "file" and isinstance(value, bytes):
                entry.write_bytes(value)
        notes.append(f"[{entry} was changed by the command and has been put back.]")
    return notes


def _remove(entry: Path) -> None:
    if entry.is_dir() and not entry.is_symlink():
        import shutil  # only when a command replaced a control file with a folder

        shutil.rmtree(entry)
    elif os.path.lexists(entry):
        entry.unlink()
