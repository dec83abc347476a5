"""A real terminal for agentctl: tmux runs a command on its own server, keys are typed with
``send-keys`` and the screen, scrollback included, is read with ``capture-pane`` — what a person
would see, after every cursor movement and erase has been applied."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

from tests.harness import scaled, wait_until

DONE = "__screen_done__"


class Screen:
    """One tmux server and window running one shell command line (see the module docstring)."""

    def __init__(self, command: list[str], env: dict[str, str], cwd: Path) -> None:
        if shutil.which("tmux") is None:
            pytest.skip("tmux is not installed")
        self.server = f"agentd-test-{uuid.uuid4().hex[:8]}"
        line = f"{shlex.join(command)}; echo {DONE}$?; sleep 600"
        self._tmux(
            "new-session",
            "-d",
            "-x",
            "120",
            "-y",
            "30",
            "-c",
            str(cwd),
            "bash",
            "-c",
            line,
            env=dict(env, TERM="xterm-256color"),
        )

    def _tmux(self, *args: str, env: dict[str, str] | None = None) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.server, "-f", "/dev/null", *args],
            env=env,
            capture_output=True,
            text=True,
            check=True,
            timeout=scaled(30),
        )
        return done.stdout

    def text(self) -> str:
        """Every line of the scrollback and the screen, trailing blanks dropped."""
        captured = self._tmux("capture-pane", "-p", "-J", "-S", "-", "-E", "-")
        return "\n".join(line.rstrip() for line in captured.rstrip("\n").split("\n")).strip()

    def title(self) -> str:
        """The pane's title as the program in it set it (OSC 0/2)."""
        return self._tmux("display-message", "-p", "#{pane_title}").strip()

    def keys(self, *keys: str) -> None:
        """Type ``keys`` (tmux key names such as ``C-c`` or plain text)."""
        self._tmux("send-keys", *keys)

    def wait_for(self, text: str, timeout: float = 30) -> str:
        """The screen once ``text`` is on it."""

        def shown() -> str | None:
            screen = self.text()
            return screen if text in screen else None

        return wait_until(shown, timeout, f"{text!r} on the screen")

    def finish(self, timeout: float = 60) -> tuple[int, str]:
        """Wait for the command to end; its exit code and the screen without the end marker."""
        screen = self.wait_for(DONE, timeout)
        before, _, after = screen.rpartition(DONE)
        return int(after.split()[0]), before.rstrip()

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.server, "kill-server"], capture_output=True)
