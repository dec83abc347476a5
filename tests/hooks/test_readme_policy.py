"""The hook policy example of docs/hooks.md, run as written: its TOML in a trusted project's
``.agentd.toml``, its scripts in ``.agentd/hooks/``."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from agentd.api.subscriber import QueueSubscriber
from agentd.protocol.content import TextContent
from agentd.protocol.events import HookResult, ToolExecutionEnd
from agentd.protocol.methods import PromptParams, SessionNewParams
from agentd.protocol.trust_list import add_trusted
from agentd.session.service import SessionService
from tests.harness import REPO
from tests.hooks.conftest import until_end

pytestmark = pytest.mark.skipif(shutil.which("jq") is None, reason="the example uses jq")


def _example() -> tuple[str, dict[str, str]]:
    """The page's TOML and its scripts by file name (from their first comment line)."""
    section = REPO.joinpath("docs", "hooks.md").read_text()
    toml = re.findall(r"```toml\n(.*?)```", section, re.S)[0]
    scripts = {}
    for body in re.findall(r"```sh\n(.*?)```", section, re.S):
        name = re.search(r"^# (\.agentd/hooks/[\w-]+)", body, re.M)
        assert name, body
        scripts[name[1]] = body
    return toml, scripts


async def test_the_readme_policy_blocks_rm_rf(
    service: SessionService, project: Path, xdg_home: Path
) -> None:
    toml, scripts = _example()
    for name, body in scripts.items():
        path = project / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body)
        path.chmod(0o755)
    (project / ".git").mkdir()
    (project / ".agentd.toml").write_text(toml)
    (project / "build").mkdir()
    add_trusted(project, {"XDG_CONFIG_HOME": str(xdg_home / "con"), "HOME": str(xdg_home)})
    queue = QueueSubscriber()
    info = await service.create(SessionNewParams(cwd=str(project), provider="mock"), queue)
    await service.prompt(PromptParams(session_id=info.session_id, text="remove everything"))
    seen = await until_end(queue)
    assert (project / "build").is_dir()
    [end] = [e for e in seen if isinstance(e, ToolExecutionEnd)]
    assert isinstance(end.result[0], TextContent)
    assert "rm -rf is not allowed in this repository" in end.result[0].text
    decisions = {(e.event, e.decision) for e in seen if isinstance(e, HookResult)}
    assert ("pre_tool", "block") in decisions
    assert any(event == "stop" for event, _ in decisions)
