"""Fixtures and builders for the session store tests: real files in temporary folders."""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from agentd.protocol.content import (
    AssistantMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from agentd.protocol.tool_details import ToolDetails
from agentd.store import SessionFile

CWD = "/home/me/proj"
_ids = itertools.count(1)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """An empty store root."""
    return tmp_path / "sessions"


@pytest.fixture
def session(root: Path) -> Iterator[SessionFile]:
    """A new session file with nothing but its header."""
    created = SessionFile.create(root, cwd=CWD, session_id="s1")
    yield created
    created.close()


def user(text: str, message_id: str | None = None) -> UserMessage:
    return UserMessage(
        id=message_id or f"u{next(_ids)}", content=[TextContent(text=text)], timestamp=1.0
    )


def assistant(
    text: str = "",
    calls: Sequence[tuple[str, str, dict[str, Any]]] = (),
    *,
    message_id: str | None = None,
    model: str = "m1",
    usage: Usage | None = None,
) -> AssistantMessage:
    content: list[Any] = [TextContent(text=text)] if text else []
    content += [ToolCall(id=call_id, name=name, arguments=args) for call_id, name, args in calls]
    return AssistantMessage(
        id=message_id or f"a{next(_ids)}",
        content=content,
        provider="p1",
        model=model,
        usage=usage or Usage(),
        stop_reason="tool_use" if calls else "stop",
    )


def result(
    call_id: str, text: str, *, is_error: bool = False, details: ToolDetails | None = None
) -> ToolResultMessage:
    return ToolResultMessage(
        id=f"r{next(_ids)}",
        tool_call_id=call_id,
        tool_name="bash",
        content=[TextContent(text=text)],
        is_error=is_error,
        details=details,
    )


def texts(messages: list[Any]) -> list[str]:
    """The first text of each message (or ``"<call>"`` for a reply of only tool calls)."""
    out = []
    for message in messages:
        blocks = [b for b in message.content if isinstance(b, TextContent)]
        out.append(blocks[0].text if blocks else "<call>")
    return out


def lines(path: Path) -> list[bytes]:
    """The file's lines without their LFs (the last one is b"" when the file ends in LF)."""
    return path.read_bytes().split(b"\n")
