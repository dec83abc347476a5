"""The session methods as a Protocol, one per ``call`` of the method table.

Generated from :data:`agentd.protocol.table.METHODS` by ``agentd schema`` (``make
schema``); do not edit. :class:`agentd.api.SessionApi` extends it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from agentd.api.subscriber import Subscriber
    from agentd.protocol.commands import (
        SessionCommandsParams,
        SessionCommandsResult,
    )
    from agentd.protocol.mcp import (
        McpListParams,
        McpListResult,
        McpLoginFinishParams,
        McpLoginParams,
        McpLoginResult,
        McpLogoutParams,
        McpLogoutResult,
    )
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
    from agentd.protocol.processes import (
        KillProcessParams,
        ProcessesParams,
        ProcessesResult,
        ProcessInfo,
    )
    from agentd.protocol.rewind import (
        SessionRewindParams,
        SessionRewindResult,
    )
    from agentd.protocol.skills import (
        SessionSkillsParams,
        SessionSkillsResult,
        SkillCheckParams,
        SkillCheckResult,
    )


class SessionMethods(Protocol):
    """Each method takes its params Struct (and the watching subscriber) and returns its
    result Struct."""

    async def create(
        self, params: SessionNewParams, subscriber: Subscriber | None = None
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

    async def processes(
        self, params: ProcessesParams, subscriber: Subscriber | None = None
    ) -> ProcessesResult: ...

    async def kill_process(
        self, params: KillProcessParams, subscriber: Subscriber | None = None
    ) -> ProcessInfo: ...

    async def messages(
        self, params: MessagesParams, subscriber: Subscriber | None = None
    ) -> MessagesResult: ...

    async def set_model(
        self, params: SetModelParams, subscriber: Subscriber | None = None
    ) -> SessionInfo: ...

    async def set_permission_mode(
        self, params: SetPermissionModeParams, subscriber: Subscriber | None = None
    ) -> SessionInfo: ...

    async def commands(
        self, params: SessionCommandsParams, subscriber: Subscriber | None = None
    ) -> SessionCommandsResult: ...

    async def skills(
        self, params: SessionSkillsParams, subscriber: Subscriber | None = None
    ) -> SessionSkillsResult: ...

    async def check_skill(
        self, params: SkillCheckParams, subscriber: Subscriber | None = None
    ) -> SkillCheckResult: ...

    async def models(
        self, params: ModelsListParams, subscriber: Subscriber | None = None
    ) -> ModelsListResult: ...

    async def mcp_list(
        self, params: McpListParams, subscriber: Subscriber | None = None
    ) -> McpListResult: ...

    async def mcp_login(
        self, params: McpLoginParams, subscriber: Subscriber | None = None
    ) -> McpLoginResult: ...

    async def mcp_login_finish(
        self, params: McpLoginFinishParams, subscriber: Subscriber | None = None
    ) -> McpLoginResult: ...

    async def mcp_logout(
        self, params: McpLogoutParams, subscriber: Subscriber | None = None
    ) -> McpLogoutResult: ...

    async def list(
        self, params: SessionListParams, subscriber: Subscriber | None = None
    ) -> SessionListResult: ...

    async def load(
        self, params: SessionLoadParams, subscriber: Subscriber | None = None
    ) -> SessionLoadResult: ...

    async def fork(
        self, params: SessionForkParams, subscriber: Subscriber | None = None
    ) -> SessionInfo: ...

    async def branch(
        self, params: SessionBranchParams, subscriber: Subscriber | None = None
    ) -> OkResult: ...

    async def rewind(
        self, params: SessionRewindParams, subscriber: Subscriber | None = None
    ) -> SessionRewindResult: ...

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
