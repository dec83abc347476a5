"""The registry of loaded sessions, shared by every front-end of the daemon.

Sessions live here, not in connections: a session survives the disconnect of the client that
created it, and any subscriber may watch any session. A session that is used while unloaded is
loaded implicitly from its file. This module and everything it imports (the agent, tools,
store) are imported on first session use, not at daemon start-up (see
:class:`agentd.session.service.SessionService`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from agentd.api.subscriber import Subscriber
from agentd.errors import SessionExists, SessionNotFound
from agentd.log import get_logger
from agentd.protocol.events import SessionWarning
from agentd.protocol.methods import SessionNewParams
from agentd.session.assembly import SessionLink
from agentd.session.factory import load_session, new_session
from agentd.session.idle import DEFAULT_IDLE_SECONDS, DEFAULT_MAX_LOADED, IdleUnloader
from agentd.session.mcp_setup import add_mcp_servers
from agentd.session.runtime import SessionRuntime
from agentd.session.shared import SharedResources
from agentd.session.subagents import Family, SubagentRunner
from agentd.store import find_session
from agentd.tools.base import Subagents, TaskOutcome, TaskRequest, ToolError

if TYPE_CHECKING:
    from agentd.config.load import Config
    from agentd.protocol.mcp import McpServerParam

log = get_logger("agentd.sessions")


class SessionManager:
    """Owns every loaded session of the daemon, independent of its front-ends."""

    def __init__(
        self,
        shared: SharedResources,
        *,
        idle_seconds: float = DEFAULT_IDLE_SECONDS,
        max_loaded: int = DEFAULT_MAX_LOADED,
    ) -> None:
        self.shared = shared
        self.loaded: dict[str, SessionRuntime] = {}
        self._loading: dict[str, asyncio.Future[SessionRuntime]] = {}
        self._parked: dict[str, dict[int, Subscriber]] = {}
        """Subscribers of unloaded sessions, by session id: subscribed again on reload."""
        self.idle = IdleUnloader(self, idle_seconds=idle_seconds, max_loaded=max_loaded)
        self.runners: dict[str, SubagentRunner] = {}
        """Each loaded session's subagent runner (the ``task`` tool's port looks it up)."""

    def loaded_ids(self) -> list[str]:
        """Ids of the sessions loaded in this daemon."""
        return list(self.loaded)

    async def create(
        self,
        params: SessionNewParams,
        *,
        subagent_of: tuple[str, str] | None = None,
        extra_prompt: str | None = None,
        config: Config | None = None,
        family: Family | None = None,
    ) -> SessionRuntime:
        """Open a new session (``subagent_of``: the parent session and ``task`` call of a
        subagent's session; ``extra_prompt``: added to its system prompt; ``config``: the
        parent's configuration, reused; ``family``: the parent's file locks and the child's
        depth)."""

        # A caller-chosen id is reserved before the first await, so requests for that id that
        # arrive right behind ``session/new`` (a pipelined script) wait for it, not fail.
        key = params.session_id
        if key is not None and (key in self.loaded or key in self._loading):
            raise SessionExists(f"session id {key!r} is already in use")
        runtime = await self._once(
            key,
            lambda: new_session(
                self.shared,
                params,
                self._link(family, subagent_of, extra_prompt, config),
            ),
            family,
        )
        log.info("session created", session_id=runtime.id, cwd=runtime.settings.cwd)
        return runtime

    async def get(self, session_id: str) -> SessionRuntime:
        """The loaded session, loading it from disk if it exists; SessionNotFound otherwise."""
        self.idle.touch(session_id)
        runtime = self.loaded.get(session_id)
        if runtime is not None:
            return runtime
        return await self.load(session_id=session_id)

    async def load(
        self,
        *,
        session_id: str | None = None,
        path: str | None = None,
        client_env: dict[str, str] | None = None,
        mcp_servers: list[McpServerParam] | None = None,
    ) -> SessionRuntime:
        """Load a session from its file (once, even when asked concurrently); its provider is
        resolved from ``client_env`` when given; ``mcp_servers`` join its MCP servers (a
        loaded session without any is built again with them, once idle)."""
        loaded = self.loaded.get(session_id) if session_id is not None else None
        if loaded is None and path is not None:
            loaded = self._loaded_file(Path(path))  # locked by this daemon: never open twice
        if loaded is not None and mcp_servers:
            if add_mcp_servers(self.shared, loaded, mcp_servers):
                return loaded
            loaded.run.check_idle("add MCP servers")
            await self.unload(loaded.id)
            session_id, path = loaded.id, None
        elif loaded is not None:
            return loaded
        return await self._once(
            session_id or str(path),
            lambda: load_session(
                self.shared, session_id=session_id, path=path, client_env=client_env,
                mcp_servers=mcp_servers, link=self._link(None),
            ),
        )  # fmt: skip

    def _link(
        self,
        family: Family | None,
        subagent_of: tuple[str, str] | None = None,
        extra_prompt: str | None = None,
        config: Config | None = None,
    ) -> SessionLink:
        """How a session joins this manager: its ``task`` tool's port, its family's locks and
        (a subagent's) MCP servers."""
        if family is None:
            return SessionLink(subagent_of, extra_prompt, config, None, self._subagents_port)
        return SessionLink(
            subagent_of, extra_prompt, config, family.locks, self._subagents_port,
            mcp_servers=family.mcp_servers,
        )  # fmt: skip

    def _subagents_port(self, session_id: str) -> Subagents:
        return _Runner(self.runners, session_id)

    async def _once(
        self,
        key: str | None,
        build: Callable[[], Awaitable[SessionRuntime]],
        family: Family | None = None,
    ) -> SessionRuntime:
        """Build a runtime under ``key``; concurrent callers with the same key share it."""
        if key is not None and key in self._loading:
            return await asyncio.shield(self._loading[key])
        future: asyncio.Future[SessionRuntime] = asyncio.get_running_loop().create_future()
        if key is not None:
            self._loading[key] = future
        try:
            runtime = await build()
            existing = self.loaded.get(runtime.id)
            if existing is not None:  # loaded by path while also loaded by id
                runtime.file.close()
                runtime = existing
            if runtime.id not in self.runners:
                self.runners[runtime.id] = SubagentRunner(self, runtime, family)
            self.loaded[runtime.id] = runtime
            self._resubscribe(runtime)
            self.idle.touch(runtime.id)
            future.set_result(runtime)
            return runtime
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: concurrent waiters re-raise it themselves
            raise
        finally:
            if key is not None:
                del self._loading[key]

    def _loaded_file(self, path: Path) -> SessionRuntime | None:
        for runtime in self.loaded.values():
            with contextlib.suppress(OSError):
                if runtime.file.path.samefile(path):
                    return runtime
        return None

    def watch(
        self, runtime: SessionRuntime, subscriber: Subscriber, since_seq: int | None = None
    ) -> tuple[int, bool]:
        """Subscribe to the session's events; see :meth:`EventBus.subscribe` for ``since_seq``
        and the result.

        A subscriber that was not subscribed yet first gets the problems found when the file
        was loaded (damaged lines, a migration) as ``session_warning`` events with ``seq: 0``.
        """
        if subscriber.key not in runtime.bus.subscribers:
            for warning in runtime.file.warnings:
                event = SessionWarning(message=warning.message, line=warning.line)
                runtime.bus.send_one(subscriber, event)
        subscribed = runtime.bus.subscribe(subscriber, since_seq)
        runtime.approver.offer_pending(subscriber)
        for child in list(runtime.children.values()):  # its running subagents: watched with it
            if subscriber.key not in child.bus.subscribers:
                self.watch(child, subscriber)
        return subscribed

    def forget(self, subscriber: Subscriber) -> None:
        """Unsubscribe ``subscriber`` from every session, loaded or not (it went away)."""
        for runtime in self.loaded.values():
            runtime.bus.unsubscribe(subscriber)
        for session_id in list(self._parked):
            self.unpark(session_id, subscriber)

    def unpark(self, session_id: str, subscriber: Subscriber) -> bool:
        """Drop ``subscriber`` from an unloaded session's subscribers (``session/unsubscribe``
        of a session that was unloaded meanwhile); whether it was one."""
        parked = self._parked.get(session_id)
        if parked is None or parked.pop(subscriber.key, None) is None:
            return False
        if not parked:
            del self._parked[session_id]
        return True

    def _resubscribe(self, runtime: SessionRuntime) -> None:
        """Give a reloaded session back the subscribers it had when it was unloaded (those
        still open), so they receive its events as if it had stayed loaded (its ``seq`` goes
        on from a higher number, see :func:`agentd.session.bus.resumed_seq`)."""
        for subscriber in self._parked.pop(runtime.id, {}).values():
            if not subscriber.closed:
                runtime.bus.subscribe(subscriber)

    def find_path(self, session_id: str) -> Path:
        """The file of a session that exists on disk; SessionNotFound otherwise."""
        path = find_session(self.shared.session_root, session_id)
        if path is None:
            raise SessionNotFound(f"no session {session_id!r} (see session/list)")
        return path

    async def unload(self, session_id: str) -> bool:
        """Close a loaded session (its file is kept); return whether it was loaded. Its open
        subscribers are kept aside and subscribed again when it is next loaded."""
        runtime = self.loaded.pop(session_id, None)
        if runtime is None:
            return False
        self.runners.pop(session_id, None)
        live = {key: sub for key, sub in runtime.bus.subscribers.items() if not sub.closed}
        if live:
            self._parked.setdefault(session_id, {}).update(live)
        await runtime.shutdown()
        return True

    async def close(self) -> None:
        """Stop unloading idle sessions, cancel running runs and flush every session file
        (daemon shutdown)."""
        await self.idle.stop()
        runtimes = list(self.loaded.values())
        self.loaded.clear()
        self.runners.clear()
        self._parked.clear()
        await asyncio.gather(*(r.shutdown() for r in runtimes), return_exceptions=True)
        await self.shared.close()


class _Runner:
    """A session's ``task`` tool port (given to its tools when it is built): the session's
    :class:`SubagentRunner`, which the manager makes once the session is loaded."""

    def __init__(self, runners: dict[str, SubagentRunner], session_id: str) -> None:
        self._runners = runners
        self._session_id = session_id

    async def run_task(self, request: TaskRequest) -> TaskOutcome:
        runner = self._runners.get(self._session_id)
        if runner is None:
            raise ToolError("This session is closing; it cannot start a task.")
        return await runner.run_task(request)
