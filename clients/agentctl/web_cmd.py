"""``agentctl web [--app] [--no-open]``: open the shared daemon's web chat.

Asks the shared daemon (started if none runs) for its HTTP front-end with ``daemon/web``: the
daemon starts it unless it runs, and answers with a link carrying a one-time token. The link
is printed, then opened: ``--app`` in a Chromium or Chrome app window (no tabs, no address
bar) when one is installed, otherwise in the default browser when there is a display.
``--no-open`` only prints it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys

from agentctl import outcome
from agentctl.common import open_client, resolve_cwd, run_command, warn

APP_BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")


def web_main(options: argparse.Namespace) -> int:
    """Entry point of ``agentctl web``."""
    return run_command(lambda: _web(options))


async def _web(options: argparse.Namespace) -> int:
    cwd = resolve_cwd(options.cwd)
    params: dict[str, object] = {"cwd": cwd}
    if options.port is not None:
        params["port"] = options.port
    async with await open_client(options) as client:
        result = await client.call("daemon/web", params)
    url = str(result["url"])
    sys.stdout.write(f"{url}\n")
    sys.stdout.flush()
    if options.no_open:
        return outcome.OK
    if options.app:
        if open_app_window(url):
            return outcome.OK
        warn("no Chromium or Chrome found for --app; open the link above")
        return outcome.OK
    if not open_browser(url):
        warn("no browser to open here; open the link above")
    return outcome.OK


def find_app_browser() -> str | None:
    """The first Chromium-family browser on PATH (None if there is none)."""
    for name in APP_BROWSERS:
        path = shutil.which(name)
        if path is not None:
            return path
    return None


def open_app_window(url: str) -> bool:
    """Open ``url`` in a Chromium/Chrome app window (detached); False when none is installed."""
    browser = find_app_browser()
    if browser is None:
        return False
    subprocess.Popen(
        [browser, f"--app={url}", "--new-window"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    return True


def open_browser(url: str) -> bool:
    """Open ``url`` in the default graphical browser; False without a display (a text-mode
    browser would take over the terminal) or when none is found."""
    if sys.platform.startswith("linux") and not (
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    ):
        return False
    import webbrowser

    return webbrowser.open(url, new=1)
