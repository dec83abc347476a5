"""The shared harness itself: isolation, stopping stubborn processes, waits that fail loudly."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.harness import IsolatedHome, scaled, start_daemon, stop, wait_pid_exit, wait_until

IGNORES_TERM = (
    "import signal, sys, time\n"
    "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    "print('ready', flush=True)\n"
    "time.sleep(60)\n"
)


def _stubborn(env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """A child that ignores SIGTERM, returned once it has said so."""
    child = subprocess.Popen(
        [sys.executable, "-c", IGNORES_TERM], env=env, stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    assert child.stdout.readline() == "ready\n"
    child.stdout.close()
    return child


def test_the_environment_is_isolated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTD_SOCKET", "/somewhere/else.sock")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-the-users-own")
    monkeypatch.setenv("XDG_CACHE_HOME", "/home/someone/.cache")
    with IsolatedHome() as home:
        assert not [k for k in home.env if k.startswith("AGENTD_")]
        assert "OPENAI_API_KEY" not in home.env
        assert "XDG_CACHE_HOME" not in home.env
        for name in ("XDG_RUNTIME_DIR", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME"):
            path = Path(home.env[name])
            assert path.parent == home.root
            assert path.stat().st_mode & 0o777 == 0o700
        assert len(str(home.socket).encode()) < 100
        root = home.root
    assert not root.exists()


def test_stop_kills_what_ignores_the_signal() -> None:
    child = _stubborn()
    started = time.monotonic()
    assert stop(child, timeout=0.5) == -signal.SIGKILL
    assert time.monotonic() - started < scaled(5)


def test_wait_pid_exit_kills_after_the_timeout() -> None:
    child = _stubborn()
    assert wait_pid_exit(child.pid, timeout=0.3) is False
    assert child.wait(scaled(5)) == -signal.SIGKILL
    assert wait_pid_exit(child.pid) is True  # already gone (reaped)


def test_cleanup_stops_a_daemon_left_behind_but_not_a_stranger() -> None:
    home = IsolatedHome()
    ours = _stubborn(home.env)
    unlisted = _stubborn(home.env)  # a daemon that never wrote a pid file
    stranger = _stubborn()
    try:
        pid_dir = home.runtime_dir / "agentd"
        pid_dir.mkdir()
        (pid_dir / "agentd.pid").write_text(f"{ours.pid}\n")
        (home.runtime_dir / "old.pid").write_text(f"{stranger.pid}\n")  # a reused pid
        home.stop_leftover_daemons(grace=0.3)
        assert ours.wait(scaled(5)) == -signal.SIGKILL  # it ignored SIGTERM
        assert unlisted.wait(scaled(5)) == -signal.SIGKILL
        assert stranger.poll() is None
    finally:
        for child in (stranger, ours, unlisted):
            stop(child, signal.SIGKILL)
        home.cleanup()


def test_a_daemon_that_exits_early_fails_with_its_stderr(tmp_path: Path) -> None:
    argv = [sys.executable, "-c", "import sys; sys.exit('no config here')"]
    with pytest.raises(RuntimeError, match="no config here"):
        start_daemon(argv, dict(os.environ), tmp_path / "stderr.txt", lambda: False)


def test_wait_until_names_what_never_came() -> None:
    with pytest.raises(TimeoutError, match="the moon to turn blue"):
        wait_until(lambda: False, 0.05, "the moon to turn blue")
    assert wait_until(lambda: [1], 0.05) == [1]
