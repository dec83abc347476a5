"""Path safety of ``session/rewind``: it writes and removes only beneath the session's
workspace (the cwd here, unsandboxed), through descriptor-based opens — a folder swapped for
a symlink that leads out is refused, and so is a file outside the workspace."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from tests.harness import Home, new_session, run, stdio_client
from tests.rewind.scenarios import KEEP_BEFORE, steps
from tests.scenarios import tool_call

pytestmark = pytest.mark.e2e


async def test_a_symlinked_folder_is_not_followed(home: Home) -> None:
    """sub/ becomes a symlink to a folder outside holding the same deep.txt: the rewind
    refuses it and the outside file stays."""
    project = home.project
    (project / "keep.txt").write_text(KEEP_BEFORE)
    outside = Path(tempfile.mkdtemp(prefix="rw-out-", dir=home.root))
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        await run(client, sid, "rewind turn one")
        await run(client, sid, "rewind turn two")
        (project / "sub" / "deep.txt").rename(outside / "deep.txt")
        (project / "sub").rmdir()
        (project / "sub").symlink_to(outside)
        result = await client.call("session/rewind", {"sessionId": sid, "force": True})
    refused = {c["path"]: c for c in result["conflicts"]}
    assert refused[str(project / "sub/deep.txt")]["reason"] == "refused"
    assert "outside the workspace" in refused[str(project / "sub/deep.txt")]["message"]
    assert (outside / "deep.txt").read_text() == "deep\n"
    assert (project / "a.txt").read_text() == "one\n"  # the rest was rewound


async def test_a_file_outside_the_workspace_is_not_restored(home: Home) -> None:
    """An unsandboxed run may write outside its cwd; a rewind never writes there."""
    outside = home.root / "elsewhere.txt"
    home.use_scenarios(
        [
            steps(
                "rewind-outside",
                "rewind an outside write",
                [[tool_call("write", {"path": str(outside), "content": "x\n"}, "w9")]],
            )
        ]
    )
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        await run(client, sid, "rewind an outside write")
        assert outside.read_text() == "x\n"
        result = await client.call("session/rewind", {"sessionId": sid})
    (conflict,) = result["conflicts"]
    assert conflict["reason"] == "refused"
    assert "outside the workspace" in conflict["message"]
    assert outside.read_text() == "x\n"


async def test_a_sandboxed_session_rewinds_inside_its_workspace(home: Home) -> None:
    """Under sandbox = "workspace" the same turns are recorded and rewound (bash confined),
    and the restores go through the workspace root."""
    project = home.project
    (project / "keep.txt").write_text(KEEP_BEFORE)
    async with stdio_client(home) as client:
        sid = await new_session(client, home, sandbox="workspace", permissionMode="auto")
        await run(client, sid, "rewind turn one")
        assert (project / "made.txt").exists()
        result = await client.call("session/rewind", {"sessionId": sid})
    assert result["conflicts"] == []
    assert sorted(result["removed"]) == [str(project / "a.txt"), str(project / "made.txt")]
    assert result["restored"] == [str(project / "keep.txt")]
    assert (project / "keep.txt").read_text() == KEEP_BEFORE
