"""The parts of a session runtime that come from its configuration: the permission mode and
policy, the tools' context (what is fixed for the session, and the ports its tools call), the
hooks, the compaction settings and the session's warnings. Each is built once, from values,
by :mod:`agentd.session.factory`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from agentd.config.agents import load_profiles
from agentd.config.project_rules import project_rules, save_project_rules
from agentd.errors import InvalidParams
from agentd.hardening import landlock_abi
from agentd.paths import config_dir
from agentd.permissions.policy import PermissionPolicy, unsandboxed_auto
from agentd.session.compaction import CompactionSettings
from agentd.session.knowledge import web_search_settings
from agentd.session.shared import process_registry, spill_root
from agentd.tools.base import ToolContext, ToolPorts
from agentd.tools.settings import render_profiles, tool_settings

if TYPE_CHECKING:
    from agentd.agent.run import ModelBinding
    from agentd.config.load import Config
    from agentd.hooks.session import SessionHooks
    from agentd.protocol.events import Event
    from agentd.protocol.methods import SessionNewParams
    from agentd.protocol.skills import SkillInfo
    from agentd.session.settings import HooksMaker
    from agentd.session.shared import SharedResources
    from agentd.tools.defaults import ToolSettings


class ToolEnvironment(msgspec.Struct, frozen=True):
    """What is fixed for a session's tools: where they run, the sandbox root, the spill
    folder, the session's redaction and limits (:class:`~agentd.tools.defaults.ToolSettings`)."""

    cwd: Path
    session_id: str
    workspace: Path | None
    spill_dir: Path
    redact: Callable[[str], str]
    settings: ToolSettings


def permission_policy(
    config: Config, mode: str, cwd: Path, *, sandboxed: bool, config_file: Path | None
) -> PermissionPolicy:
    """The ``[permissions]`` policy in ``mode``: ``sandboxed`` (``sandbox = "workspace"``)
    confines the file tools to ``cwd``. The user's ``[[project_rules]]`` of the session's
    folder come after ``[permissions]``' rules; an "always in this project" answer appends
    to the user's ``config_file`` (default: ``$XDG_CONFIG_HOME/agentd/config.toml``)."""
    section = config.settings.permissions
    allow, deny = project_rules(config.settings, cwd)
    user_file = config_file or config_dir() / "config.toml"
    return PermissionPolicy(
        mode,
        [*section.allow, *allow],
        [*section.deny, *deny],
        workspace=cwd if sandboxed else None,
        cwd=cwd,
        allow_dangerous=section.allow_dangerous,
        allow_auto_without_sandbox=section.allow_auto_without_sandbox,
        keep_in_project=partial(save_project_rules, user_file, cwd),
        config_file=user_file,
    )


def tool_environment(
    shared: SharedResources,
    config: Config,
    policy: PermissionPolicy,
    ids: tuple[str, Callable[[str], str]],
    profiles: str | None,
    skills: list[SkillInfo],
) -> ToolEnvironment:
    """The ``[tools]`` settings with the credential names bash must not see, the policy, the
    process registry, (``profiles``, for the ``task`` tool) the agent profiles offered, the
    ``web_search`` backend and the ``skills`` the session can load; ``ids``: the session's id
    and its redaction."""
    settings = tool_settings(config.settings.tools)
    extra: dict[str, object] = {} if profiles is None else {"agent_profiles": profiles}
    settings = msgspec.structs.replace(
        settings,
        secret_env=sorted({*shared.secret_names(), *settings.secret_env}),
        permission_policy=policy,
        process_registry=process_registry(),
        web_search=web_search_settings(config),
        skills=skills,
        **extra,
    )
    session_id, redact = ids
    spill = spill_root() / session_id
    return ToolEnvironment(policy.cwd, session_id, policy.workspace, spill, redact, settings)


