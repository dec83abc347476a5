"""Pages of a session's conversation for ``session/messages``.

A session can hold hundreds of megabytes of messages; encoding, redacting and decoding them
all in one answer took minutes and stalled every other client. :func:`message_page` works on
one bounded page instead: at most ``limit`` messages (≤ 1000) and about 2 MiB of JSON, walking
back from ``before``, so the work per request stays small whatever the session's size, and is
done in slices between which the event loop serves the other clients.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

import msgspec

from agentd.errors import InvalidParams
from agentd.protocol.content import AssistantMessage, Message, TextContent, ToolResultMessage
from agentd.protocol.events import Event, MessageEnd, ToolExecutionEnd, ToolExecutionStart
from agentd.protocol.methods import (
    MAX_MESSAGES_PAGE,
    MAX_MESSAGES_PAGE_BYTES,
    HookBlock,
    MessagesResult,
)
from agentd.protocol.processes import ProcessExit, ProcessStart
from agentd.protocol.questions import QuestionRequest, QuestionResolved, QuestionSource
from agentd.protocol.session_file import CompactionEntry, EntryBase, HookEntry, MessageEntry
from agentd.protocol.tool_details import AskUserDetails, Elicited, McpDetails

if TYPE_CHECKING:
    from agentd.store.tree import Known
    from agentd.tools.process.table import ProcessTable

_encode = msgspec.json.Encoder().encode


@functools.cache
def _message_decoder() -> msgspec.json.Decoder[Message]:
    """Built when a page first holds a redacted message (building it, the message union,
    costs a cold start some 10 ms a run that pages nothing never needs)."""
    return msgspec.json.Decoder(Message)


YIELD_EVERY_BYTES = 16 * 1024
"""The loop gets a turn after this much of a page is encoded and redacted (a millisecond
or so of work)."""


async def message_page(
    messages: Sequence[Message],
    redact: Callable[[bytes], bytes],
    *,
    limit: int = MAX_MESSAGES_PAGE,
    before: int | None = None,
    max_bytes: int = MAX_MESSAGES_PAGE_BYTES,
) -> MessagesResult:
    """The page of ``messages`` ending just before index ``before`` (default: the end), with
    every secret ``redact`` knows replaced. Holds at most ``limit`` messages and stops before
    ``max_bytes`` of JSON, but always holds one message when there is one before ``before``.
    InvalidParams for a ``limit`` outside 1…1000 or a negative ``before``; a ``before`` past the
    end means the end.

    Each message is encoded and redacted on its own (a message with nothing to redact is
    given as it is, one with a secret decoded from its redacted JSON), and the event loop
    gets a turn after every :data:`YIELD_EVERY_BYTES` (redacting is the costly part: tens of
    ms per MiB), so other clients are not kept waiting for a whole page.
    """
    if not 1 <= limit <= MAX_MESSAGES_PAGE:
        raise InvalidParams(f"`limit` must be between 1 and {MAX_MESSAGES_PAGE} - at `$.limit`")
    if before is not None and before < 0:
        raise InvalidParams("`before` must be 0 or more - at `$.before`")
    total = len(messages)
    start = total if before is None else min(before, total)
    page: list[Message] = []
    size = since_yield = 0
    while start > 0 and len(page) < limit:
        message = messages[start - 1]
        encoded = _encode(message)
        piece = redact(encoded)
        if page and size + len(piece) > max_bytes:
            break
        page.append(message if piece is encoded else _message_decoder().decode(piece))
        size += len(piece)
        start -= 1
        since_yield += len(piece)
        if since_yield >= YIELD_EVERY_BYTES:
            since_yield = 0
            await asyncio.sleep(0)
    page.reverse()
    return MessagesResult(messages=page, start=start, total=total)


def hook_blocks(branch: Sequence[Known], redact: Callable[[str], str]) -> list[HookBlock]:
    """The hooks that blocked something on ``branch`` (the session's entries, root first;
    message entries may be references, :meth:`SessionTree.outline`): each ``hook_result``
    entry with decision ``block``, placed after the message before it — a compaction counts
    as its summary message. Reason and command have secrets ``redact``ed.
    """
    blocks: list[HookBlock] = []
    after: str | None = None
    for entry in branch:
        if not isinstance(entry, EntryBase):  # a message entry as its reference
            after = entry.message_id
        elif isinstance(entry, MessageEntry):
            after = entry.message.id
        elif isinstance(entry, CompactionEntry):
            after = entry.id
        elif isinstance(entry, HookEntry) and entry.hook.decision == "block":
            hook = msgspec.structs.replace(
                entry.hook,
                command=redact(entry.hook.command),
                reason=None if entry.hook.reason is None else redact(entry.hook.reason),
            )
            blocks.append(HookBlock(entry_id=entry.id, after_message_id=after, hook=hook))
    return blocks


def with_hook_blocks(page: MessagesResult, blocks: Sequence[HookBlock]) -> MessagesResult:
    """``page`` with those of ``blocks`` placed after one of its messages (or, placed before
    every message, when the page is the first) as its ``hook_blocks``."""
    shown = {message.id for message in page.messages}
    kept = [
        block
        for block in blocks
        if block.after_message_id in shown or (block.after_message_id is None and page.start == 0)
    ]
    return msgspec.structs.replace(page, hook_blocks=kept)


def history_events(messages: Sequence[Message], blocks: Sequence[HookBlock]) -> Iterator[Event]:
    """The conversation as events for a ``replay``: a ``message_end`` per message (and the
    tool events of the provider-side calls of a reply), the questions a tool call asked the
    user before its result's (:func:`question_events`), each block's ``hook_result`` after
    the message it followed (those before every message first; those whose message is no
    longer in the context are left out)."""
    placed: dict[str | None, list[HookBlock]] = {}
    for block in blocks:
        placed.setdefault(block.after_message_id, []).append(block)
    yield from (block.hook for block in placed.get(None, ()))
    for message in messages:
        if isinstance(message, ToolResultMessage):
            yield from question_events(message)
        yield MessageEnd(message=message)
        if isinstance(message, AssistantMessage):
            yield from server_tool_events(message)
        yield from (block.hook for block in placed.get(message.id, ()))


def server_tool_events(message: AssistantMessage) -> Iterator[Event]:
    """The tool events of the calls the provider ran on its side in ``message`` (its web
    search), as they were sent live: each call's start, then its end."""
    for call in message.server_tool_calls():
        yield ToolExecutionStart(
            tool_call_id=call.id, name=call.name, args=call.arguments, kind="search"
        )
        yield ToolExecutionEnd(
            tool_call_id=call.id,
            name=call.name,
            result=[TextContent(text=call.result)],
            is_error=call.is_error,
            details=call.details,
        )


