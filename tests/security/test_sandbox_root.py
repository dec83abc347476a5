"""A workspace sandbox is never rooted at a folder that covers far more than one project:
``session/new`` (the path every front-end's ``cwd`` takes: JSON-RPC, the web API, an LSP
editor's ``rootUri``, ``agentd mcp``) refuses ``sandbox = "workspace"`` at ``/``, at the home
folder or above it, and in a folder anyone can write to, with a precise InvalidParams."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentd.errors import InvalidParams
from tests.harness import Home, new_session, stdio_client

pytestmark = pytest.mark.e2e


async def test_too_broad_sandbox_roots_are_refused() -> None:
    with Home() as home:
        shared = home.root / "shared"
        shared.mkdir()
        shared.chmod(0o777)
        async with stdio_client(home) as client:
            refused = {}
            for cwd in ("/", str(Path.home()), str(Path.home().parent), str(shared)):
                with pytest.raises(InvalidParams) as error:
                    await new_session(client, home, cwd=cwd, sandbox="workspace")
                refused[cwd] = str(error.value)
            fine = await new_session(client, home, sandbox="workspace")
            unsandboxed = await new_session(client, home, cwd=str(shared), sandbox="none")
    assert "it is the filesystem root" in refused["/"]
    assert "it is your home folder" in refused[str(Path.home())]
    assert "anyone can write to it" in refused[str(shared)]
    assert all("`$.cwd`" in text for text in refused.values())
    assert fine
    assert unsandboxed
