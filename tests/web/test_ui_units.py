"""The chat UI's pure modules under ``node --test`` (tests/web/js/)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.harness import scaled

JS_TESTS = Path(__file__).parent / "js"


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_node_unit_tests_pass() -> None:
    files = sorted(str(p) for p in JS_TESTS.glob("*.test.mjs"))
    assert files, "no JavaScript tests found"
    done = subprocess.run(
        ["node", "--test", *files], capture_output=True, text=True, timeout=scaled(120), check=False
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "# fail 0" in done.stdout
