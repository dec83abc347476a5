""":checkhealth agentd and :h agentd (the committed tags file resolves and is up to date)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.harness import scaled
from tests.nvim.harness import PLUGIN, Editor, EditorFactory

pytestmark = pytest.mark.e2e  # real nvim and a real daemon


def test_checkhealth_reports_daemon_and_provider(editor: Editor) -> None:
    editor.nvim.command("checkhealth agentd")
    text = "\n".join(editor.nvim.current.buffer[:])
    assert "agentd" in text
    assert "daemon reachable: agentd " in text
    assert "provider: mock" in text
    assert "ERROR" not in text


def test_checkhealth_reports_a_missing_executable(editor_factory: EditorFactory) -> None:
    editor: Editor = editor_factory(agentd="/nonexistent/agentd")
    editor.nvim.command("checkhealth agentd")
    text = "\n".join(editor.nvim.current.buffer[:])
    assert '"/nonexistent/agentd" not found' in text
    assert "daemon reachable" not in text


def test_help_tags_resolve(editor: Editor) -> None:
    for tag in ("agentd", "agentd-setup", ":AgentChat", ":AgentSessions", "agentd-approvals"):
        editor.nvim.command(f"help {tag}")
        assert editor.nvim.current.buffer.name.endswith("doc/agentd.txt"), tag
        editor.nvim.command("close")


def test_committed_tags_match_a_fresh_helptags(nvim_bin: str, tmp_path: Path) -> None:
    shutil.copy(PLUGIN / "doc" / "agentd.txt", tmp_path / "agentd.txt")
    subprocess.run(
        [nvim_bin, "--headless", "--clean", "-c", f"helptags {tmp_path}", "-c", "qa!"],
        check=True,
        timeout=scaled(30),
        capture_output=True,
    )
    assert (tmp_path / "tags").read_text() == (PLUGIN / "doc" / "tags").read_text()
