"""The documentation as a reader meets it: the snippets marked runnable run as written, the
site builds offline, and its link check fails on a broken link or anchor.

A shell block preceded by the line ``<!-- runnable -->`` (in README.md or docs/) runs with
``bash -euo pipefail`` in an isolated home whose project folder has this checkout's ``.venv``,
with the built-in mock as the configured provider.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agentctl.harness import Sandbox
from tests.harness import REPO, scaled

MARKER = "<!-- runnable -->"
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
# a proxy nobody listens on: a build that fetches anything fails instead of reaching the net
OFFLINE = {"HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9"}
REMOTE_ASSET = re.compile(r"<(?:link|script|img)\b[^>]*(?:href|src)=\"(?:https?:)?//", re.I)


def runnable_snippets() -> list[tuple[str, str]]:
    """(page:line, body) of every shell block marked runnable."""
    found = []
    for page in PAGES:
        lines = page.read_text(encoding="utf-8").splitlines()
        for n, line in enumerate(lines):
            if line.strip() != MARKER:
                continue
            fence = lines[n + 1] if n + 1 < len(lines) else ""
            assert fence in ("```sh", "```bash"), f"{page.name}:{n + 1}: {MARKER} needs a sh block"
            end = lines.index("```", n + 2)
            found.append((f"{page.relative_to(REPO)}:{n + 1}", "\n".join(lines[n + 2 : end])))
    return found


SNIPPETS = runnable_snippets()


@pytest.fixture
def sandbox() -> Iterator[Sandbox]:
    """An isolated home whose project folder has this checkout's venv as ``.venv``."""
    box = Sandbox()
    box.user_config('provider = "mock"\n')
    (box.project / ".venv").symlink_to(Path(sys.prefix))
    try:
        yield box
    finally:
        box.close()


def test_the_readme_has_a_runnable_snippet() -> None:
    """The marker is in use (a renamed marker would leave the test below with nothing)."""
    assert any(where.startswith("README.md:") for where, _ in SNIPPETS)


@pytest.mark.e2e
@pytest.mark.skipif(shutil.which("jq") is None, reason="the snippets use jq")
@pytest.mark.parametrize(("where", "body"), SNIPPETS, ids=[w for w, _ in SNIPPETS])
def test_runnable_snippet_runs(sandbox: Sandbox, where: str, body: str) -> None:
    result = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", body],
        capture_output=True,
        text=True,
        env=sandbox.env,
        cwd=sandbox.project,
        timeout=scaled(120),
        check=False,
    )
    assert result.returncode == 0, (where, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr, (where, result.stderr)


def build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    """``mkdocs build --strict`` of ``config`` into ``site``, with the network out of reach."""
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", **OFFLINE)
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
        capture_output=True,
        text=True,
        env=env,
        timeout=scaled(120),
        check=False,
    )


def test_the_site_builds_offline_with_no_remote_assets(tmp_path: Path) -> None:
    """The strict build passes, and no page loads a font, style or script from elsewhere."""
    result = build(REPO / "mkdocs.yml", tmp_path / "site")
    assert result.returncode == 0, result.stderr
    pages = list((tmp_path / "site").rglob("*.html"))
    assert len(pages) > 20
    remote = [p for p in pages if REMOTE_ASSET.search(p.read_text(encoding="utf-8"))]
    assert remote == []
    assert (tmp_path / "site" / "repo" / "schemas" / "index.html").is_file()


def small_repo(root: Path, links: str) -> Path:
    """A repository with the site's hook, a README linking to docs/a.md, docs/a.md holding
    ``links``, and a package README and a source file to link to; returns its mkdocs.yml."""
    (root / "docs" / "hooks").mkdir(parents=True)
    shutil.copy(REPO / "docs" / "hooks" / "repo_links.py", root / "docs" / "hooks")
    (root / "pkg").mkdir()
    (root / "pkg" / "README.md").write_text("# pkg\n\n## Usage\n\nBack to [home](../README.md).\n")
    (root / "pkg" / "code.py").write_text("")
    (root / "README.md").write_text("# home\n\nRead [a](docs/a.md#first).\n")
    (root / "docs" / "a.md").write_text(f"# a\n\n## First\n\n{links}\n")
    config = root / "mkdocs.yml"
    text = (REPO / "mkdocs.yml").read_text(encoding="utf-8").split("\nnav:", 1)[0]
    config.write_text(text.replace("site_dir: .site", "site_dir: site"))
    return config


def test_links_resolve_across_the_repository(tmp_path: Path) -> None:
    """Links written relative to the file on disk resolve on the site: a package README (or
    its folder) becomes a page, its links back too, and a source file keeps its text only."""
    links = "[pkg](../pkg/README.md#usage), [folder](../pkg/#usage), [code](../pkg/code.py)."
    result = build(small_repo(tmp_path, links), tmp_path / "site")
    assert result.returncode == 0, result.stderr
    page = (tmp_path / "site" / "a" / "index.html").read_text(encoding="utf-8")
    assert page.count('href="../repo/pkg/#usage"') == 2
    assert "code.py" not in page
    assert ", code." in page
    home = (tmp_path / "site" / "repo" / "pkg" / "index.html").read_text(encoding="utf-8")
    assert 'href="../../">home</a>' in home


def test_a_broken_link_fails_the_build(tmp_path: Path) -> None:
    """A missing anchor, a missing file and a path out of the repository each fail it."""
    links = "[a](../pkg/README.md#nope) [b](../pkg/MISSING.md) [c](../../outside.md) [d](#gone)"
    result = build(small_repo(tmp_path, links), tmp_path / "site")
    assert result.returncode != 0
    for error in (
        "does not contain an anchor '#nope'",
        "the link ../pkg/MISSING.md names no file",
        "the link ../../outside.md leaves the repository",
        "there is no such anchor on this page",
    ):
        assert error in result.stderr
