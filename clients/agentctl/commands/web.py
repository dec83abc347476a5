"""``agentctl web [--app] [--no-open]``: open the shared daemon's web chat.

Asks the shared daemon (started if none runs) for its HTTP front-end with ``daemon/web``: the
daemon starts it unless it runs, and answers with a link carrying a one-time token. The link
is printed, then opened: ``--app`` in a Chromium or Chrome app window (no tabs, no address
bar) when one is installed, otherwise in the default browser when there is a display.
``--no-open`` only prints it.

The browser is never given the link itself: a command line is readable by every local user
(``/proc/PID/cmdline``), and whoever exchanges the token first signs in. It gets the address of
a **redirect file** instead (as Jupyter does): a small HTML page, readable only by the user
(0600, in a 0700 folder under the state directory), that sends the browser on to the link.
Redirect files older than the link's lifetime are deleted at the next run.
"""

from __future__ import annotations

import os
import secrets
import shutil
import stat
import subprocess
import sys
import time
from html import escape
from pathlib import Path

from agentctl.common import open_client, resolve_cwd, run_command, warn
from agentctl.options import WebOptions
from agentctl.run import outcome
from agentd import paths

APP_BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
REDIRECT_TTL = 600.0
"""Seconds a redirect file is kept (the daemon's one-time links expire after as long)."""


def web_main(options: WebOptions) -> int:
    """Entry point of ``agentctl web``."""
    return run_command(lambda: _web(options))


async def _web(options: WebOptions) -> int:
    cwd = resolve_cwd(options.cwd)
    params: dict[str, object] = {"cwd": cwd}
    if options.port is not None:
        params["port"] = options.port
    async with await open_client(options) as client:
        result = await client.call("daemon/web", params)
    url = str(result["url"])
    sys.stdout.write(f"{url}\n")
    sys.stdout.flush()
    if options.no_open or open_link(url, app=options.app):
        return outcome.OK
    return outcome.AGENT_ERROR


def open_link(url: str, *, app: bool) -> bool:
    """Open ``url`` through a redirect file in an app window (``app``) or the default browser;
    False, with a warning saying why (the link is printed already), when that cannot be
    done: no display, no browser, no redirect file."""
    if not can_open_browser():
        warn(
            "no display here (DISPLAY and WAYLAND_DISPLAY are unset), so no browser can open; "
            "open the link above in a browser elsewhere, or pass --no-open"
        )
        return False
    browser = find_app_browser() if app else None
    if app and browser is None:
        warn("no Chromium or Chrome found for --app; open the link above")
        return False
    try:
        redirect = write_redirect_file(url)
    except OSError as exc:
        warn(f"cannot write the redirect file ({exc}); open the link above")
        return False
    if browser is not None:
        open_app_window(browser, redirect)
        return True
    if not open_browser(redirect):
        warn("no browser to open here; open the link above")
        return False
    return True


def redirect_folder() -> Path:
    """The private folder of redirect files (created 0700); OSError when it exists but is not
    a folder of this user's that only they can enter."""
    folder = paths.state_dir() / "web"
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = folder.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise OSError(f"{folder} is not a folder of this user")
    if stat.S_IMODE(info.st_mode) != 0o700:
        folder.chmod(0o700)
    return folder


def write_redirect_file(url: str) -> str:
    """A ``file://`` URL of a new 0600 HTML page that sends the browser on to ``url`` (its
    one-time token stays off every command line); stale redirect files are deleted first."""
    folder = redirect_folder()
    now = time.time()
    for old in folder.glob("open-*.html"):
        try:
            if now - old.lstat().st_mtime > REDIRECT_TTL:
                old.unlink()
        except OSError:
            continue
    path = folder / f"open-{secrets.token_hex(8)}.html"
    target = escape(url)
    page = (
        '<!doctype html><meta charset="utf-8"><title>agentd</title>'
        '<meta name="referrer" content="no-referrer">'
        f'<meta http-equiv="refresh" content="0;url={target}">'
        f'<p><a href="{target}">Open the agentd web chat</a></p>\n'
    )
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as file:
        file.write(page)
    return path.as_uri()


def find_app_browser() -> str | None:
    """The first Chromium-family browser on PATH (None if there is none)."""
    for name in APP_BROWSERS:
        path = shutil.which(name)
        if path is not None:
            return path
    return None


def open_app_window(browser: str, url: str) -> None:
    """Open ``url`` in an app window of the Chromium/Chrome at ``browser`` (detached)."""
    subprocess.Popen(
        [browser, f"--app={url}", "--new-window"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def can_open_browser() -> bool:
    """False on Linux without a display (a text-mode browser would take over the terminal)."""
    return not sys.platform.startswith("linux") or bool(
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    )


def open_browser(url: str) -> bool:
    """Open ``url`` in the default graphical browser; False when none is found."""
    import webbrowser

    return webbrowser.open(url, new=1)