def tool_context(env: ToolEnvironment, ports: ToolPorts, state: dict[str, object]) -> ToolContext:
    """The context every tool call of the session gets: ``env``, ``ports`` and the tools'
    own ``state``."""
    return ToolContext(
        cwd=env.cwd,
        session_id=env.session_id,
        workspace=env.workspace,
        spill_dir=env.spill_dir,
        redact=env.redact,
        settings=env.settings,
        state=state,
        ports=ports,
    )


def project_files(cwd: Path, task: bool) -> tuple[str, tuple[str, list[str]] | None]:
    """What a session reads of its project (run it in a worker thread: these are files a
    repository controls): the context files' text (AGENTS.md…) and, with the ``task`` tool
    (``task``), the agent profiles it offers (its description's list) and warnings about
    skipped profile files."""
    from agentd.agent.prompt import project_context

    context = project_context(cwd)
    if not task:
        return context, None
    profiles, skipped = load_profiles(cwd)
    return context, (render_profiles([(p.name, p.description) for p in profiles.values()]), skipped)


def hooks_maker(config: Config, context: ToolContext, cwd: Path) -> HooksMaker | None:
    """The ``[hooks]`` of the configuration (the user's, and a trusted project's), made around
    the session's sink; None without any, so that nothing of :mod:`agentd.hooks` is imported."""
    settings = config.settings.hooks
    if not any(getattr(settings, event) for event in settings.__struct_fields__):
        return None

    def make(emit: Callable[[Event], None]) -> SessionHooks | None:
        from agentd.hooks.session import session_hooks

        return session_hooks(settings, context, cwd, emit)

    return make


def sandbox_warnings(sandbox: str, tools: Collection[str]) -> list[str]:
    """Under the workspace sandbox with bash: that bubblewrap cannot confine it, and then
    that Landlock cannot either (bash runs unconfined)."""
    if sandbox != "workspace" or "bash" not in tools:
        return []
    from agentd.tools.process.landlock import unconfined_warning
    from agentd.tools.process.mountns import unprotected_warning

    protected = unprotected_warning()  # bubblewrap confines bash on its own
    texts = [protected] if protected else []
    return texts + [text for text in [unconfined_warning(landlock_abi())] if text and protected]


def compaction_settings(config: Config, binding: ModelBinding | None) -> CompactionSettings:
    """The ``[compaction]`` section: ``keep_tokens``, ``reserve_tokens``, ``context_window``."""
    section = config.settings.compaction
    return CompactionSettings(
        context_window=section.context_window or (binding.context_window if binding else None),
        keep_tokens=section.keep_tokens,
        reserve_tokens=section.reserve_tokens,
    )


def probe_sandbox() -> None:
    """bubblewrap's one probe run per daemon (:func:`agentd.tools.process.mountns.available`),
    in a worker thread, before the session's warnings and bash calls read its answer."""
    from agentd.tools.process import mountns

    mountns.available()


def permission_mode(
    params: SessionNewParams,
    config: Config,
    sandbox: str,
    *,
    loaded: bool,
    config_file: Path | None = None,
) -> tuple[str, str | None]:
    """The session's permission mode (default ``ask``) and a warning when ``auto`` could not
    apply: ``auto`` needs the workspace sandbox unless the configuration opts in
    (:func:`~agentd.permissions.policy.unsandboxed_auto`). A client asking for it gets
    InvalidParams; from the configuration, or a session saved before, it becomes ``ask``.
    ``config_file`` is the user's (the daemon's ``--config``), named in the message."""
    mode = params.permission_mode or config.permission_mode or "ask"
    allowed = config.settings.permissions.allow_auto_without_sandbox
    problem = unsandboxed_auto(
        mode, sandboxed=sandbox == "workspace", allowed=allowed, config_file=config_file
    )
    if problem is None:
        return mode, None
    if params.permission_mode is not None and not loaded:
        raise InvalidParams(problem)
    return (
        "ask",
        f"This session asks before mutating tools instead of running in auto mode: {problem}",
    )
