"""A session's hooks: the configured commands, run for the agent loop's seams
(:class:`~agentd.agent.hooks.RunHooks`) and the session's compactions.

:class:`SessionHooks` picks the hooks of an event whose ``matcher`` fits the tool (a glob,
several joined by ``|``: ``bash``, ``write|edit``, ``mcp__github__*``, ``*``), runs them one
after another in the configured order (the user's file first, then a trusted project's) and
stops at the first block. Each runs like a bash tool call of the session: the same filtered
environment (:func:`~agentd.tools.process.environment.child_env`) and sandbox
(:func:`~agentd.tools.bash.confinement`), in the session's cwd, the event as JSON on stdin
(:mod:`agentd.hooks.process`, :mod:`agentd.hooks.answer`).

Every hook that ran is reported through ``emit`` as a ``hook_result`` event (the session file
records it); one that failed (exit code other than 0 and 2, crash, timeout, a bad answer)
also as a ``session_warning``, and the run goes on. ``session_start`` hooks run once per
loaded session, before its first prompt (again before the next one while they block).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from fnmatch import fnmatchcase
from pathlib import Path

import msgspec

from agentd.agent.hooks import GO_ON, HookVerdict
from agentd.config.hooks import HookSection, HooksSection
from agentd.hooks.answer import HookAnswer, interpret
from agentd.hooks.process import HookRun, run_hook_command
from agentd.log import get_logger
from agentd.protocol.events import Event, HookEventName, HookResult, SessionWarning
from agentd.protocol.hooks import HookInput
from agentd.tools.base import ToolContext, ToolError
from agentd.tools.bash import confinement
from agentd.tools.process.environment import child_env

log = get_logger("agentd.hooks")


def matches(matcher: str, tool: str | None) -> bool:
    """Whether ``matcher`` (globs joined by ``|``) fits ``tool``; an event without a tool
    (None) fits every matcher (its matcher is always ``*``)."""
    if tool is None:
        return True
    return any(fnmatchcase(tool, part.strip()) for part in matcher.split("|"))


class SessionHooks:
    """The hooks of one session (see the module docstring). ``emit`` is the session's event
    sink (None: events go nowhere)."""

    def __init__(
        self,
        hooks: HooksSection,
        context: ToolContext,
        cwd: Path,
        emit: Callable[[Event], None] | None = None,
    ) -> None:
        self._hooks: dict[str, list[HookSection]] = {
            event: entries
            for event in HooksSection.__struct_fields__
            if (entries := list(getattr(hooks, event)))
        }
        self._context = context
        self._cwd = cwd
        self._started = False
        self.emit: Callable[[Event], None] = _nowhere if emit is None else emit

    @property
    def configured(self) -> bool:
        """Whether any hook is configured for any event."""
        return bool(self._hooks)

    def wants(self, event: HookEventName, tool: str | None = None) -> bool:
        if event == "session_start" and self._started:
            return False
        return any(matches(hook.matcher, tool) for hook in self._hooks.get(event, ()))

    async def fire(self, event: HookInput) -> HookVerdict:
        """Run the hooks of ``event`` that match its tool, in order; the first block ends
        the series (its reason, and the context added before it); else the context they
        added, joined."""
        if event.event == "session_start":
            self._started = True
        event = msgspec.structs.replace(
            event, session_id=self._context.session_id, cwd=str(self._cwd)
        )
        payload = msgspec.json.encode(event)
        added: list[str] = []
        for hook in self._hooks.get(event.event, ()):
            if not matches(hook.matcher, event.tool):
                continue
            answer, run = await self._run(hook, payload)
            self._report(hook, event, answer, run)
            if answer.context:
                added.append(answer.context)
            if answer.decision == "block":
                self._started = self._started and event.event != "session_start"  # ask again
                return HookVerdict(blocked=answer.reason, context="\n\n".join(added) or None)
        return HookVerdict(context="\n\n".join(added)) if added else GO_ON

    async def _run(self, hook: HookSection, payload: bytes) -> tuple[HookAnswer, HookRun | None]:
        """Run one hook: its answer and how it ended (None: it could not start, for want of
        its cwd or of the sandbox — an error answer)."""
        ctx = self._context
        env = child_env(ctx.env, ctx.settings)
        ruleset: int | None = None
        fds: list[int] = []
        try:
            if ctx.workspace is not None:  # the file-system work off the event loop
                ruleset, wrapper, fds = await asyncio.to_thread(confinement, ctx, env)
            else:
                wrapper = []
            run = await run_hook_command(
                hook.command,
                stdin=payload,
                cwd=self._cwd,
                env=env,
                timeout=hook.timeout,
                ruleset=ruleset,
                wrapper=wrapper,
                pass_fds=fds,
            )
        except (OSError, ToolError) as exc:
            return HookAnswer("error", f"could not start: {exc}"), None
        finally:
            for fd in [*fds, *([] if ruleset is None else [ruleset])]:
                os.close(fd)
        return interpret(run, hook.timeout), run

    def _report(
        self,
        hook: HookSection,
        event: HookInput,
        answer: HookAnswer,
        run: HookRun | None,
    ) -> None:
        """The ``hook_result`` event; for a failed hook a ``session_warning`` too."""
        self.emit(
            HookResult(
                event=event.event,
                command=hook.command,
                exit_code=run.exit_code if run else None,
                decision=answer.decision,
                duration_ms=run.duration_ms if run else 0.0,
                reason=answer.reason,
                tool=event.tool,
                tool_call_id=event.tool_call_id,
                timed_out=run.timed_out if run else False,
            )
        )
        if answer.decision == "block":
            log.info("hook blocked", hook=hook.command, hook_event=event.event, tool=event.tool)
        if answer.decision == "error":
            text = f"The {event.event} hook `{hook.command}` {answer.reason}; the run goes on."
            log.warning(
                "hook failed", hook=hook.command, hook_event=event.event, problem=answer.reason
            )
            self.emit(SessionWarning(message=text))


def _nowhere(event: Event) -> None:
    return None


def session_hooks(
    hooks: HooksSection, context: ToolContext, cwd: Path, emit: Callable[[Event], None]
) -> SessionHooks | None:
    """The session's hooks, reporting through ``emit``, or None when none is configured (the
    loop then runs none)."""
    found = SessionHooks(hooks, context, cwd, emit)
    return found if found.configured else None
