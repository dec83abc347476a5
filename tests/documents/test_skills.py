"""Agent Skills: discovery in the user's and the project's folders (trust, clashes, bad front
matter), the front matter other agents write, the ``skill`` tool (progressive loading, files,
``allowed-tools`` narrowing a run) and the listing's size cap."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentd.config.skill_frontmatter import FrontMatterError, parse, split
from agentd.config.skills import discover
from agentd.protocol.document_details import SkillDetails
from agentd.protocol.trust_list import add_trusted
from agentd.tools import build_tools, run_tool, tool_spec
from agentd.tools.base import ToolContext, ToolResult
from agentd.tools.defaults import ToolSettings
from agentd.tools.skill import MAX_LISTING, SkillTool
from tests.documents.skillfolders import CHANGELOG_SKILL, PDF_SKILL, REVIEW_SKILL, write_skill
from tests.tools.conftest import call, text_of


async def load(ctx: ToolContext, name: str) -> ToolResult:
    """A ``skill`` call as the loop runs it (``call`` takes the tool's name as ``name``)."""
    return await run_tool(build_tools(["skill"])["skill"], {"name": name}, ctx)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "home").mkdir()
    return {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "home" / ".config")}


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    (project / "src").mkdir()
    return project


def test_front_matter_of_other_agents_skills() -> None:
    lines, body = split(PDF_SKILL)
    fields = parse(lines)
    assert fields["name"] == "pdf-forms"
    assert fields["description"] == (
        "Fill in PDF forms and extract their fields. Use when the user mentions PDF forms.\n"
    )
    assert fields["allowed-tools"] == "Read Bash(python3:*)"
    assert fields["metadata"] == {"author": "example", "version": "1.2"}
    assert body.startswith("# PDF forms")
    changelog = parse(split(CHANGELOG_SKILL)[0])
    assert changelog["allowed-tools"] == ["Read", "Grep", "Bash(git log:*)"]
    assert changelog["description"] == "Write release notes from the git log: one line per change."
    review = parse(split(REVIEW_SKILL)[0])
    assert review["description"] == "Review a diff for bugs; it's read-only."
    assert parse(["tags: [a, b]", "# comment", ""]) == {"tags": ["a", "b"]}
    with pytest.raises(FrontMatterError, match="expected `key: value`"):
        parse(["name pdf"])
    with pytest.raises(FrontMatterError, match="no closing"):
        split("---\nname: x\n")


def test_user_and_trusted_project_skills(tmp_path: Path, env: dict[str, str]) -> None:
    project = _project(tmp_path)
    user = Path(env["XDG_CONFIG_HOME"]) / "agentd" / "skills"
    write_skill(user, "pdf-forms", PDF_SKILL)
    write_skill(Path(env["HOME"]) / ".agents" / "skills", "code-review", REVIEW_SKILL)
    write_skill(project / ".agents" / "skills", "changelog", CHANGELOG_SKILL)
    clash = PDF_SKILL.replace("Fill in PDF forms", "The project's PDF forms")
    write_skill(project / ".agentd" / "skills", "pdf-forms", clash)
    add_trusted(project, env)
    skills, warnings = discover(project / "src", env)
    by_name = {skill.name: skill for skill in skills}
    assert sorted(by_name) == ["changelog", "code-review", "pdf-forms"]
    assert by_name["pdf-forms"].source == "project"
    assert by_name["pdf-forms"].description.startswith("The project's PDF forms")
    assert by_name["code-review"].source == "user"
    assert by_name["changelog"].allowed_tools == ["Read", "Grep", "Bash(git log:*)"]
    assert by_name["pdf-forms"].allowed_tools == ["Read", "Bash(python3:*)"]
    (clash_warning,) = warnings
    assert "project skill 'pdf-forms'" in clash_warning
    assert "instead of the user's" in clash_warning


def test_untrusted_project_skills_are_not_used(tmp_path: Path, env: dict[str, str]) -> None:
    project = _project(tmp_path)
    write_skill(project / ".agentd" / "skills", "changelog", CHANGELOG_SKILL)
    skills, warnings = discover(project, env)
    assert skills == []
    (warning,) = warnings
    assert "not trusted" in warning
    assert f"agentctl trust {project}" in warning


