"""``session/fork`` for ``agentd acp``, and the ``usage_update`` after a turn: the parts of the
session lifecycle that take more than one session-API call.

A fork is agentd's ``session/fork`` at the session's current leaf (a new session file with
the history so far), then ``session/load`` without replay so the editor follows it. A fork
keeps its session's folder: a ``cwd`` elsewhere is refused (-32602) and the new file removed.
"""

from __future__ import annotations

import os

from agentd.acp.outcome import acp_errors, mcp_servers
from agentd.acp.session import AcpSession
from agentd.api import SessionApi
from agentd.api.subscriber import Subscriber
from agentd.errors import InvalidParams
from agentd.protocol import acp
from agentd.protocol.methods import (
    SessionDeleteParams,
    SessionForkParams,
    SessionIdParams,
    SessionInfo,
    SessionLoadParams,
)


async def fork(api: SessionApi, relay: Subscriber, params: acp.ForkSessionParams) -> SessionInfo:
    """The new session, loaded for ``relay``; ACP's errors for an unknown session or a
    ``cwd`` that is not the session's folder."""
    with acp_errors():
        forked = await api.fork(SessionForkParams(session_id=params.session_id))
        if os.path.realpath(forked.cwd) != os.path.realpath(params.cwd):
            await api.delete(SessionDeleteParams(session_id=forked.session_id))
            raise InvalidParams(f"a fork works in its session's folder, {forked.cwd}")
        native = SessionLoadParams(
            session_id=forked.session_id,
            replay=False,
            mcp_servers=mcp_servers(params.mcp_servers),
        )
        return (await api.load(native, relay)).session


async def usage_update(api: SessionApi, session: AcpSession) -> acp.UsageUpdate | None:
    """``usage_update`` (context used, window, session cost), or None while the model's
    context window is unknown."""
    size = session.context_window
    if size is None:
        return None
    with acp_errors():
        state = await api.state(SessionIdParams(session_id=session.session_id))
    return acp.UsageUpdate(
        used=session.mapper.context_tokens,
        size=size,
        cost=acp.Cost(amount=round(state.usage.cost, 6), currency="USD"),
    )
