"""Where hooks may come from and what they may touch: an untrusted project's hooks never run
(a session_warning names them); a trusted project's do; every hook gets the bash tool's
filtered environment and, under ``sandbox = "workspace"``, its confinement."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentd.api.subscriber import QueueSubscriber
from agentd.hardening import landlock_abi
from agentd.protocol.events import HookResult, SessionWarning
from agentd.protocol.methods import PromptParams, SessionNewParams
from agentd.protocol.trust_list import add_trusted
from agentd.session.service import SessionService
from agentd.tools.process import mountns
from tests.hooks.conftest import hook, script, until_end, user_hooks

PROJECT_HOOK = '[[hooks.pre_tool]]\ncommand = "touch ran-project-hook"\n'


async def _prompt(service: SessionService, project: Path, text: str) -> list[object]:
    queue = QueueSubscriber()
    info = await service.create(SessionNewParams(cwd=str(project), provider="mock"), queue)
    await service.prompt(PromptParams(session_id=info.session_id, text=text))
    return await until_end(queue)


async def test_an_untrusted_projects_hooks_never_run(
    service: SessionService, project: Path
) -> None:
    (project / ".git").mkdir()
    (project / ".agentd.toml").write_text(PROJECT_HOOK)
    seen = await _prompt(service, project, "list the files")
    assert (project / "out.txt").exists()  # the call ran
    assert not (project / "ran-project-hook").exists()
    assert not [e for e in seen if isinstance(e, HookResult)]
    warnings = [e.message for e in seen if isinstance(e, SessionWarning)]
    assert any("hooks do not run: pre_tool `touch ran-project-hook`" in w for w in warnings)


async def test_a_trusted_projects_hooks_run(
    service: SessionService, project: Path, xdg_home: Path
) -> None:
    (project / ".git").mkdir()
    (project / ".agentd.toml").write_text(PROJECT_HOOK)
    add_trusted(project, {"XDG_CONFIG_HOME": str(xdg_home / "con"), "HOME": str(xdg_home)})
    seen = await _prompt(service, project, "list the files")
    assert (project / "ran-project-hook").exists()
    assert [e.command for e in seen if isinstance(e, HookResult)] == ["touch ran-project-hook"]


async def test_a_hook_gets_the_filtered_environment(
    service: SessionService, project: Path, xdg_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Credentials in the daemon's environment never reach a hook; PATH and HOME do."""
    monkeypatch.setenv("DEPLOY_API_KEY", "sk-very-secret-value")
    monkeypatch.setenv("DATABASE_URL", "postgres://u:p@db/x")
    dump = script(xdg_home, "env.sh", f"env > {xdg_home / 'hook-env.txt'}\n")
    user_hooks(xdg_home, hook("user_prompt", str(dump)))
    await _prompt(service, project, "how are you")
    seen = (xdg_home / "hook-env.txt").read_text()
    assert "PATH=" in seen
    assert "sk-very-secret-value" not in seen
    assert "DATABASE_URL" not in seen


sandboxed = pytest.mark.skipif(
    not mountns.available() and landlock_abi() == 0,
    reason="neither bubblewrap nor Landlock can confine commands here",
)


@sandboxed
async def test_hooks_run_under_the_workspace_sandbox(
    service: SessionService, project: Path, xdg_home: Path
) -> None:
    """Under ``sandbox = "workspace"`` a hook writes in the workspace, not outside it."""
    outside = xdg_home / "outside.txt"
    body = (
        f"echo inside > hook-inside.txt\n"
        f"if echo outside > {outside} 2>/dev/null; then w=yes; else w=no; fi\n"
        f'echo "{{\\"additionalContext\\": \\"outside write: $w\\"}}"\n'
    )
    probe = script(project, "probe.sh", body)
    user_hooks(xdg_home, hook("pre_tool", str(probe)), extra='sandbox = "workspace"\n')
    seen = await _prompt(service, project, "list the files")
    [result] = [e for e in seen if isinstance(e, HookResult)]
    assert result.decision == "allow", result.reason
    assert (project / "hook-inside.txt").read_text() == "inside\n"
    assert not outside.exists()


@sandboxed
async def test_without_the_sandbox_a_hook_writes_anywhere(
    service: SessionService, project: Path, xdg_home: Path
) -> None:
    """The same probe without the sandbox: the contrast that makes the test above mean it."""
    outside = xdg_home / "outside.txt"
    probe = script(project, "probe.sh", f"echo outside > {outside}\n")
    user_hooks(xdg_home, hook("pre_tool", str(probe)))
    await _prompt(service, project, "list the files")
    assert json.dumps(outside.read_text()) == '"outside\\n"'
