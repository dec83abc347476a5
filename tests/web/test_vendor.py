"""The vendored Markdown, sanitiser and syntax highlighting libraries match the versions pinned
in the lock file."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.harness import scaled

ROOT = Path(__file__).resolve().parents[2]
WEB = ROOT / "daemon" / "agentd" / "web"
VENDORED = {
    "marked": "marked.min.js",
    "dompurify": "purify.min.js",
    "highlight.js": "highlight.min.js",
}


def locked_versions() -> dict[str, str]:
    lock = json.loads((WEB / "package-lock.json").read_text())
    return {name: lock["packages"][f"node_modules/{name}"]["version"] for name in VENDORED}


def test_vendored_files_name_the_locked_versions() -> None:
    versions = locked_versions()
    for name, file in VENDORED.items():
        first_line = (WEB / "ui" / "vendor" / file).read_text().split("\n", 1)[0]
        match = re.match(r"/\* (\S+) (\S+), licence ", first_line)
        assert match, first_line
        assert match.groups() == (name, versions[name])
        assert (WEB / "ui" / "vendor" / f"{file}.LICENSE.txt").stat().st_size > 0


def test_package_json_pins_exact_versions() -> None:
    package = json.loads((WEB / "package.json").read_text())
    pins = {**package["dependencies"], **package["devDependencies"]}
    assert all(re.fullmatch(r"\d+\.\d+\.\d+", v) for v in pins.values()), pins
    assert {k: pins[k] for k in VENDORED} == locked_versions()


@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")
def test_make_web_vendor_reproduces_the_vendored_files(tmp_path: Path) -> None:
    done = subprocess.run(
        ["make", "-s", "web-vendor", f"VENDOR_OUT={tmp_path}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=scaled(300),
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    shipped = sorted(p.name for p in (WEB / "ui" / "vendor").iterdir())
    assert sorted(p.name for p in tmp_path.iterdir()) == shipped
    for name in shipped:
        assert (tmp_path / name).read_bytes() == (WEB / "ui" / "vendor" / name).read_bytes(), name
