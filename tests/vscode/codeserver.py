"""code-server (the real VS Code workbench) with the built extension, driven by Playwright.

`CodeServer` installs ``editors/vscode/dist/agentd-vscode.vsix`` into a fresh extensions folder,
writes user settings (no workspace-trust dialog; the extension on the repo's venv, the mock
provider, a private session dir) and serves one workspace folder on a free loopback port. With
``restricted=True`` workspace trust is on and the folder opens untrusted (Restricted Mode, no
prompt); a setting given as None is left out; ``env`` adds variables (e.g.
``AGENTD_MOCK_SCENARIOS``) and ``venv_on_path=False`` keeps the repo's venv off ``PATH``.
`Workbench` wraps a Playwright page on it: the command palette, the chat webview's frame,
screenshots.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.harness import isolated_env, scaled, stop_processes_with_env, wait_until

REPO = Path(__file__).resolve().parents[2]
EXTENSION = REPO / "editors" / "vscode"
VSIX = EXTENSION / "dist" / "agentd-vscode.vsix"
CODE_SERVER = EXTENSION / ".code-server" / "node_modules" / ".bin" / "code-server"
VENV_BIN = REPO / ".venv" / "bin"
READY_TIMEOUT = 60.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class CodeServer:
    """One code-server process; ``start()`` then ``url``; ``stop()`` kills its process group
    and every process left with its environment (an extension's ``agentd`` outlived it)."""

    root: Path
    settings: dict[str, Any] = field(default_factory=dict)
    env_extra: dict[str, str] = field(default_factory=dict)
    venv_on_path: bool = True
    restricted: bool = False
    port: int = 0
    process: subprocess.Popen[bytes] | None = None
    _log: Any = None

    @property
    def workspace(self) -> Path:
        return self.root / "project"

    @property
    def sessions(self) -> Path:
        return self.root / "sessions"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/?folder={self.workspace}"

    def env(self) -> dict[str, str]:
        env = isolated_env(self.root / "xdg")
        if self.venv_on_path:
            env["PATH"] = f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}"
        env.pop("VSCODE_IPC_HOOK_CLI", None)
        return {**env, **self.env_extra}

    def user_settings(self) -> dict[str, Any]:
        settings = {
            "security.workspace.trust.enabled": self.restricted,
            "security.workspace.trust.startupPrompt": "never",
            "security.workspace.trust.emptyWindow": False,
            "workbench.startupEditor": "none",
            "workbench.tips.enabled": False,
            "extensions.autoCheckUpdates": False,
            "extensions.autoUpdate": False,
            "telemetry.telemetryLevel": "off",
            "agentd.connection": "stdio",
            "agentd.command": str(VENV_BIN / "agentd"),
            "agentd.provider": "mock",
            "agentd.extraArgs": ["--session-dir", str(self.sessions)],
            **self.settings,
        }
        return {key: value for key, value in settings.items() if value is not None}

    def start(self) -> None:
        for sub in ("project", "sessions", "data/User", "extensions"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        (self.root / "data/User/settings.json").write_text(json.dumps(self.user_settings()))
        (self.root / "config.yaml").write_text("auth: none\n")
        base = [str(CODE_SERVER), "--config", str(self.root / "config.yaml")]
        base += ["--user-data-dir", str(self.root / "data")]
        base += ["--extensions-dir", str(self.root / "extensions")]
        subprocess.run(
            [*base, "--install-extension", str(VSIX)],
            check=True,
            capture_output=True,
            env=self.env(),
            timeout=scaled(120),
        )
        self.port = free_port()
        self._log = (self.root / "code-server.log").open("wb")
        argv = [*base, "--auth", "none", "--bind-addr", f"127.0.0.1:{self.port}"]
        argv += ["--disable-telemetry", "--disable-update-check"]
        if not self.restricted:
            argv.append("--disable-workspace-trust")
        argv.append(str(self.workspace))
        self.process = subprocess.Popen(
            argv, stdout=self._log, stderr=subprocess.STDOUT, env=self.env(), start_new_session=True
        )
        self._wait_ready()

    def _wait_ready(self) -> None:
        def healthy() -> bool:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/healthz", timeout=2):
                    return True
            except OSError:
                return False

        try:
            wait_until(healthy, READY_TIMEOUT, "code-server's /healthz", 0.2)
        except TimeoutError:
            log = f"{self.root}/code-server.log"
            raise RuntimeError(
                f"code-server did not answer in {READY_TIMEOUT} s; see {log}"
            ) from None

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, 15)
            try:
                self.process.wait(timeout=scaled(10))
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, 9)
                self.process.wait()
        runtime = self.env()["XDG_RUNTIME_DIR"]
        stop_processes_with_env(f"XDG_RUNTIME_DIR={runtime}", grace=2)
        if self._log:
            self._log.close()


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


class Workbench:
    """A Playwright page on code-server's workbench."""

    def __init__(self, page: Any, server: CodeServer, artifacts: Path) -> None:
        self.page = page
        self.server = server
        self.artifacts = artifacts

    def open(self) -> None:
        self.page.goto(self.server.url)
        self.page.wait_for_selector(".monaco-workbench .statusbar", timeout=scaled(60) * 1000)
        # The extension host is up once the extension's status bar item is drawn.
        self.status_item().wait_for(timeout=scaled(60) * 1000)

    def status_item(self) -> Any:
        return self.page.locator("[id$='agentd.status']").first

    def palette(self) -> None:
        """Open the command palette (keys go to the workbench, not into a focused webview)."""
        if self.page.evaluate("document.activeElement?.tagName") == "IFRAME":
            self.page.locator(".part.titlebar").first.click(position={"x": 200, "y": 10})
        self.page.keyboard.press("Control+Shift+P")

    def run_command(self, title: str) -> None:
        """Run a command by its palette title, e.g. "agentd: Send Prompt". The palette closes
        when something else takes the focus (the chat focusing its input), so retry then."""
        for attempt in range(3):
            self.palette()
            box = self.page.locator(".quick-input-widget input")
            try:
                box.fill(f">{title}", timeout=scaled(5) * 1000)
                row = self.page.locator(".quick-input-list .monaco-list-row", has_text=title)
                row.first.wait_for(timeout=scaled(5) * 1000)
            except Exception:
                if attempt == 2:
                    raise
                continue
            self.page.keyboard.press("Enter")
            return

    def answer_input(self, text: str) -> None:
        box = self.page.locator(".quick-input-widget input")
        box.wait_for()
        box.fill(text)
        self.page.keyboard.press("Enter")

    def chat(self, timeout: float = 30.0) -> Any:
        """The frame of the chat webview (nested iframes), once its UI is mounted."""

        def mounted() -> Any:
            for frame in self.page.frames:
                try:
                    if frame.query_selector(".agentd-chat"):
                        return frame
                except Exception:  # frames come and go while the view loads
                    continue
            return None

        try:
            return wait_until(mounted, timeout, "the chat webview", 0.2)
        except TimeoutError:
            raise AssertionError("the agentd chat webview did not appear") from None

    def screenshot(self, name: str) -> Path:
        path = self.artifacts / f"{name}.png"
        self.page.screenshot(path=str(path))
        return path
