"""A session that never needs a language server imports none of the LSP client (pygls,
lsprotocol, ``agentd.langserver``'s client modules), even with servers configured and the
``lsp`` tool offered; the first change of a file a server serves imports them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.harness import scaled
from tests.langserver.conftest import one_call, pylsp_table

CODE = """
import asyncio, os, sys
from agentd.protocol.methods import PromptParams, SessionNewParams
from agentd.session.service import SessionService

async def main(prompts):
    service = SessionService()
    info = await service.create(SessionNewParams(cwd=sys.argv[1], provider="mock"))
    for text in prompts:
        await service.prompt(PromptParams(session_id=info.session_id, text=text))
    await service.close()

asyncio.run(main(sys.argv[2:]))
client = ("pygls", "lsprotocol", "agentd.langserver.client", "agentd.langserver.session")
print("LSP:", *sorted(m for m in sys.modules if m.startswith(client)))
"""


def _loaded(tmp_path: Path, *prompts: str) -> list[str]:
    home = {name: tmp_path / name.lower() for name in
            ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR")}  # fmt: skip
    for folder in home.values():
        folder.mkdir(mode=0o700, exist_ok=True)
    (home["XDG_CONFIG_HOME"] / "agentd").mkdir(exist_ok=True)
    config = 'permission_mode = "auto"\n'
    (home["XDG_CONFIG_HOME"] / "agentd" / "config.toml").write_text(
        config + pylsp_table() + "[permissions]\nallow_auto_without_sandbox = true\n"
    )
    scenarios = tmp_path / "scenarios.json"
    steps = [
        one_call("touch notes", "write", {"path": "notes.txt", "content": "plain\n"}),
        one_call("touch code", "write", {"path": "code.py", "content": "x = 1\n"}),
    ]
    scenarios.write_text(json.dumps({"scenarios": steps}))
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    env = {"PATH": "/usr/bin:/bin", "AGENTD_MOCK_SCENARIOS": str(scenarios)}
    env.update({name: str(path) for name, path in home.items()})
    result = subprocess.run(
        [sys.executable, "-c", CODE, str(project), *prompts],
        capture_output=True, text=True, env=env, check=False, timeout=scaled(120),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()[-1].split()[1:]


def test_a_session_that_needs_no_server_imports_no_lsp_client(tmp_path: Path) -> None:
    assert _loaded(tmp_path, "touch notes", "how are you") == []


def test_the_first_change_of_a_served_file_imports_it(tmp_path: Path) -> None:
    loaded = _loaded(tmp_path, "touch code")
    assert "agentd.langserver.client" in loaded
    assert "pygls" in loaded
    assert "lsprotocol" in loaded
