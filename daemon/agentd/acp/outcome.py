"""How ACP answers and what it asks: the ``session/prompt`` stop reason for a finished run,
ACP's codes, and its ``mcpServers`` as native entries.

ACP's stop reasons: ``end_turn``; ``max_tokens`` when the last reply was cut by the output
limit; ``max_turn_requests`` for agentd's turn limit and run budgets; ``refusal`` when the
provider refused the reply, or a hook blocked the prompt (stop reason ``blocked``; the
client was sent a thought saying why); ``cancelled``. A run that failed is not a stop reason
in ACP: it answers with error -32603 and the failure's message.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import msgspec

from agentd.errors import (
    InternalError,
    InvalidParams,
    InvalidRequest,
    RpcError,
    SessionBusy,
    SessionNotFound,
)
from agentd.protocol import acp
from agentd.protocol.mcp import McpServerParam
from agentd.protocol.methods import PromptResult

REFUSALS = frozenset(
    {"the model refused to answer", "the provider's content filter stopped the reply"}
)
"""The errors agentd's providers (Anthropic, OpenAI) give a refused reply: ``refusal``."""


class ResourceNotFound(RpcError):
    """ACP's "resource not found" (an unknown session)."""

    code = -32002


def check_cwd(cwd: str) -> None:
    """InvalidParams unless ``cwd`` is absolute (ACP paths are)."""
    if not Path(cwd).is_absolute():
        raise InvalidParams(f"`cwd` must be an absolute path, got {cwd!r} - at `$.cwd`")


def stop_reason(result: PromptResult, last_turn_stop: str | None) -> acp.StopReason:
    """ACP's stop reason for a finished run (``last_turn_stop``: its last turn's); a failed
    run raises InternalError (a JSON-RPC error answer)."""
    if result.stop_reason == "cancelled":
        return "cancelled"
    if result.stop_reason in ("max_turns", "budget"):
        return "max_turn_requests"
    if result.stop_reason == "blocked":
        return "refusal"
    if result.stop_reason == "error":
        if result.error in REFUSALS:
            return "refusal"
        raise InternalError(f"the run failed: {result.error or 'unknown error'}")
    return "max_tokens" if last_turn_stop == "length" else "end_turn"


_MCP_FIELDS = frozenset({"name", "type", "command", "args", "env", "url", "headers"})


def mcp_servers(raw: list[Any]) -> list[McpServerParam] | None:
    """ACP's ``mcpServers`` as the native ``session/new`` entries (None when empty);
    InvalidParams naming the entry that does not have the ACP shape."""
    if not raw:
        return None
    servers = []
    for index, entry in enumerate(raw):
        if isinstance(entry, dict):  # ACP's extension members (_meta…) are not agentd's
            entry = {k: v for k, v in entry.items() if k in _MCP_FIELDS}
        try:
            servers.append(msgspec.convert(entry, McpServerParam))
        except msgspec.ValidationError as exc:
            raise InvalidParams(f"bad MCP server: {exc} - at `$.mcpServers[{index}]`") from None
    return servers


@contextmanager
def acp_errors() -> Iterator[None]:
    """The session API's errors in ACP's codes: an unknown session is "resource not found",
    a busy one an invalid request; the others keep their code and message."""
    try:
        yield
    except SessionNotFound as exc:
        raise ResourceNotFound(exc.message) from None
    except SessionBusy as exc:
        raise InvalidRequest(exc.message) from None
