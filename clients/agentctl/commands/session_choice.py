"""Which session a prompt of ``send`` or ``chat`` goes to: a new one, ``--session ID``, the
latest of the working directory (``--continue``) or a fork (``--fork ID``); the settings an
existing session keeps (warned about when given), and the terminal offer to trust a project
whose untrusted file left something out.
"""

from __future__ import annotations

import asyncio
import sys

from agentctl.common import UsageError, stdin_is_tty, warn
from agentctl.events import SessionClient
from agentctl.options import SessionOptions
from agentd.errors import ConfigError
from agentd.protocol.methods import (
    SessionDeleteParams,
    SessionForkParams,
    SessionInfo,
    SessionListParams,
    SessionLoadParams,
    SessionNewParams,
    SessionRenameParams,
    SetModelParams,
)


def fixed_at_creation(options: SessionOptions) -> dict[str, object]:
    """The session settings fixed when a session is created, by flag name (``--max-turns``
    applies per run, so it is not here)."""
    return {
        "system-prompt": options.system_prompt,
        "permission": options.permission,
        "base-url": options.base_url,
    }


def check_session_flags(options: SessionOptions) -> None:
    """At most one of ``--session``, ``--continue`` and ``--fork``."""
    chosen = [
        flag
        for flag, value in (
            ("--session", options.session),
            ("--continue", options.continue_),
            ("--fork", options.fork),
        )
        if value
    ]
    if len(chosen) > 1:
        raise UsageError(f"{' and '.join(chosen)} cannot be combined")


async def select_session(
    client: SessionClient, options: SessionOptions, cwd: str, system_prompt: str | None
) -> SessionInfo:
    """Open the session the flags name: fork, explicit id, the latest in cwd, or a new one."""
    fork = options.fork
    target = options.session
    if options.continue_:
        page = await client.sessions.list(SessionListParams(cwd=cwd, limit=1))
        if not page.sessions:
            raise UsageError(f"no session to continue in {cwd}")
        target = page.sessions[0].session_id
    if fork is None and target is None:
        try:
            info = await _new(client, options, cwd, system_prompt)
        except ConfigError as exc:  # e.g. no provider, but an untrusted project file has one
            untrusted = exc.data.get("untrustedConfig") if isinstance(exc.data, dict) else None
            if not (isinstance(untrusted, str) and stdin_is_tty()):
                raise
            sys.stderr.write(f"agentctl: {exc.message}\n")
            if not await _offered_trust_file(untrusted):
                raise
            info = await _new(client, options, cwd, system_prompt)
        for text in info.warnings:
            warn(text)
        if info.untrusted_config and stdin_is_tty() and await _offered_trust(info):
            unused = SessionDeleteParams(session_id=info.session_id, force=True)
            await client.sessions.delete(unused)
            info = await _new(client, options, cwd, system_prompt)
        return info
    if fork is not None:
        info = await client.sessions.fork(SessionForkParams(session_id=fork))
    else:
        info = (await client.sessions.load(SessionLoadParams(session_id=target))).session
    return await _adjust_existing(client, options, info)


async def _new(
    client: SessionClient, options: SessionOptions, cwd: str, system_prompt: str | None
) -> SessionInfo:
    params = SessionNewParams(
        cwd=cwd,
        provider=options.provider,
        model=options.model,
        system_prompt=system_prompt,
        permission_mode=options.permission,
        sandbox=options.sandbox,
        title=options.title,
        max_turns=options.max_turns,
        base_url=options.base_url,
    )
    return await client.sessions.create(params)


async def _offered_trust(info: SessionInfo) -> bool:
    """The terminal question about an untrusted project file (:mod:`agentctl.commands.trust`)."""
    assert info.untrusted_config is not None
    return await _offered_trust_file(info.untrusted_config)


async def _offered_trust_file(path: str) -> bool:
    from agentctl.commands.trust import offer_trust

    return await asyncio.to_thread(offer_trust, path, sys.stdin, sys.stderr)


async def _adjust_existing(
    client: SessionClient, options: SessionOptions, info: SessionInfo
) -> SessionInfo:
    ignored = [name for name, value in fixed_at_creation(options).items() if value]
    if ignored:
        flags = ", ".join("--" + name for name in ignored)
        warn(f"{flags} ignored: they apply to new sessions only")
    if options.title:
        title = SessionRenameParams(session_id=info.session_id, title=options.title)
        await client.sessions.rename(title)
    if options.model or options.provider:
        model = options.model or info.model
        params = SetModelParams(session_id=info.session_id, model=model, provider=options.provider)
        info = await client.sessions.set_model(params)
    return info
