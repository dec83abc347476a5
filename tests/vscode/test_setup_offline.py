"""``scripts/setup-code-server.sh`` builds native modules offline with a fresh HOME.

The native rebuild step is what used to need the network: node-gyp downloads node's headers
into ``$HOME`` unless ``nodedir`` is set (a developer's ``~/.npmrc`` hid this). Here a tiny
addon is built the way the script's ``npm rebuild`` builds node-pty: with a fresh HOME, in a
network namespace with no network (``unshare -n``), with and without the script's
``node-headers.sh``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.harness import scaled
from tests.vscode.codeserver import EXTENSION

NODE_GYP = Path("/usr/lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js")
ADDON = """#include <node_api.h>
static napi_value Init(napi_env env, napi_value exports) { return exports; }
NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
"""
GYP = '{"targets": [{"target_name": "hello", "sources": ["hello.cc"]}]}'


def _build(tmp_path: Path, use_script: bool) -> subprocess.CompletedProcess[str]:
    addon = tmp_path / ("with" if use_script else "without")
    addon.mkdir()
    (addon / "hello.cc").write_text(ADDON)
    (addon / "binding.gyp").write_text(GYP)
    home = tmp_path / f"home-{addon.name}"
    home.mkdir()
    source = (
        f". {EXTENSION / 'scripts' / 'node-headers.sh'} && node_headers && " if use_script else ""
    )
    env = {"PATH": os.environ["PATH"], "HOME": str(home)}  # fresh: no ~/.npmrc, no caches
    command = f"{source}node {NODE_GYP} rebuild --loglevel=error"
    return subprocess.run(
        ["unshare", "-n", "bash", "-c", command],
        cwd=addon,
        env=env,
        capture_output=True,
        text=True,
        timeout=scaled(300),
        check=False,
    )


def test_native_modules_build_offline_with_a_fresh_home(tmp_path: Path) -> None:
    if not NODE_GYP.exists() or shutil.which("g++") is None:
        pytest.skip("npm's node-gyp or g++ is missing")
    if subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode != 0:
        pytest.skip("cannot make a network namespace here (unshare -n needs root)")
    built = _build(tmp_path, use_script=True)
    assert built.returncode == 0, built.stderr[-3000:]
    assert (tmp_path / "with" / "build" / "Release" / "hello.node").exists()
    bare = _build(tmp_path, use_script=False)  # what a fresh HOME did before: a download
    assert bare.returncode != 0
    assert "nodejs.org" in bare.stderr or "EAI_AGAIN" in bare.stderr or "ENOTFOUND" in bare.stderr
