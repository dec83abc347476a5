"""Tool-call ids unique within a session.

Models choose the ids of their tool calls, and many repeat them (the same ``call_1`` every
turn, or the same id for two calls of one reply). Clients key their cards and transcripts by
id, and ACP requires ids unique within a session, so the loop renames a repeated id before any
event carries it: the call keeps the provider's id in :attr:`ToolCall.provider_id`, used only
in requests back to the provider (:func:`agentd.providers.transform.prepare_messages`).
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from agentd.protocol.content import AssistantMessage, Message, ToolCall
from agentd.protocol.events import ToolCallStartDelta


class ReplyCallIds:
    """Gives the tool calls of one reply ids not yet used in the session's ``messages``.

    :meth:`start` renames a streamed call's start delta; :meth:`finish` gives the reply's
    final tool calls the same ids, in order (and fresh ones to calls that had no start).
    """

    def __init__(self, messages: Iterable[Message]) -> None:
        self._used = {
            call.id
            for message in messages
            if isinstance(message, AssistantMessage)
            for call in message.tool_calls()
        }
        self._started: list[tuple[str, str]] = []  # (provider's id, session id), in order

    def start(self, delta: ToolCallStartDelta) -> ToolCallStartDelta:
        """``delta`` under the call's session id."""
        unique = self._fresh(delta.id)
        self._started.append((delta.id, unique))
        return delta if unique == delta.id else msgspec.structs.replace(delta, id=unique)

    def finish(self, message: AssistantMessage) -> AssistantMessage:
        """``message`` with its tool calls under their session ids."""
        if not any(isinstance(block, ToolCall) for block in message.content):
            return message
        content = [
            self._renamed(block) if isinstance(block, ToolCall) else block
            for block in message.content
        ]
        return msgspec.structs.replace(message, content=content)

    def _renamed(self, call: ToolCall) -> ToolCall:
        found = next((i for i, (ours, _) in enumerate(self._started) if ours == call.id), None)
        unique = self._started.pop(found)[1] if found is not None else self._fresh(call.id)
        if unique == call.id:
            return call
        return msgspec.structs.replace(call, id=unique, provider_id=call.id)

    def _fresh(self, provider_id: str) -> str:
        base = provider_id or "call"
        unique, count = base, 1
        while unique in self._used or not unique:
            count += 1
            unique = f"{base}-{count}"
        self._used.add(unique)
        return unique
