"""Start-up paths import only what they need (checked in fresh interpreters)."""

from __future__ import annotations

import subprocess
import sys

import pytest


def _loaded_after(statement: str, modules: list[str]) -> list[str]:
    code = f"import sys\n{statement}\nprint(' '.join(m for m in {modules!r} if m in sys.modules))"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    return result.stdout.split()


@pytest.mark.parametrize(
    ("statement", "forbidden"),
    [
        ("import agentd.rpc", ["structlog", "httpx", "pygls", "agentd.server", "agentd.agent"]),
        ("import agentd.cli", ["asyncio", "msgspec", "structlog", "httpx", "agentd.listen"]),
        ("import agentctl.bridge", ["msgspec", "structlog", "httpx", "agentd.rpc"]),
        ("import agentd.listen", ["httpx", "pygls"]),
    ],
)
def test_lean_imports(statement: str, forbidden: list[str]) -> None:
    """The RPC core, the CLI entry, the bridge and the transports stay free of heavy modules."""
    assert _loaded_after(statement, forbidden) == []
