"""agentd acp's built-in slash commands: offered to the editor in every
``available_commands_update`` (before the session's custom commands, and hiding a custom
command of the same name, as the other clients' built-ins do) and run by the front-end
itself when a prompt's text starts with ``/NAME``, never sent to the model.

================ ================================================================
``/compact [instructions]``  ``session/compact``: older messages summarised (the optional
                             text steers the summary); the answer says how many tokens of
                             context it freed, as an ``agent_message_chunk``
================ ================================================================
"""

from __future__ import annotations

from collections.abc import Callable

from agentd.api import SessionApi
from agentd.protocol import acp
from agentd.protocol.methods import CompactParams

COMPACT = acp.AvailableCommand(
    name="compact",
    description="Summarise the conversation so far to free context (optional: what to keep)",
    input=acp.UnstructuredCommandInput(hint="[instructions]"),
)
BUILTINS = (COMPACT,)
NAMES = frozenset(command.name for command in BUILTINS)

Send = Callable[[str, acp.SessionUpdate], None]


def builtin_call(text: str) -> tuple[str, str] | None:
    """``(name, argument)`` when ``text`` invokes a built-in (``/compact keep the API``),
    else None."""
    if not text.startswith("/"):
        return None
    name, _, argument = text[1:].partition(" ")
    name = name.strip()
    return (name, argument.strip()) if name in NAMES else None


def with_builtins(custom: list[acp.AvailableCommand]) -> list[acp.AvailableCommand]:
    """The built-ins, then the custom commands they do not hide."""
    return [*BUILTINS, *(command for command in custom if command.name not in NAMES)]


async def run_builtin(
    api: SessionApi, session_id: str, call: tuple[str, str], send: Send
) -> acp.PromptResult:
    """Run the built-in ``call`` (:func:`builtin_call`); its answer goes to the editor as an
    ``agent_message_chunk``. Raises the session API's errors (busy, unknown session)."""
    _, argument = call  # /compact is the only one so far
    result = await api.compact(CompactParams(session_id=session_id, instructions=argument or None))
    if result.compacted:
        text = (
            f"Compacted the conversation: {result.tokens_before:,} → "
            f"{result.tokens_after:,} tokens of context."
        )
    else:
        text = "Nothing to compact yet: the conversation is short."
    send(session_id, acp.AgentMessageChunk(content=acp.TextBlock(text=text)))
    return acp.PromptResult(stop_reason="end_turn")
