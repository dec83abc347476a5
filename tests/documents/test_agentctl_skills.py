"""``agentctl skills list|check`` through the daemon (``--stdio``), and ``session/skills``:
what sessions here can load, where each came from, and the checks of a skill the agent
wrote (front matter, referenced files, scripts executable)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator

import pytest

from tests.documents.skillfolders import CHANGELOG_SKILL, PDF_SKILL, write_skill
from tests.harness import Home, new_session, stdio_client

pytestmark = pytest.mark.e2e


@pytest.fixture
def home() -> Iterator[Home]:
    with Home() as box:
        yield box


def agentctl(home: Home, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentctl", *args],
        env=home.env, cwd=home.project, capture_output=True, text=True, timeout=60,
        check=False,
    )  # fmt: skip


def test_list_shows_each_skill_and_its_source(home: Home) -> None:
    user = write_skill(home.config_dir / "agentd" / "skills", "changelog", CHANGELOG_SKILL)
    project = write_skill(home.project / ".agentd" / "skills", "pdf-forms", PDF_SKILL)
    write_skill(home.project / ".agents" / "skills", "broken", "no front matter\n")
    home.trust()  # trust pins .agentd/skills: trust it as planted
    listed = agentctl(home, "skills", "list", "--stdio")
    assert listed.returncode == 0, listed.stderr
    assert f"changelog  (user)  {user}\n  Write release notes" in listed.stdout
    assert f"pdf-forms  (project)  {project}\n  Fill in PDF forms" in listed.stdout
    assert "allowed tools: Read, Bash(python3:*)" in listed.stdout
    assert "warning: skill" in listed.stderr
    assert "broken/SKILL.md skipped" in listed.stderr
    as_json = json.loads(agentctl(home, "skills", "list", "--stdio", "--json").stdout)
    assert [s["name"] for s in as_json["skills"]] == ["changelog", "pdf-forms"]


def test_check_a_skill_the_agent_wrote(home: Home) -> None:
    good = write_skill(
        home.project / "new", "pdf-forms", PDF_SKILL,
        {"scripts/fields.py": "#!/bin/sh\necho ok\n", "references/forms.md": "# Forms\n"},
    )  # fmt: skip
    checked = agentctl(home, "skills", "check", str(good), "--stdio")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "ok: sessions started from now on can load it" in checked.stdout
    bad = write_skill(home.project / "new", "forms", PDF_SKILL, {"scripts/fields.py": "x\n"})
    (bad / "scripts" / "fields.py").chmod(0o644)
    failed = agentctl(home, "skills", "check", str(bad / "SKILL.md"), "--stdio")
    assert failed.returncode == 1
    assert "problem: `name` 'pdf-forms' differs from the folder's name 'forms'" in failed.stdout
    assert "problem: references/forms.md is named in SKILL.md but does not exist" in failed.stdout
    assert "problem: scripts/fields.py is not executable (chmod +x)" in failed.stdout
    empty = agentctl(home, "skills", "check", str(home.project), "--stdio")
    assert empty.returncode == 1
    assert "SKILL.md does not exist" in empty.stdout


async def test_session_skills_of_a_session(home: Home) -> None:
    write_skill(home.project / ".agentd" / "skills", "pdf-forms", PDF_SKILL)
    home.trust()  # trust pins .agentd/skills: trust it as planted
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        result = await client.call("session/skills", {"sessionId": sid})
        both = client.call("session/skills", {"sessionId": sid, "cwd": str(home.project)})
        with pytest.raises(Exception, match="exactly one"):
            await both
    assert [s["name"] for s in result["skills"]] == ["pdf-forms"]
    assert result["skills"][0]["source"] == "project"
    assert result["warnings"] == []
