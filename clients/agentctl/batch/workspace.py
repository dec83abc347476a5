"""A task's workspace, ``OUT/work/ID``: a git worktree created from the task's ref, or a copy
of a folder; and the change made in it (``diff.patch``).

Worktrees share one object store per repository: the first task of a repository clones it
once, bare, into ``OUT/work/.repos/`` (a local repository with ``--shared``: its objects are
borrowed, not copied), and the first task of a commit checks it out once, with ``git worktree
add``, into ``OUT/work/.templates/``. Every task's worktree is then a copy of that template
plus its own worktree entry in the shared clone, made without a git process (``git worktree
add`` itself takes a lock on the clone's worktree list and costs a process per task). A copy (a
``cwd`` without ``ref``) gets a private baseline index under ``OUT/work/.base/ID`` (its own
``.git``, if any, is left alone), so its diff is taken the same way. A workspace that exists
already (a task run again) is replaced. These functions block: call them in a thread.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Literal

import msgspec

from agentctl.batch.tasks import Task

GIT_TIMEOUT_S = 600.0
"""How long one git command may take (a clone of a large repository)."""


class WorkspaceError(Exception):
    """The workspace could not be made (bad repository or ref, a failed copy)."""


class Workspace(msgspec.Struct, frozen=True, kw_only=True):
    """A prepared workspace: its folder, how it was made and what its diff is taken
    against (a commit for a worktree, the baseline tree for a copy)."""

    path: str
    kind: Literal["worktree", "copy"]
    base: str
    git_dir: str | None = None
    """The baseline's git dir (copies only; a worktree has its own ``.git`` file)."""


def _git(*args: str, cwd: str | None = None, git_dir: str | None = None) -> str:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"}
    if git_dir is not None:
        env["GIT_DIR"] = git_dir
        env["GIT_WORK_TREE"] = cwd or "."
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise WorkspaceError(f"git {args[0]}: {exc}") from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise WorkspaceError(f"git {args[0]}: {message[-1] if message else done.returncode}")
    return done.stdout.decode("utf-8", "replace")


def prepare_workspace(task: Task, out_dir: str | Path) -> Workspace:
    """Make ``OUT/work/ID`` for ``task`` afresh; raise :class:`WorkspaceError` when it cannot
    be made. ``repo`` (or ``cwd`` with ``ref``) → a worktree at ``ref`` (default ``HEAD``);
    ``cwd`` alone → a copy of the folder."""
    work = Path(out_dir) / "work"
    path = work / task.id
    _clear(path)
    source = task.repo if task.repo is not None else task.cwd
    assert source is not None  # a validated task has one of them
    if task.repo is not None or task.ref is not None:
        mirror = shared_repository(source, work / ".repos")
        commit = resolve_ref(mirror, task.ref or "HEAD")
        template = _template(mirror, commit, work / ".templates")
        _clone_worktree(template, mirror, commit, path, task.id)
        return Workspace(path=str(path), kind="worktree", base=commit)
    return _copy_workspace(Path(source), path, work / ".base" / task.id)


