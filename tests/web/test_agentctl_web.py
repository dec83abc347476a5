"""``agentctl web`` against a real socket daemon that was started without ``--http``."""

from __future__ import annotations

import contextlib
import html
import os
import re
import shutil
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.harness import Home, scaled, stop, wait_until


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
        timeout=scaled(60),
        check=False,
    )


def exchange(url: str) -> httpx.Response:
    """The answer to opening ``url`` (200: signed in; 401: used or expired)."""
    base, _, rest = url.partition("/?")
    with httpx.Client(base_url=base) as client:
        return client.get(f"/?{rest}")


def test_web_starts_the_front_end_once_and_prints_one_time_links(home: Home) -> None:
    first = agentctl(home, "--no-open", "--port", "0")
    assert first.returncode == 0, first.stderr
    url = first.stdout.strip()
    assert url.startswith("http://127.0.0.1:")
    assert f"cwd={str(home.project).replace('/', '%2F')}" in url
    assert exchange(url).status_code == 200
    assert exchange(url).status_code == 401  # used up
    second = agentctl(home, "--no-open")
    assert second.returncode == 0, second.stderr
    assert second.stdout.split("/?")[0] == url.split("/?")[0]  # the same server, reused
    assert exchange(second.stdout.strip()).status_code == 200


@pytest.mark.parametrize("flags", [(), ("--app",)], ids=["browser", "app"])
def test_without_a_display_it_prints_the_link_says_so_and_fails(
    home: Home, flags: tuple[str, ...]
) -> None:
    """No DISPLAY/WAYLAND_DISPLAY: nothing is opened (--app too, although Chromium is on
    PATH here), the link is printed, the reason said, and the exit code is not 0."""
    done = agentctl(home, "--port", "0", *flags)
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith("http://127.0.0.1:")
    assert "no display here" in done.stderr
    assert "open the link above" in done.stderr


def fake_browser(tmp_path: Path, name: str) -> tuple[Path, Path]:
    """A stand-in browser: records its arguments and returns (as xdg-open does), leaving a
    child with its command line alive until the test creates ``release`` (so it can be seen in
    /proc). Its path and the record's."""
    record = tmp_path / f"{name}.args"
    release = tmp_path / "release"
    script = tmp_path / "bin" / name
    script.parent.mkdir(exist_ok=True)
    script.write_text(
        f'#!/bin/sh\nprintf "%s\\n" "$@" > {record}.tmp && mv {record}.tmp {record}\n'
        f"{{ while [ ! -e {release} ]; do sleep 0.05; done; }} </dev/null >/dev/null 2>&1 &\n"
    )
    script.chmod(0o755)
    return script, record


class CommandLines:
    """Every command line seen in /proc while it runs (a thread polling every process)."""

    def __init__(self) -> None:
        self.seen: set[bytes] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def _poll(self) -> None:
        while not self._stop.is_set():
            # Not Path.glob: a process that ends mid-glob makes its stat raise ESRCH.
            for pid in filter(str.isdigit, os.listdir("/proc")):
                with contextlib.suppress(OSError):
                    self.seen.add(Path(f"/proc/{pid}/cmdline").read_bytes())

    def __enter__(self) -> CommandLines:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def redirect_target(file_url: str) -> str:
    """The link a redirect file sends the browser to."""
    path = Path(file_url.removeprefix("file://"))
    found = re.search(r'content="0;url=([^"]+)"', path.read_text())
    assert found, path.read_text()
    return html.unescape(found.group(1))


def with_fake_browser(home: Home, script: Path) -> dict[str, str]:
    """The environment of an agentctl that finds the stand-in browser first, on a display
    (it needs none, but without one agentctl opens nothing)."""
    return dict(home.env, PATH=f"{script.parent}{os.pathsep}{os.environ['PATH']}", DISPLAY=":99")


@pytest.mark.parametrize("how", ["--app", "default browser"])
def test_the_token_is_on_no_command_line_and_the_redirect_file_is_private(
    home: Home, tmp_path: Path, how: str
) -> None:
    name = "chromium" if how == "--app" else "my-browser"
    script, record = fake_browser(tmp_path, name)
    env = with_fake_browser(home, script)
    if how == "--app":
        args = ["--app", "--port", "0"]
    else:
        env.update(BROWSER=str(script), DISPLAY=":99")
        args = ["--port", "0"]
    with CommandLines() as lines:
        done = agentctl(home, *args, env=env)
        assert done.returncode == 0, done.stderr
        wait_until(record.exists, what="the browser to be started")
        wait_until(lambda: any(name.encode() in line for line in lines.seen), what="a /proc scan")
        (tmp_path / "release").touch()
    link = done.stdout.strip()
    token = link.split("token=")[1].split("&")[0]
    assert len(token) >= 30
    browser_args = record.read_text().split()
    assert not [arg for arg in browser_args if token in arg]
    assert not [line for line in lines.seen if token.encode() in line]
    file_url = browser_args[0].removeprefix("--app=")
    if how == "--app":
        assert browser_args == [f"--app={file_url}", "--new-window"]
    redirect = Path(file_url.removeprefix("file://"))
    assert stat.S_IMODE(redirect.stat().st_mode) == 0o600
    assert stat.S_IMODE(redirect.parent.stat().st_mode) == 0o700
    assert redirect_target(file_url) == link
    assert exchange(link).status_code == 200  # the token was not used by anyone yet


def test_the_redirect_file_signs_the_browser_in(home: Home, tmp_path: Path) -> None:
    """Chromium opens the redirect file and ends on the signed-in page (the cookie survives
    the cross-site start of the navigation)."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("chromium is not installed")
    from playwright.sync_api import sync_playwright

    script, record = fake_browser(tmp_path, "chromium")
    (tmp_path / "release").touch()
    env = with_fake_browser(home, script)
    done = agentctl(home, "--app", "--port", "0", env=env)
    assert done.returncode == 0, done.stderr
    wait_until(record.exists, what="the browser to be started")
    file_url = record.read_text().split()[0].removeprefix("--app=")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            page = browser.new_page()
            page.set_default_timeout(scaled(30) * 1000)  # a loaded machine
            page.goto(file_url)
            page.wait_for_function("() => document.documentElement.dataset.ready === 'true'")
            assert page.url.startswith(done.stdout.split("/?")[0] + "/")
            assert "key=" not in page.url
            assert "token=" not in page.url
            assert page.evaluate("() => sessionStorage.getItem('agentd-key')")
        finally:
            browser.close()


def test_stale_redirect_files_are_deleted(home: Home, tmp_path: Path) -> None:
    script, _ = fake_browser(tmp_path, "chromium")
    (tmp_path / "release").touch()
    env = with_fake_browser(home, script)
    folder = home.state_dir / "agentd" / "web"
    folder.mkdir(parents=True)
    stale = folder / "open-0123456789abcdef.html"
    stale.write_text("old")
    os.utime(stale, (time.time() - 3600, time.time() - 3600))
    done = agentctl(home, "--app", "--port", "0", env=env)
    assert done.returncode == 0, done.stderr
    assert not stale.exists()
    assert len(list(folder.glob("open-*.html"))) == 1
