"""The contract of the session API: :class:`SessionApi` and :func:`refuse_local_only`.

See :mod:`agentd.api` for how it is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from agentd.errors import InvalidParams

if TYPE_CHECKING:
    from agentd.api.subscriber import Subscriber
    from agentd.protocol.methods import (
        CancelResult,
        CompactParams,
        CompactResult,
        MessagesParams,
        MessagesResult,
        ModelsListParams,
        ModelsListResult,
        OkResult,
        PermissionAnswerParams,
        PromptParams,
        PromptResult,
        SessionBranchParams,
        SessionDeleteParams,
        SessionExportParams,
        SessionExportResult,
        SessionForkParams,
        SessionIdParams,
        SessionInfo,
        SessionListParams,
        SessionListResult,
        SessionLoadParams,
        SessionLoadResult,
        SessionNewParams,
        SessionNoteParams,
        SessionRenameParams,
        SessionStateResult,
        SessionTextParams,
        SetModelParams,
        SetPermissionModeParams,
        SubscribeParams,
        SubscribeResult,
    )
    from agentd.protocol.table import MethodSpec

LOCAL_ONLY_MESSAGE = "`{field}` is accepted over the Unix socket or stdio only"


def refuse_local_only(spec: MethodSpec, params: Any) -> None:
    """InvalidParams when ``params`` sets a field ``spec`` accepts from same-machine
    transports only (``providerEnv``: API keys). Every front-end that is not local (TCP, HTTP)
    calls it, so the refusal is the same error on each."""
    for name in spec.local_only:
        if getattr(params, name, None) is not None:
            wire = next(f.encode_name for f in msgspec.structs.fields(params) if f.name == name)
            raise InvalidParams(LOCAL_ONLY_MESSAGE.format(field=wire))


class SessionApi(Protocol):
    """The session methods, one per ``call`` of the method table (see the module docstring).

    Parameters and results are the wire types; errors are :class:`agentd.errors.RpcError`
    subclasses with the codes and texts a JSON-RPC client gets. ``subscriber``: the caller
    that watches the session (for the methods whose table entry ``subscribes``; required by
    ``subscribe``/``unsubscribe``). Each method's contract is its table entry's ``doc`` and
    the :class:`~agentd.session.service.SessionService` docstring.
    """

    async def create(
        self, params: SessionNewParams, subscriber: Subscriber | None = None
    ) -> SessionInfo: ...

    async def load(
        self, params: SessionLoadParams, subscriber: Subscriber | None = None
    ) -> SessionLoadResult: ...

    async def fork(
        self, params: SessionForkParams, subscriber: Subscriber | None = None
    ) -> SessionInfo: ...

    async def prompt(
        self, params: PromptParams, subscriber: Subscriber | None = None
    ) -> PromptResult: ...

    async def steer(
        self, params: SessionTextParams, subscriber: Subscriber | None = None
    ) -> OkResult: ...

    async def follow_up(
        self, params: SessionTextParams, subscriber: Subscriber | None = None
    ) -> OkResult: ...

    async def note(
        self, params: SessionNoteParams, subscriber: Subscriber | None = None
    ) -> OkResult: ...

    async def cancel(
        self, params: SessionIdParams, subscriber: Subscriber | None = None
    ) -> CancelResult: ...

    async def state(
        self, params: SessionIdParams, subscriber: Subscriber | None = None
    ) -> SessionStateResult: ...

    async def messages(
        self, params: MessagesParams, subscriber: Subscriber | None = None
    ) -> MessagesResult: ...

    async def set_model(
        self, params: SetModelParams, subscriber: Subscriber | None = None
    ) -> SessionInfo: ...

    async def set_permission_mode(
        self, params: SetPermissionModeParams, subscriber: Subscriber | None = None
    ) -> SessionInfo: ...

    async def models(
        self, params: ModelsListParams, subscriber: Subscriber | None = None
    ) -> ModelsListResult: ...

    async def list(
        self, params: SessionListParams, subscriber: Subscriber | None = None
    ) -> SessionListResult: ...

    async def branch(
        self, params: SessionBranchParams, subscriber: Subscriber | None = None
    ) -> OkResult: ...

    async def rename(
        self, params: SessionRenameParams, subscriber: Subscriber | None = None
    ) -> OkResult: ...

    async def delete(
        self, params: SessionDeleteParams, subscriber: Subscriber | None = None
    ) -> OkResult: ...

    async def close_session(
        self, params: SessionIdParams, subscriber: Subscriber | None = None
    ) -> OkResult: ...

    async def export(
        self, params: SessionExportParams, subscriber: Subscriber | None = None
    ) -> SessionExportResult: ...

    async def subscribe(
        self, params: SubscribeParams, subscriber: Subscriber | None = None
    ) -> SubscribeResult: ...

    async def unsubscribe(
        self, params: SessionIdParams, subscriber: Subscriber | None = None
    ) -> OkResult: ...

    async def compact(
        self, params: CompactParams, subscriber: Subscriber | None = None
    ) -> CompactResult: ...

    async def answer_permission(
        self, params: PermissionAnswerParams, subscriber: Subscriber | None = None
    ) -> OkResult: ...