def test_bad_front_matter_is_skipped_with_a_warning(tmp_path: Path, env: dict[str, str]) -> None:
    user = Path(env["XDG_CONFIG_HOME"]) / "agentd" / "skills"
    write_skill(user, "no-front", "# just text\n")
    write_skill(user, "no-name", "---\ndescription: x\n---\nbody\n")
    write_skill(user, "bad-name", "---\nname: Bad_Name\ndescription: x\n---\n")
    write_skill(user, "good", "---\nname: good\ndescription: fine\n---\n")
    (user / "not-a-skill").mkdir()
    skills, warnings = discover(tmp_path, env)
    assert [skill.name for skill in skills] == ["good"]
    assert len(warnings) == 3
    text = "\n".join(warnings)
    assert f"skill {user / 'no-front' / 'SKILL.md'} skipped: it does not start with" in text
    assert f"{user / 'no-name' / 'SKILL.md'} skipped: `name` is missing" in text
    assert "`name` 'Bad_Name' must be lowercase" in text


async def test_skill_loads_its_body_and_lists_its_files(
    tmp_path: Path, env: dict[str, str]
) -> None:
    user = Path(env["XDG_CONFIG_HOME"]) / "agentd" / "skills"
    folder = write_skill(
        user, "pdf-forms", PDF_SKILL,
        {"scripts/fields.py": "#!/usr/bin/env python3\nprint('fields')\n",
         "references/forms.md": "# Forms\n"},
    )  # fmt: skip
    skills, _ = discover(tmp_path, env)
    ctx = ToolContext(cwd=tmp_path, settings=ToolSettings(skills=skills))
    spec = tool_spec(SkillTool, ctx.settings)
    assert "- pdf-forms: Fill in PDF forms and extract their fields." in spec.description
    assert "SECRET-BODY-MARKER" not in spec.description  # only loaded on demand
    result = await load(ctx, "pdf-forms")
    text = text_of(result)
    assert text.startswith(f"Skill pdf-forms (user), folder {folder}\n\n# PDF forms")
    assert "SECRET-BODY-MARKER" in text
    assert "- references/forms.md\n- scripts/fields.py" in text
    assert "name: pdf-forms" not in text  # the front matter is not repeated
    details = result.details
    assert isinstance(details, SkillDetails)
    assert (details.name, details.source, details.path) == ("pdf-forms", "user", str(folder))
    assert details.allowed_tools == ["bash", "read", "skill"]
    missing = await load(ctx, "nope")
    assert text_of(missing) == "No skill named 'nope'. Skills: pdf-forms."


async def test_allowed_tools_narrow_the_run(tmp_path: Path, env: dict[str, str]) -> None:
    user = Path(env["XDG_CONFIG_HOME"]) / "agentd" / "skills"
    write_skill(user, "changelog", CHANGELOG_SKILL)
    write_skill(user, "code-review", REVIEW_SKILL)
    skills, _ = discover(tmp_path, env)
    ctx = ToolContext(cwd=tmp_path, settings=ToolSettings(skills=skills))
    (tmp_path / "a.txt").write_text("a\n")
    await load(ctx, "changelog")
    assert not (await call("read", ctx, path="a.txt")).is_error
    refused = await call("write", ctx, path="b.txt", content="x")
    assert refused.is_error
    assert text_of(refused) == (
        "write is not among the tools the skill 'changelog' allows (bash, grep, read, "
        "skill); while following it use only those."
    )
    assert not (tmp_path / "b.txt").exists()
    await load(ctx, "code-review")  # no allowed-tools: no narrowing
    assert not (await call("write", ctx, path="b.txt", content="x")).is_error


def test_two_hundred_skills_fit_the_listing_cap(tmp_path: Path, env: dict[str, str]) -> None:
    user = Path(env["XDG_CONFIG_HOME"]) / "agentd" / "skills"
    for number in range(200):
        text = f"---\nname: skill-{number:03d}\ndescription: {'Does a thing well. ' * 20}\n---\n"
        write_skill(user, f"skill-{number:03d}", text)
    skills, warnings = discover(tmp_path, env)
    assert len(skills) == 200
    assert warnings == []
    spec = tool_spec(SkillTool, ToolSettings(skills=skills))
    listed = spec.description.split("Skills:\n", 1)[1]
    assert len(listed.encode()) <= MAX_LISTING
    assert "- skill-000: Does a thing well." in listed
