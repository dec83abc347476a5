"""Child processes are waited for through a pidfd watched by the event loop."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentd.tools.process import spawn
from agentd.tools.process.spawn import Child
from tests.harness import scaled


def _child(code: str) -> Child:
    return Child(subprocess.Popen([sys.executable, "-c", code]))


async def test_wait_gives_the_exit_status_and_a_killing_signal() -> None:
    assert await _child("raise SystemExit(3)").wait() == 3
    sleeper = _child("import time; time.sleep(30)")
    assert sleeper.returncode is None
    sleeper_task = asyncio.ensure_future(sleeper.wait())
    await asyncio.sleep(0)
    subprocess.run(["kill", "-9", str(sleeper.pid)], check=True)
    assert await asyncio.wait_for(sleeper_task, scaled(10)) == -9
    assert sleeper.returncode == -9


async def test_many_waiters_and_a_cancelled_one() -> None:
    """A cancelled wait leaves the other waiters waiting; all see the same status."""
    child = _child("import time; time.sleep(30)")
    first = asyncio.ensure_future(child.wait())
    second = asyncio.ensure_future(child.wait())
    await asyncio.sleep(0)  # one loop turn: both waits have reached their await
    first.cancel()
    subprocess.run(["kill", "-TERM", str(child.pid)], check=True)
    assert await asyncio.wait_for(second, scaled(10)) == -15
    assert await child.wait() == -15
    assert first.cancelled()


async def test_the_loop_runs_while_a_child_is_waited_for() -> None:
    """Waiting holds no thread and no loop time: 50 loop turns happen while it runs."""
    child = _child("import time; time.sleep(0.5)")
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while child.returncode is None:
            ticks += 1
            await asyncio.sleep(0.005)  # a loop turn of the ticker: what the test counts

    await asyncio.gather(child.wait(), tick())
    assert ticks >= 50


SETPRIV = """#!/bin/sh
echo "$@" >> "{log}"
{body}
"""
"""A stand-in ``setpriv`` that logs each call: one that knows ``--pdeathsig`` (drops the
options up to ``--`` and runs the rest), or one too old to know it."""
KNOWS = 'while [ "$1" != "--" ]; do shift; done; shift; exec "$@"'
TOO_OLD = "echo 'setpriv: unrecognized option' >&2; exit 1"


def _fake_setpriv(folder: Path, monkeypatch: pytest.MonkeyPatch, body: str) -> tuple[Path, Path]:
    """A ``setpriv`` first on PATH, the state folder under ``folder``; its log file."""
    bin_dir, log = folder / "bin", folder / "setpriv.log"
    bin_dir.mkdir(exist_ok=True)
    script = bin_dir / "setpriv"
    script.write_text(SETPRIV.format(log=log, body=body))
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setenv("XDG_STATE_HOME", str(folder / "state"))
    spawn.death_signal_prefix.cache_clear()
    return script, log


def _probes(log: Path) -> int:
    return log.read_text().count("true") if log.exists() else 0


def test_the_setpriv_probe_runs_once_per_binary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The answer outlives the process (a later one finds it in the state folder); a
    changed binary is probed again."""
    script, log = _fake_setpriv(tmp_path, monkeypatch, KNOWS)
    try:
        assert spawn.death_signal_prefix() == (str(script), "--pdeathsig", "KILL", "--")
        assert _probes(log) == 1
        spawn.death_signal_prefix.cache_clear()  # as a new process starts
        assert spawn.death_signal_prefix() is not None
        assert _probes(log) == 1
        assert (tmp_path / "state" / "agentd" / spawn.PROBE_FILE).read_text().endswith(" ok\n")
        script.write_text(SETPRIV.format(log=log, body=TOO_OLD))  # an older util-linux
        spawn.death_signal_prefix.cache_clear()
        assert spawn.death_signal_prefix() is None
        assert _probes(log) == 2
        spawn.death_signal_prefix.cache_clear()
        assert spawn.death_signal_prefix() is None
        assert _probes(log) == 2
    finally:
        spawn.death_signal_prefix.cache_clear()


def test_an_unwritable_state_folder_only_means_probing_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, log = _fake_setpriv(tmp_path, monkeypatch, KNOWS)
    (tmp_path / "state").write_text("a file where the folder would be")
    try:
        assert spawn.death_signal_prefix() is not None
        spawn.death_signal_prefix.cache_clear()
        assert spawn.death_signal_prefix() is not None
        assert _probes(log) == 2
    finally:
        spawn.death_signal_prefix.cache_clear()