def question_events(result: ToolResultMessage) -> Iterator[QuestionRequest | QuestionResolved]:
    """The questions the call of ``result`` asked the user — ``ask_user``'s, or each round an
    MCP server asked (``details.elicited``) — as they were sent live: a ``question_request``,
    then its ``question_resolved`` with the answers (or why there were none). A round kept
    without its id (an older file) gets ``<tool call id>.<n>``."""
    details = result.details
    rounds: list[AskUserDetails | Elicited]
    source: QuestionSource = "tool"
    server = None
    if isinstance(details, AskUserDetails):
        rounds = [details]
    elif isinstance(details, McpDetails):
        rounds, source, server = list(details.elicited), "mcp", details.server
    else:
        return
    call = result.tool_call_id
    for number, asked in enumerate(rounds, 1):
        question_id = asked.question_id or f"{call}.{number}"
        url = asked.url if isinstance(asked, Elicited) else None
        yield QuestionRequest(
            question_id=question_id, questions=asked.questions, source=source,
            tool_call_id=call, server=server, url=url,
        )  # fmt: skip
        yield QuestionResolved(question_id=question_id, answers=asked.answers, reason=asked.reason)


def process_events(table: ProcessTable | None) -> Iterator[ProcessStart | ProcessExit]:
    """The session's background processes for a ``replay``: ``process_start`` for each one
    running, ``process_exit`` for each one ended, oldest first."""
    for info in table.infos() if table is not None else []:
        yield ProcessStart(process=info) if info.state == "running" else ProcessExit(process=info)
