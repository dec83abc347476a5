"""The container image definition: hadolint-clean, non-root, and its build stage's Python
install (under requirements.lock) works from exactly the files it copies (no container engine
runs here)."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.harness import scaled

ROOT = Path(__file__).resolve().parents[2]
CONTAINERFILE = ROOT / "clients" / "container" / "Containerfile"
VENV = "/opt/agentd"


def instructions() -> list[tuple[str, str]]:
    """(instruction, arguments) pairs, continuation lines joined, comments dropped."""
    text = re.sub(r"\\\n", " ", CONTAINERFILE.read_text())
    pairs = []
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            keyword, _, rest = line.strip().partition(" ")
            pairs.append((keyword.upper(), rest.strip()))
    return pairs


def test_hadolint_is_clean() -> None:
    hadolint = Path(sys.executable).parent / "hadolint"
    result = subprocess.run(
        [str(hadolint), str(CONTAINERFILE)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_runs_as_a_numeric_non_root_user_with_the_tools() -> None:
    steps = instructions()
    users = [args for keyword, args in steps if keyword == "USER"]
    assert users == ["10001:10001"]
    final_stage = steps[max(i for i, (k, _) in enumerate(steps) if k == "FROM") :]
    installs = " ".join(args for keyword, args in final_stage if keyword == "RUN")
    for package in ("git", "ripgrep", "ca-certificates"):
        assert f" {package}" in installs
    env = " ".join(args for keyword, args in final_stage if keyword == "ENV")
    assert "/opt/agentd/bin" in env
    assert "XDG_DATA_HOME=/data" in env


def build_stage_pip() -> list[str]:
    """The build stage's ``pip install`` command, as written in its RUN line."""
    build = instructions()[: [k for k, _ in instructions()].index("FROM", 1)]
    for keyword, args in build:
        for command in args.split("&&") if keyword == "RUN" else ():
            words = shlex.split(command)
            if words[:2] == [f"{VENV}/bin/pip", "install"]:
                return words
    raise AssertionError("no pip install in the build stage")


def test_the_build_stage_installs_the_locked_versions() -> None:
    """As ``make`` does: the build stage copies requirements.lock and installs under it."""
    copied = [args.split()[:-1] for keyword, args in instructions() if keyword == "COPY"]
    assert any("requirements.lock" in sources for sources in copied)
    words = build_stage_pip()
    assert words[words.index("-c") + 1] == "requirements.lock"
    assert words[-1] == "."


@pytest.mark.e2e
def test_the_build_stage_installs_from_the_copied_files(tmp_path: Path) -> None:
    """Copy what the build stage copies, run its pip install (here with pip's cache, and the
    same constraints), then the installed agentctl."""
    context = tmp_path / "src"
    context.mkdir()
    for keyword, args in instructions():
        if keyword == "COPY" and not args.startswith("--from"):
            *sources, _ = args.split()
            for source in sources:
                origin = ROOT / source
                if origin.is_dir():
                    shutil.copytree(origin, context / source, ignore=_build_junk)
                else:
                    shutil.copy2(origin, context / source)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "pip"), *build_stage_pip()[1:], "--quiet"]
    pip.remove("--no-cache-dir")  # the image keeps no cache; the test may use the warm one
    pip.append("--no-compile")  # the image compiles bytecode; the test needs none to run agentctl
    subprocess.run(pip, cwd=context, check=True, timeout=scaled(300))
    version = subprocess.run(
        [str(venv / "bin" / "agentctl"), "--version"], capture_output=True, text=True, check=True
    )
    assert version.stdout.strip()


def _build_junk(_: str, names: list[str]) -> set[str]:
    return {
        n for n in names if n in ("__pycache__", "node_modules", ".venv") or n.endswith(".egg-info")
    }