def _clear(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.exists():
        shutil.rmtree(path)


def shared_repository(source: str, repos: Path) -> Path:
    """The bare clone of ``source`` every task of that repository shares (made on first use;
    a lock file serialises that between threads and processes). Local sources are cloned
    with ``--shared`` (their object store is borrowed)."""
    key = hashlib.sha256(_source_key(source).encode()).hexdigest()[:16]
    mirror = repos / f"{key}.git"
    if (mirror / "HEAD").exists():
        return mirror
    repos.mkdir(parents=True, exist_ok=True)
    with _locked(repos / f"{key}.lock"):
        if not (mirror / "HEAD").exists():
            partial = repos / f"{key}.partial"
            _clear(partial)
            local = Path(source).is_dir()
            shared = ["--shared"] if local else []
            origin = str(Path(source).resolve()) if local else source
            _git("clone", "--bare", "--quiet", *shared, origin, str(partial))
            partial.rename(mirror)
    return mirror


_THREAD_LOCKS: dict[str, threading.Lock] = {}
_GUARD = threading.Lock()


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold ``path`` locked against other threads of this process and other processes (a
    remote engine's workers sharing the output folder)."""
    with _GUARD:
        lock = _THREAD_LOCKS.setdefault(str(path), threading.Lock())
    with lock, path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def _source_key(source: str) -> str:
    path = Path(source)
    return str(path.resolve()) if path.is_dir() else source


_RESOLVED: dict[tuple[str, str], str] = {}


def resolve_ref(mirror: Path, ref: str) -> str:
    """The commit ``ref`` names in ``mirror`` (asked once per process and ref: the shared
    clone does not move during a batch)."""
    key = (str(mirror), ref)
    if key not in _RESOLVED:
        _RESOLVED[key] = _git("--git-dir", str(mirror), "rev-parse", "--verify", "--quiet",
                              f"{ref}^{{commit}}").strip()  # fmt: skip
    return _RESOLVED[key]


def _template(mirror: Path, commit: str, templates: Path) -> Path:
    """A pristine worktree of ``commit`` (``git worktree add``, once per commit): what each
    task's worktree is copied from."""
    template = templates / f"{mirror.stem}-{commit}"
    ready = template.with_name(template.name + ".ready")  # written once the checkout is whole
    if ready.exists():
        return template
    templates.mkdir(parents=True, exist_ok=True)
    with _locked(mirror.with_suffix(".lock")):  # git's worktree list is not concurrency-safe
        if not ready.exists():
            _clear(template)
            _git("--git-dir", str(mirror), "worktree", "add", "--force", "--detach", "--quiet",
                 str(template), commit)  # fmt: skip
            ready.touch()
    return template


def _clone_worktree(template: Path, mirror: Path, commit: str, path: Path, name: str) -> None:
    """Make ``path`` a worktree of ``mirror`` at ``commit`` without a git process: the
    template's files copied, and the worktree's own administrative folder
    (``MIRROR/worktrees/NAME``: ``HEAD``, ``commondir``, ``gitdir`` and the template's index,
    whose stale file times git refreshes) written as ``git worktree add`` writes it."""
    admin = mirror / "worktrees" / name
    _clear(admin)
    try:
        shutil.copytree(template, path, symlinks=True, ignore=_top_git(template))
        admin.mkdir(parents=True)
        template_admin = Path(_gitdir_of(template))
        shutil.copyfile(template_admin / "index", admin / "index")
        (admin / "HEAD").write_text(commit + "\n")
        (admin / "commondir").write_text("../..\n")
        (admin / "gitdir").write_text(f"{path / '.git'}\n")
        (path / ".git").write_text(f"gitdir: {admin}\n")
    except OSError as exc:
        raise WorkspaceError(f"worktree {path}: {exc}") from None


def _top_git(root: Path) -> Callable[[str, list[str]], set[str]]:
    def ignore(folder: str, names: list[str]) -> set[str]:
        return {".git"} if Path(folder) == root else set()

    return ignore


def _gitdir_of(worktree: Path) -> str:
    pointer = (worktree / ".git").read_text().strip()
    return pointer.removeprefix("gitdir: ")


def _copy_workspace(source: Path, path: Path, base_dir: Path) -> Workspace:
    if not source.is_dir():
        raise WorkspaceError(f"cwd {source} is not a folder")
    try:
        shutil.copytree(source, path, symlinks=True)
    except (OSError, shutil.Error) as exc:
        raise WorkspaceError(f"copy of {source}: {exc}") from None
    _clear(base_dir)
    base_dir.parent.mkdir(parents=True, exist_ok=True)
    git_dir = str(base_dir)
    _git("init", "--quiet", "--bare", git_dir)
    _git("add", "--all", cwd=str(path), git_dir=git_dir)
    tree = _git("write-tree", cwd=str(path), git_dir=git_dir).strip()
    return Workspace(path=str(path), kind="copy", base=tree, git_dir=git_dir)


def collect_diff(workspace: Workspace) -> tuple[bytes, list[str]]:
    """The change in the workspace against its base (a binary-safe patch, new files
    included) and the paths it touches (relative, sorted)."""
    path = workspace.path
    _git("add", "--all", cwd=path, git_dir=workspace.git_dir)
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
    if workspace.git_dir is not None:
        env |= {"GIT_DIR": workspace.git_dir, "GIT_WORK_TREE": path}
    argv = ["git", "diff", "--cached", "--binary", "--no-renames", "--no-color", workspace.base]
    try:
        done = subprocess.run(
            argv, cwd=path, env=env, capture_output=True, timeout=GIT_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise WorkspaceError(f"git diff: {exc}") from None
    if done.returncode != 0:
        raise WorkspaceError(f"git diff: {done.stderr.decode('utf-8', 'replace').strip()}")
    return done.stdout, changed_paths(done.stdout)


def changed_paths(patch: bytes) -> list[str]:
    """The paths of a ``--no-renames`` patch's ``diff --git a/P b/P`` headers."""
    found = set()
    for line in patch.split(b"\n"):
        if not line.startswith(b"diff --git "):
            continue
        pair = line[len(b"diff --git ") :].decode("utf-8", "surrogateescape")
        if pair.startswith('"'):
            found.add(_unquote(pair[: pair.index('" "') + 1])[2:])
        else:
            half = (len(pair) - 1) // 2
            found.add(pair[2:half])
    return sorted(found)


def _unquote(quoted: str) -> str:
    """A C-style quoted git path (octal escapes for bytes) as text."""
    raw = quoted[1:-1].encode("latin-1", "backslashreplace")
    with contextlib.suppress(UnicodeDecodeError):
        return raw.decode("unicode_escape").encode("latin-1").decode("utf-8")
    return quoted
