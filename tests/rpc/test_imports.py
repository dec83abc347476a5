"""Start-up paths import only what they need (checked in fresh interpreters)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.harness import scaled


def _loaded_after(statement: str, modules: list[str]) -> list[str]:
    code = f"import sys\n{statement}\nprint(' '.join(m for m in {modules!r} if m in sys.modules))"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=scaled(60)
    )
    return result.stdout.split()


@pytest.mark.parametrize(
    ("statement", "forbidden"),
    [
        (
            "import agentd.rpc",
            [
                "structlog",
                "httpx",
                "pygls",
                "agentd.session",
                "agentd.jsonrpc",
                "agentd.agent.loop",
                "agentd.protocol",
            ],
        ),
        (
            "import agentd.cli",
            ["asyncio", "msgspec", "structlog", "httpx", "agentd.listen", "pygls", "agentd.lsp"],
        ),
        ("import agentctl.cli", ["pygls", "lsprotocol", "agentd.lsp"]),
        ("import agentctl.commands.bridge", ["msgspec", "structlog", "httpx", "agentd.rpc"]),
        (
            "import agentd.listen",
            [
                "structlog",  # set up after the first initialize answer (agentd.log)
                "httpx",
                "pygls",
                "lsprotocol",
                "agentd.agent.loop",
                "agentd.tools",
                "agentd.providers",
                "agentd.store",
                "agentd.session.manager",
                "agentd.web",
            ],
        ),
        (
            "import agentd.acp.main",
            ["httpx", "pygls", "agentd.session.manager", "agentd.agent.loop", "agentd.tools"],
        ),
    ],
)
def test_lean_imports(statement: str, forbidden: list[str]) -> None:
    """The RPC core, the CLI entry, the bridge, the transports and the ACP front-end (before
    its backend starts) stay free of heavy modules."""
    assert _loaded_after(statement, forbidden) == []


WEB_MODULES = ("agentd.web", "agentd.web.server", "agentd.web.http", "agentd.protocol.web")


@pytest.mark.parametrize(
    ("flags", "expected"),
    [([], []), (["--http", "127.0.0.1:0"], list(WEB_MODULES))],
    ids=["plain", "with-http"],
)
def test_a_serving_daemon_has_not_imported_the_lsp_or_http_stacks(
    short_tmp: Path, flags: list[str], expected: list[str]
) -> None:
    """``agentd --stdio`` answers initialize and daemon/status with pygls, lsprotocol, httpx,
    the agent, the tools, the providers, the store and the web front-end still unimported: they
    load when a session is first used, an LSP front-end starts or ``--http`` needs them (and
    ``--http`` does load the web front-end)."""
    code = (
        "import sys\n"
        "from agentd.cli import main\n"
        f"code = main(['--stdio', *{flags!r}])\n"
        "heavy = ('pygls', 'lsprotocol', 'httpx', 'httpcore', 'h11', 'anyio', 'certifi', "
        "'agentd.providers', 'agentd.agent.loop', 'agentd.tools', 'agentd.store', 'rich', "
        f"'tree_sitter', 'tree_sitter_bash', *{WEB_MODULES!r})\n"
        "sys.stderr.write('LOADED ' + ' '.join(m for m in heavy if sys.modules.get(m)) + '\\n')\n"
        "sys.exit(code)\n"
    )
    wire = (
        b'{"jsonrpc":"2.0","id":1,"method":"initialize"}\n'
        b'{"jsonrpc":"2.0","id":2,"method":"daemon/status"}\n'
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")}
    env.update(
        {f"XDG_{name}": str(short_tmp) for name in ("RUNTIME_DIR", "STATE_HOME", "DATA_HOME")}
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        input=wire,
        env=env,
        capture_output=True,
        timeout=scaled(60),
        check=False,
    )
    assert result.returncode == 0, result.stderr.decode()
    assert [json.loads(line)["id"] for line in result.stdout.splitlines()] == [1, 2]
    loaded = result.stderr.decode().rsplit("LOADED", 1)[1].split()
    assert loaded == expected


def test_a_session_without_mcp_servers_imports_no_mcp_module(tmp_path: Path) -> None:
    """A session and a run on the mock load nothing of ``agentd.mcp`` but its config reader,
    nor the SDK (the approval preview, for one, recognises MCP tools without importing them)."""
    code = f"""
import asyncio, os, sys
for name, folder in [("XDG_CONFIG_HOME", "c"), ("XDG_DATA_HOME", "d"), ("XDG_STATE_HOME", "s"),
                     ("XDG_CACHE_HOME", "k"), ("XDG_RUNTIME_DIR", "r")]:
    os.makedirs({str(tmp_path)!r} + "/" + folder, mode=0o700, exist_ok=True)
    os.environ[name] = {str(tmp_path)!r} + "/" + folder
from agentd.protocol.methods import PromptParams, SessionNewParams
from agentd.session.service import SessionService

async def main():
    service = SessionService()
    info = await service.create(SessionNewParams(cwd={str(tmp_path)!r}, provider="mock"))
    await service.prompt(PromptParams(session_id=info.session_id, text="write a file"))
    await service.close()

asyncio.run(main())
loaded = [m for m in sys.modules if m == "mcp" or m.startswith(("mcp.", "agentd.mcp."))]
print("MCP:", *(m for m in loaded if m != "agentd.mcp.servers"))
"""
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=scaled(120),
    )
    assert result.stdout.splitlines()[-1] == "MCP:"
