"""Fixtures shared by every test folder (keep this small; folders have their own)."""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.harness import TEST_MCP_STARTUP, TEST_MODE, TEST_OPT_IN, XDG_DIRS, scaled


def pytest_configure(config: pytest.Config) -> None:
    """Give the test processes (and so every child they start) the terminal's Ctrl-C.

    A suite started in the background by a non-interactive shell (``make test &``, a CI
    runner's job) inherits SIGINT *ignored*, and a child would too: the tests that press
    Ctrl-C on ``agentctl`` would then wait for an exit that never comes.
    """
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    _scale_page_assertions()
    # A shell's PYTHONDONTWRITEBYTECODE=1 would make each of the hundreds of agentd/agentctl
    # processes the suite starts compile its modules again: children write and reuse bytecode
    # (make's recipes drop the variable already; this covers a bare `pytest`).
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


def _scale_page_assertions() -> None:
    """Playwright's ``expect`` waits 5 s by default: give page assertions the same headroom
    as every other deadline here (10 s, scaled by ``AGENTD_TEST_SLOWDOWN``)."""
    try:
        from playwright.sync_api import expect
    except ImportError:  # the browser layer is not installed: nothing to scale
        return
    expect.set_options(timeout=scaled(10) * 1000)


@pytest.fixture
def short_tmp() -> Iterator[Path]:
    """A fresh directory under /tmp with a short path (Unix socket paths must stay < 108 bytes)."""
    path = Path(tempfile.mkdtemp(prefix="t-", dir="/tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def xdg_home(short_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point every XDG base directory of this process at fresh directories under ``short_tmp``
    (in-process tests; a child process gets :class:`tests.harness.IsolatedHome`'s env), with
    the user configuration of the tests' runs (``auto``, see :data:`tests.harness.TEST_MODE`)."""
    for name, folder in XDG_DIRS.items():
        path = short_tmp / folder
        path.mkdir(mode=0o700)
        monkeypatch.setenv(name, str(path))
    config = short_tmp / XDG_DIRS["XDG_CONFIG_HOME"] / "agentd" / "config.toml"
    config.parent.mkdir(mode=0o700)
    config.write_text(TEST_MODE + TEST_MCP_STARTUP + TEST_OPT_IN)
    return short_tmp


# --- which layers did not run ---------------------------------------------------------------

_skipped_layers: dict[str, set[str]] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Note each skipped test's layer (its folder under tests/) and reason."""
    if report.skipped and report.when in ("setup", "call"):
        layer = report.nodeid.split("/")[1] if report.nodeid.count("/") > 1 else "tests"
        reason = report.longrepr[-1] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        _skipped_layers.setdefault(layer, set()).add(str(reason).removeprefix("Skipped: "))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """End the run with the layers that skipped tests and why, so a layer that did not run is
    never silent; with ``AGENTD_LAYER_REPORT`` set, append the same lines to that file (``make
    test`` prints it after both runs)."""
    if not _skipped_layers or os.environ.get("PYTEST_XDIST_WORKER"):
        return
    lines = [
        f"skipped in tests/{layer}: {'; '.join(sorted(reasons))[:300]}"
        for layer, reasons in sorted(_skipped_layers.items())
    ]
    for line in lines:
        terminalreporter.write_line(line, yellow=True)
    if report := os.environ.get("AGENTD_LAYER_REPORT"):
        with open(report, "a") as out:
            out.writelines(line + "\n" for line in lines)
