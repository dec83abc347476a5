"""The chat UI's JavaScript type-checks against the wire types (``protocol.d.ts``).

``tsc`` (the extension's TypeScript, installed by ``make vscode-build``) checks every UI module
marked ``// @ts-check`` with ``daemon/agentd/web/ui/tsconfig.json``: a field read from a tool's
``details`` (or any other wire value) that its type does not have fails here.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.harness import scaled

REPO = Path(__file__).resolve().parents[2]
UI = REPO / "daemon" / "agentd" / "web" / "ui"
TSC = REPO / "editors" / "vscode" / "node_modules" / ".bin" / "tsc"

pytestmark = [
    pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed"),
    pytest.mark.skipif(not TSC.exists(), reason="TypeScript is not installed: make vscode-build"),
]


def _tsc(project: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(TSC), "-p", str(project)],
        capture_output=True,
        text=True,
        timeout=scaled(300),
        check=False,
    )


def test_every_ui_module_is_checked() -> None:
    """Each module of the page (vendored libraries aside) opts into the check."""
    modules = sorted(UI.glob("*.js"))
    assert modules
    unchecked = [p.name for p in modules if not p.read_text().startswith("// @ts-check\n")]
    assert unchecked == []


def test_ui_type_checks_against_the_protocol() -> None:
    done = _tsc(UI)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def test_a_details_field_read_without_narrowing_is_caught(tmp_path: Path) -> None:
    """The check has teeth: reading ``exitCode`` from details not known to be bash's fails."""
    bad = tmp_path / "bad.js"
    bad.write_text(
        "// @ts-check\n"
        "/** @param {import('./protocol').ToolDetails} details */\n"
        "export const exit = (details) => details.exitCode;\n"
    )
    shutil.copy(UI / "protocol.d.ts", tmp_path / "protocol.d.ts")
    shutil.copy(UI / "tsconfig.json", tmp_path / "tsconfig.json")
    config = tmp_path / "tsconfig.json"
    config.write_text(config.read_text().replace('"include": [', '"include": ["bad.js", ', 1))
    done = _tsc(tmp_path)
    assert done.returncode != 0
    assert "Property 'exitCode' does not exist on type" in done.stdout
