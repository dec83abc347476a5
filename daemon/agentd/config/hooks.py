"""The ``[[hooks.<event>]]`` tables of the configuration file (part of
:class:`agentd.config.schema.ConfigFile`) and the checks msgspec cannot make: a matcher
with an empty ``|`` alternative, a tool glob on an event that has no tool. Its annotations
are evaluated at import, as :mod:`agentd.config.schema` explains."""

from typing import Annotated

import msgspec


def _doc(text: str) -> msgspec.Meta:
    """A key's documentation (see :func:`agentd.config.schema.doc`)."""
    return msgspec.Meta(description=text)


class HookSection(msgspec.Struct, forbid_unknown_fields=True):
    """One hook: a command run at an event of a run (see "Hooks")."""

    command: Annotated[
        str,
        msgspec.Meta(min_length=1),
        _doc(
            "run with `bash -c` in the session's cwd, with the bash tool's environment and "
            "sandbox; reads the event as JSON on stdin"
        ),
    ]
    matcher: Annotated[
        str,
        msgspec.Meta(min_length=1),
        _doc(
            "`pre_tool`/`post_tool`: a tool-name glob (`bash`, `mcp__github__*`, `*`), or "
            'several joined by a vertical bar; other events take only `"*"`'
        ),
    ] = "*"
    timeout: Annotated[
        float,
        msgspec.Meta(gt=0, le=600),
        _doc("seconds before the hook is killed (it then counts as an error)"),
    ] = 60.0


HookList = list[HookSection]


class HooksSection(msgspec.Struct, forbid_unknown_fields=True):
    """Commands run at fixed points of a run, each event an array of tables
    (``[[hooks.pre_tool]]``); a project's hooks run only in a trusted folder."""

    session_start: Annotated[HookList, _doc("before the session's first prompt in this daemon")] = (
        msgspec.field(default_factory=list)
    )
    user_prompt: Annotated[HookList, _doc("before a prompt reaches the model (may block it)")] = (
        msgspec.field(default_factory=list)
    )
    pre_tool: Annotated[HookList, _doc("before a tool call runs (may block it)")] = msgspec.field(
        default_factory=list
    )
    post_tool: Annotated[HookList, _doc("after a tool call ran (may add to its result)")] = (
        msgspec.field(default_factory=list)
    )
    stop: Annotated[HookList, _doc("when a run ended")] = msgspec.field(default_factory=list)
    pre_compact: Annotated[HookList, _doc("before the context is compacted")] = msgspec.field(
        default_factory=list
    )


TOOL_EVENTS = ("pre_tool", "post_tool")
"""The hook events about a tool call: the only ones whose ``matcher`` may name tools."""


def hook_problem(hooks: HooksSection) -> str | None:
    """What is wrong with a hook's ``matcher`` (an empty ``|`` alternative, or a tool glob
    on an event without a tool), or None."""
    for event in HooksSection.__struct_fields__:
        for index, hook in enumerate(getattr(hooks, event)):
            where = f"key hooks.{event}[{index}].matcher"
            if any(not part.strip() for part in hook.matcher.split("|")):
                return f"{where}: {hook.matcher!r} has an empty alternative between `|`"
            if event not in TOOL_EVENTS and hook.matcher.strip() != "*":
                return (
                    f'{where}: {event} hooks have no tool to match; use "*" or leave '
                    "matcher out (tool globs work on pre_tool and post_tool)"
                )
    return None
