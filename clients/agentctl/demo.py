"""The offline demo: ``python -m agentctl.demo`` (``make demo``).

It creates a throw-away project directory, starts a private daemon (``agentd serve --stdio``)
whose data, state and runtime directories are inside it, and asks the built-in mock LLM to
"write a hello world program and run it", rendering the run as ``agentctl send`` does on a
terminal. Then it shows the file the agent wrote and the session listing. No network, no API
key, nothing left behind (``--keep`` keeps the directory). Exits 0 when the run succeeded and
``hello.py`` exists.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
from pathlib import Path

from agentctl.client import AgentClient, spawn_stdio
from agentctl.render.listing import format_session_table
from agentctl.render.stream import TerminalRenderer
from agentctl.render.style import Style, wants_color
from agentctl.run import outcome
from agentctl.run.drive import StopSignal, drive_run, interrupt_handling
from agentd.protocol.events import SessionEvent
from agentd.protocol.methods import SessionListParams, SessionNewParams

PROMPT = "write a hello world program and run it"
EXPECTED_FILE = "hello.py"


def isolated_env(root: Path) -> dict[str, str]:
    """The environment with every XDG directory of the daemon moved under ``root``."""
    env = dict(os.environ)
    for name in ("XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_RUNTIME_DIR"):
        path = root / name.removeprefix("XDG_").lower()
        path.mkdir(mode=0o700, exist_ok=True)
        env[name] = str(path)
    return env


class Demo:
    """One demo run in ``root`` (the project is ``root/project``)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.project = root / "project"
        self.project.mkdir()
        self.style = Style(wants_color(sys.stdout))
        self.renderer = TerminalRenderer(
            sys.stdout, style=self.style, animate=self.style.enabled, cwd=str(self.project)
        )

    def say(self, text: str) -> None:
        self.renderer.line(text)

    async def run(self) -> int:
        self.say(
            self.style.bold("agentd offline demo") + self.style.dim(f"  (project {self.project})")
        )
        self.say(self.style.dim(f'$ agentctl send --stdio --provider mock "{PROMPT}"'))
        client = await spawn_stdio(cwd=str(self.project), env=isolated_env(self.root))
        async with client:
            code = await self._prompt(client)
            self._show_file()
            await self._show_sessions(client)
        produced = (self.project / EXPECTED_FILE).is_file()
        return code if code != outcome.OK or produced else outcome.AGENT_ERROR

    async def _prompt(self, client: AgentClient) -> int:
        params = SessionNewParams(
            cwd=str(self.project.resolve()),
            provider="mock",
            permission_mode="auto",
            sandbox="workspace",
            title="demo",
        )
        info = await client.sessions.create(params)

        def view(data: bytes, event: SessionEvent | None) -> None:
            if event is not None:
                self.renderer.event(event.event, event.session_id)

        stop = StopSignal()
        with interrupt_handling(stop, self.renderer.pause):
            summary = await drive_run(client, info.session_id, PROMPT, view, stop=stop)
        self.renderer.footer(summary)
        return summary.exit_code

    def _show_file(self) -> None:
        path = self.project / EXPECTED_FILE
        self.say("")
        if not path.is_file():
            self.say(self.style.red(f"✗ the agent did not write {EXPECTED_FILE}"))
            return
        self.say(self.style.dim(f"$ cat {EXPECTED_FILE}"))
        self.say(path.read_text(encoding="utf-8").rstrip("\n"))

    async def _show_sessions(self, client: AgentClient) -> None:
        page = await client.sessions.list(SessionListParams())
        self.say("")
        self.say(self.style.dim("$ agentctl sessions list"))
        self.say(format_session_table(page.sessions, self.style) or "no sessions")


def main(argv: list[str] | None = None) -> int:
    """Run the demo; return its exit code."""
    parser = argparse.ArgumentParser(prog="python -m agentctl.demo", description=__doc__)
    parser.add_argument("--keep", action="store_true", help="keep the demo directory")
    options = parser.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="agentd-demo-", dir="/tmp"))
    try:
        return asyncio.run(Demo(root).run())
    except KeyboardInterrupt:
        return outcome.INTERRUPTED
    finally:
        if options.keep:
            sys.stdout.write(f"kept {root}\n")
        else:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
