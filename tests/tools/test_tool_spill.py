"""Spill files: private directories, the per-session cap, pruning and session removal."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

from agentd.tools.base import ToolContext
from agentd.tools.process.spill import open_spill, private_dir, prune, remove_session
from tests.tools.conftest import call, text_of


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


async def test_bash_spills_into_a_private_directory(work: Path, ctx: ToolContext) -> None:
    ctx.spill_dir = work / "state" / "spill" / "s1"
    result = await call("bash", ctx, command="seq 1 100000")
    spill = Path(result.details.spill_path)
    assert spill.parent == ctx.spill_dir
    assert mode(ctx.spill_dir) == 0o700
    assert mode(ctx.spill_dir.parent) == 0o700
    assert mode(work / "state") == 0o700
    assert mode(spill) == 0o600


async def test_only_the_newest_spill_files_are_kept(ctx: ToolContext) -> None:
    ctx.settings.bash_spill_keep = 2
    paths = []
    for n in range(4):
        result = await call("bash", ctx, command=f"seq {n} 100000")
        paths.append(Path(result.details.spill_path))
    assert ctx.spill_dir is not None
    assert sorted(ctx.spill_dir.iterdir()) == sorted(paths[2:])
    assert paths[3].read_text().startswith("3\n")


def test_private_dir_tightens_an_existing_directory(work: Path) -> None:
    loose = work / "loose"
    loose.mkdir(mode=0o755)
    loose.chmod(0o755)
    private_dir(loose)
    assert mode(loose) == 0o700


def test_open_spill_keeps_other_files(work: Path) -> None:
    (work / "notes.txt").write_text("mine")
    for _ in range(3):
        handle, _path = open_spill(work, keep=1)
        handle.close()
    assert sorted(p.name for p in work.iterdir() if not p.name.startswith("agentd-bash-")) == [
        "notes.txt"
    ]
    assert len([p for p in work.iterdir() if p.name.startswith("agentd-bash-")]) == 1


def test_prune_deletes_only_old_session_directories(work: Path) -> None:
    root = work / "spill"
    old, fresh = root / "old-session", root / "fresh-session"
    for directory in (old, fresh):
        directory.mkdir(parents=True)
        (directory / "agentd-bash-x.log").write_text("output")
    stray = root / "stray.log"
    stray.write_text("x")
    week_ago = time.time() - 8 * 86400
    for path in (old, stray):
        os.utime(path, (week_ago, week_ago))
    root.chmod(0o755)
    assert prune(root) == 2
    assert sorted(p.name for p in root.iterdir()) == ["fresh-session"]
    assert mode(root) == 0o700
    assert prune(work / "missing") == 0


def test_remove_session(work: Path) -> None:
    (work / "abc").mkdir()
    (work / "abc" / "agentd-bash-1.log").write_text("x")
    (work / "keep").mkdir()
    remove_session(work, "abc")
    remove_session(work, "..")
    remove_session(work, "no-such-session")
    assert sorted(p.name for p in work.iterdir()) == ["keep"]


async def test_spill_file_is_capped_and_the_result_says_so(ctx: ToolContext) -> None:
    ctx.settings.bash_spill_max_bytes = 100_000
    result = await call("bash", ctx, command="seq 1 200000")
    spill = Path(result.details.spill_path)
    total = result.details.total_bytes
    assert total == len("".join(f"{n}\n" for n in range(1, 200_001)))
    assert spill.stat().st_size == 100_000
    assert result.details.spill_complete is False
    assert f"Only the first 100000 of {total} bytes of output are in {spill}" in text_of(result)
    assert "capped at 100000 bytes" in text_of(result)
    assert text_of(result).splitlines()[0] != "1"  # the result itself keeps the tail


def test_daemon_start_prunes_old_sandbox_temp_dirs(work: Path) -> None:
    """The start-up prune covers the sessions' temp dirs as it does spill folders."""
    import subprocess
    import sys

    base = work / "tmp" / f"agentd-{os.getuid()}-tmp"
    old, fresh = base / "old-session", base / "fresh-session"
    for folder in (old, fresh):
        folder.mkdir(parents=True)
        (folder / "file").write_text("x")
    week = time.time() - 8 * 86400
    os.utime(old, (week, week))
    env = {**os.environ, "TMPDIR": str(work / "tmp"), "XDG_STATE_HOME": str(work / "state")}
    code = "from agentd.session.shared import prune_session_files; prune_session_files()"
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=60)
    assert not old.exists()
    assert (fresh / "file").exists()


def test_the_start_up_prune_runs_at_most_once_an_hour(work: Path) -> None:
    """A second start within the hour lists nothing (its stamp says the root was just
    pruned); once the stamp is an hour old the next start prunes again."""
    from agentd.tools.process.spill import PRUNE_STAMP, prune_now_and_then

    root = work / "spill"
    root.mkdir()
    week = time.time() - 8 * 86400

    def old_folder(name: str) -> Path:
        folder = root / name
        folder.mkdir()
        os.utime(folder, (week, week))
        return folder

    first = old_folder("first")
    assert prune_now_and_then(root) == 1
    assert not first.exists()
    second = old_folder("second")
    assert prune_now_and_then(root) == 0
    assert second.exists()
    hour_ago = time.time() - 3601
    os.utime(root / PRUNE_STAMP, (hour_ago, hour_ago))
    assert prune_now_and_then(root) == 1
    assert not second.exists()
    assert (root / PRUNE_STAMP).exists()  # the stamp itself is never pruned
