"""Helpers shared by the commands: opening the client, reporting errors, running coroutines.

Every command reports failures as one line on stderr (``agentctl: …``) and an exit code from
:mod:`agentctl.run.outcome`; no traceback reaches the user for expected failures (daemon not
reachable, RPC errors, bad input).
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import msgspec

from agentctl.client import (
    AgentClient,
    DaemonUnavailable,
    PermissionHandler,
    QuestionHandler,
    connect,
    spawn_stdio,
)
from agentctl.events import SessionClient
from agentctl.launch import private_log
from agentctl.options import CommandOptions
from agentctl.render.style import Style, wants_color
from agentctl.render.wording import cli_words
from agentctl.run import outcome
from agentd.errors import RpcError
from agentd.protocol.controls import escape_controls
from agentd.protocol.methods import SessionListParams

T = TypeVar("T")


class UsageError(Exception):
    """The command line or its inputs are wrong (exit code 2)."""


def error(message: str) -> None:
    """Print ``agentctl: message`` to stderr, red on a terminal; its control characters
    escaped (the daemon's errors quote what the model sent)."""
    style = Style(wants_color(sys.stderr))
    sys.stderr.write(style.red(f"agentctl: {escape_controls(message)}") + "\n")
    sys.stderr.flush()


def warn(message: str) -> None:
    """Print a warning to stderr, yellow on a terminal; control characters escaped."""
    style = Style(wants_color(sys.stderr))
    sys.stderr.write(style.yellow(f"agentctl: {escape_controls(message)}") + "\n")
    sys.stderr.flush()


def exit_code_for_exception(exc: BaseException) -> int:
    """The exit code for an error raised by a command (and print it)."""
    if isinstance(exc, UsageError):
        error(str(exc))
        return outcome.USAGE_ERROR
    if isinstance(exc, RpcError):
        error(cli_words(exc.message))
        return outcome.exit_code_for_rpc_error(exc.code)
    if isinstance(exc, DaemonUnavailable | OSError):
        error(str(exc))
        return outcome.AGENT_ERROR
    raise exc


def run_command(main: Callable[[], Awaitable[int]]) -> int:
    """Run an async command body; map expected failures to messages and exit codes.

    A closed stdout (``agentctl … | head -1``) ends the command quietly with exit code 141,
    as if killed by SIGPIPE; a run it was following is not cancelled.
    """
    try:
        return asyncio.run(_guarded(main))
    except KeyboardInterrupt:
        return outcome.INTERRUPTED
    except BrokenPipeError:
        return output_closed()


def output_closed() -> int:
    """Point stdout at /dev/null (so the exit flush stays silent) and return 141."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return outcome.OUTPUT_CLOSED


async def _guarded(main: Callable[[], Awaitable[int]]) -> int:
    try:
        return await main()
    except BrokenPipeError:
        raise
    except (UsageError, RpcError, DaemonUnavailable, OSError) as exc:
        return exit_code_for_exception(exc)


def socket_option(options: CommandOptions) -> str | None:
    """The ``--socket`` value, wherever it was given on the command line."""
    return options.socket


async def open_client(
    options: CommandOptions,
    *,
    autostart: bool = True,
    permission_handler: PermissionHandler | None = None,
    cwd: str | None = None,
    question_handler: QuestionHandler | None = None,
) -> AgentClient:
    """The client the options ask for: a private ``--stdio`` daemon or the shared one."""
    if options.stdio:
        return await spawn_stdio(
            cwd=cwd,
            log_path=private_log(),
            permission_handler=permission_handler,
            question_handler=question_handler,
        )
    return await connect(
        socket_option(options),
        autostart=autostart,
        permission_handler=permission_handler,
        question_handler=question_handler,
    )


def resolve_cwd(value: str | None) -> str:
    """The absolute working directory (``--cwd`` or the current one); it must exist."""
    path = Path(value).expanduser() if value else Path.cwd()
    if not path.is_dir():
        raise UsageError(f"--cwd {value}: not a directory")
    return str(path.resolve())


def read_text_option(value: str | None, flag: str) -> str | None:
    """``TEXT`` as given, or the contents of ``FILE`` for ``@FILE``."""
    if value is None or not value.startswith("@"):
        return value
    path = Path(value[1:]).expanduser()
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"{flag} {value}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise UsageError(f"{flag} {value}: not UTF-8 text") from None


def stdin_is_tty() -> bool:
    """Whether stdin is an interactive terminal."""
    try:
        return os.isatty(sys.stdin.fileno())
    except (AttributeError, ValueError, OSError):
        return False


_FULL_ID = re.compile(r"[0-9a-f]{16}")
ID_OPTIONS = ("session_id", "session", "fork")
"""The options fields that hold a session id (``ID``, ``--session``, ``--fork``)."""

Options = TypeVar("Options", bound=CommandOptions)


async def resolve_session_ids(client: SessionClient, options: Options) -> Options:
    """``options`` with its short session id prefixes expanded (see
    :func:`resolve_session_id`)."""
    resolved: dict[str, str] = {}
    for name in ID_OPTIONS:
        value = getattr(options, name, None) if name in options.__struct_fields__ else None
        if isinstance(value, str) and value:
            resolved[name] = await resolve_session_id(client, value)
    return msgspec.structs.replace(options, **resolved) if resolved else options


async def resolve_session_id(client: SessionClient, text: str) -> str:
    """The stored session ``text`` names: itself when it is a full id or one session's exact
    id, else the one session whose id starts with it. Several matches are a UsageError listing
    them; none leaves ``text`` for the daemon to report as unknown."""
    if _FULL_ID.fullmatch(text):
        return text
    matches: list[str] = []
    cursor: str | None = None
    while True:
        page = await client.sessions.list(SessionListParams(limit=500, cursor=cursor))
        for item in page.sessions:
            if item.session_id == text:
                return text
            if item.session_id.startswith(text):
                matches.append(item.session_id)
        cursor = page.next_cursor
        if cursor is None:
            break
    if len(matches) > 1:
        shown = ", ".join(matches[:10]) + (" …" if len(matches) > 10 else "")
        raise UsageError(f"{text!r} matches {len(matches)} sessions: {shown}; give more of the id")
    return matches[0] if matches else text
