"""``agentctl web`` against a real socket daemon that was started without ``--http``."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.harness import Home, stop, wait_until


@pytest.fixture
def home() -> Iterator[Home]:
    box = Home()
    daemon = box.start_socket_daemon()
    try:
        yield box
    finally:
        stop(daemon)
        box.cleanup()


def agentctl(
    home: Home, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentctl", "web", "--socket", home.socket, *args],
        env=env or {k: v for k, v in home.env.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")},
        cwd=home.project,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def exchange(url: str) -> httpx.Response:
    base, _, rest = url.partition("/?")
    with httpx.Client(base_url=base) as client:
        return client.get(f"/?{rest}")


def test_web_starts_the_front_end_once_and_prints_one_time_links(home: Home) -> None:
    first = agentctl(home, "--no-open", "--port", "0")
    assert first.returncode == 0, first.stderr
    url = first.stdout.strip()
    assert url.startswith("http://127.0.0.1:")
    assert f"cwd={str(home.project).replace('/', '%2F')}" in url
    assert exchange(url).status_code == 303
    assert exchange(url).status_code == 401  # used up
    second = agentctl(home, "--no-open")
    assert second.returncode == 0, second.stderr
    assert second.stdout.split("/?")[0] == url.split("/?")[0]  # the same server, reused
    assert exchange(second.stdout.strip()).status_code == 303


def test_without_a_display_it_prints_the_link_and_says_so(home: Home) -> None:
    done = agentctl(home, "--port", "0")
    assert done.returncode == 0
    assert done.stdout.startswith("http://127.0.0.1:")
    assert "open the link above" in done.stderr


def test_app_opens_a_chromium_app_window(home: Home, tmp_path: Path) -> None:
    record = tmp_path / "args.txt"
    fake = tmp_path / "bin" / "chromium"
    fake.parent.mkdir()
    fake.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {record}\n')
    fake.chmod(0o755)
    env = dict(home.env, PATH=f"{fake.parent}{os.pathsep}{os.environ['PATH']}")
    done = agentctl(home, "--app", "--port", "0", env=env)
    assert done.returncode == 0, done.stderr
    wait_until(record.exists, what="the browser to be started")
    args = record.read_text().split()
    assert args == [f"--app={done.stdout.strip()}", "--new-window"]
    assert exchange(done.stdout.strip()).status_code == 303
