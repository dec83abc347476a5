"""A session's custom commands (:mod:`agentd.config.commands`): listing them, and turning a
``/NAME arguments`` prompt into the run it stands for.

The command files are read again on every ``session/commands`` and every ``/NAME`` prompt
(a few small files: cheaper than watching them), so an edit counts from the next call. A
problem with the files (an untrusted project's commands, an invalid file) is a
``session_warning`` once per session: at ``session/new``/``session/load`` in the session's
load warnings, later live when it first appears.

A command's ``model`` applies to the run it starts only: it is the run request's model
(:class:`~agentd.agent.run.RunRequest`), bound like the session's (same base URL when the
command names the session's provider); no ``model_change`` entry is written, the run's
replies record the model that wrote them, and ``session/state`` reports it while it runs.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from agentd.config.commands import CommandScan, expand, load_commands, parse_invocation
from agentd.errors import InvalidParams, SessionNotFound
from agentd.protocol.commands import CommandInfo, SessionCommandsParams, SessionCommandsResult
from agentd.protocol.events import SessionWarning
from agentd.protocol.session_file import SessionHeader
from agentd.store.tree import LoadWarning

if TYPE_CHECKING:
    from agentd.agent.run import ModelBinding
    from agentd.session.manager import SessionManager
    from agentd.session.runtime import SessionRuntime
    from agentd.session.shared import SharedResources


class UnknownCommand(InvalidParams):
    """``/name`` names no command of the session (``data``: the name and the known ones)."""


class PreparedPrompt(msgspec.Struct):
    """What a prompt becomes: the text the model reads, the command the user typed (None for
    an ordinary prompt) and the model of its run (None: the session's)."""

    text: str
    command: str | None = None
    model: ModelBinding | None = None


async def scan_commands(runtime: SessionRuntime, *, loading: bool = False) -> CommandScan:
    """Read the session's command files; report warnings it has not reported yet (``loading``:
    as load warnings of a session being opened, else as live ``session_warning`` events)."""
    scan = await asyncio.to_thread(load_commands, Path(runtime.settings.cwd))
    known = {warning.message for warning in runtime.file.warnings}
    for text in scan.warnings:
        if text in known:
            continue
        runtime.file.warnings.append(LoadWarning(line=None, message=text))
        if not loading:
            runtime.emit(SessionWarning(message=text))
    return scan


async def list_commands(
    sessions: SessionManager, params: SessionCommandsParams
) -> SessionCommandsResult:
    """``session/commands``: the custom commands of a session (or of a new one in ``cwd``),
    read from their files now. A session that is not loaded is not loaded for this (its file's
    header gives the cwd), so a client that polls keeps none in memory."""
    if (params.session_id is None) == (params.cwd is None):
        raise InvalidParams("give exactly one of `sessionId` and `cwd`")
    if params.session_id is None:
        return listing(await scan_cwd(params.cwd or ""))
    runtime = sessions.loaded.get(params.session_id)
    if runtime is not None:
        return listing(await scan_commands(runtime))
    return listing(await scan_stored(sessions.find_path(params.session_id)))


async def scan_stored(path: Path) -> CommandScan:
    """The commands of the stored session in ``path`` (its header names its cwd), without
    loading it; SessionNotFound when the file has no readable header."""
    return await asyncio.to_thread(lambda: load_commands(Path(_stored_cwd(path))))


async def scan_cwd(cwd: str) -> CommandScan:
    """The commands a new session in ``cwd`` would have (InvalidParams unless ``cwd`` is an
    absolute path to a directory)."""
    folder = Path(cwd)
    if not folder.is_absolute() or not folder.is_dir():
        raise InvalidParams(f"`cwd` must be an absolute path to a directory: {cwd!r}")
    return await asyncio.to_thread(load_commands, folder)


def _stored_cwd(path: Path) -> str:
    try:
        with path.open("rb") as file:
            return msgspec.json.decode(file.readline(), type=SessionHeader).cwd
    except (OSError, msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise SessionNotFound(f"cannot read the session file {path}: {exc}") from None


def listing(scan: CommandScan) -> SessionCommandsResult:
    """``session/commands``' answer for ``scan``."""
    commands = [
        CommandInfo(
            name=c.name,
            description=c.description,
            argument_hint=c.argument_hint,
            source=c.source,
        )
        for c in scan.commands.values()
    ]
    return SessionCommandsResult(commands=commands, warnings=list(scan.warnings))


async def prepare_prompt(
    shared: SharedResources, runtime: SessionRuntime, text: str
) -> PreparedPrompt:
    """``text`` as the run sees it: a ``/NAME arguments`` prompt expanded (UnknownCommand when
    the session has no such command; ConfigError when its model cannot be used), anything
    else unchanged."""
    invocation = parse_invocation(text)
    if invocation is None:
        return PreparedPrompt(text=text)
    scan = await scan_commands(runtime)
    command = scan.commands.get(invocation.name)
    if command is None:
        raise _unknown(invocation.name, scan)
    try:
        expanded = expand(command, invocation.arguments)
    except ValueError as exc:
        raise InvalidParams(str(exc)) from None
    model = await _run_model(shared, runtime, command.model) if command.model else None
    return PreparedPrompt(text=expanded, command=text.strip(), model=model)


def _unknown(name: str, scan: CommandScan) -> UnknownCommand:
    names = [f"/{known}" for known in scan.commands]
    listed = ", ".join(names) if names else "none"
    return UnknownCommand(
        f"unknown command /{name}; this session's commands: {listed}. To send a prompt that "
        "starts with '/', begin it with a space.",
        data={"command": name, "commands": list(scan.commands)},
    )


async def _run_model(shared: SharedResources, runtime: SessionRuntime, spec: str) -> ModelBinding:
    """The model a command names (``model``: on the session's provider; ``provider/model``:
    the first ``/`` separates), bound as ``session/setModel`` would bind it."""
    from agentd.session.binding import bind_model

    provider, _, model = spec.partition("/")
    if not model:
        provider, model = runtime.agent.provider.name, spec
    settings = runtime.settings
    base_url = settings.base_url if provider == runtime.agent.provider.name else None
    cwd = Path(settings.cwd)
    return await bind_model(shared, cwd, provider, model, base_url, settings.provider_env)
