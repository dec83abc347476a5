"""agentd's ACP wire Structs against the official ACP JSON schema (``tests/fixtures/acp``).

Every Struct of :mod:`agentd.protocol.acp` appears in at least one example below; each example
is encoded exactly as ``agentd acp`` sends it and validated against the schema's definition of
that message. The updates made by the real mapper from real events are checked too.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
from acp.meta import AGENT_METHODS as SDK_AGENT_METHODS
from acp.schema import ForkSessionRequest, ForkSessionResponse
from jsonschema import Draft202012Validator

from agentd.acp.agent import AcpAgent
from agentd.acp.session import AcpSession
from agentd.frontend import FrontEndOptions
from agentd.protocol import acp
from agentd.protocol.content import (
    AssistantMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from agentd.protocol.events import (
    Location,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    PermissionRequest,
    TextDelta,
    ThinkingDelta,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
)
from agentd.protocol.tool_details import EditDetails

FIXTURES = Path(__file__).parent.parent / "fixtures" / "acp"
SCHEMA = json.loads((FIXTURES / "schema.json").read_text())
META = json.loads((FIXTURES / "meta.json").read_text())


def check(definition: str, value: Any) -> None:
    """``value`` (a Struct), encoded as sent, is valid for ``$defs[definition]``."""
    wire = json.loads(msgspec.json.encode(value))
    schema = {"$ref": f"#/$defs/{definition}", "$defs": SCHEMA["$defs"]}
    Draft202012Validator(schema).validate(wire)


def _tool_fields() -> acp.ToolCallFields:
    return acp.ToolCallFields(
        tool_call_id="c1",
        title="Edit a.py",
        kind="edit",
        status="pending",
        locations=[acp.ToolCallLocation(path="/p/a.py", line=3)],
        raw_input={"path": "a.py"},
        raw_output={"ok": True},
        content=[acp.ContentItem(content=acp.TextBlock(text="x"))],
    )


UPDATES: list[acp.SessionUpdate] = [
    acp.UserMessageChunk(content=acp.TextBlock(text="hi"), message_id="m0"),
    acp.AgentMessageChunk(content=acp.TextBlock(text="hello"), message_id="m1"),
    acp.AgentThoughtChunk(content=acp.TextBlock(text="hmm")),
    acp.ToolCallStart(
        tool_call_id="c1",
        title="Run npm test",
        kind="execute",
        status="in_progress",
        locations=[acp.ToolCallLocation(path="/p")],
        raw_input={"command": "npm test"},
    ),
    acp.ToolCallProgress(
        tool_call_id="c1",
        status="completed",
        content=[
            acp.DiffItem(path="/p/a.py", old_text=None, new_text="x\n"),
            acp.DiffItem(path="/p/a.py", old_text="a\n", new_text="b\n"),
            acp.TerminalItem(terminal_id="t1"),
            acp.ContentItem(content=acp.ImageBlock(data="AAAA", mime_type="image/png")),
        ],
    ),
    acp.CurrentModeUpdate(current_mode_id="ask"),
    acp.ConfigOptionUpdate(
        config_options=AcpSession("s", "/p", "ask", "mock", "m").config_options()
    ),
    acp.SessionInfoUpdate(title="Fix the tests", updated_at="2026-01-01T00:00:00Z"),
    acp.UsageUpdate(used=1200, size=200000, cost=acp.Cost(amount=0.01, currency="USD")),
    acp.PlanUpdate(
        entries=[acp.AcpPlanEntry(content="Fix the test", priority="high", status="in_progress")]
    ),
    acp.AvailableCommandsUpdate(
        available_commands=[
            acp.AvailableCommand(
                name="review",
                description="Review a file",
                input=acp.UnstructuredCommandInput(hint="FILE [FOCUS]"),
            ),
            acp.AvailableCommand(name="standup", description="Summarise yesterday"),
        ]
    ),
]

EXAMPLES: list[tuple[str, Any]] = [
    *[("SessionNotification", acp.SessionNotification(session_id="s", update=u)) for u in UPDATES],
    ("InitializeResponse", None),  # filled by test: the real initialize answer
    (
        "InitializeRequest",
        acp.InitializeParams(
            protocol_version=1,
            client_capabilities=acp.ClientCapabilities(
                fs=acp.FileSystemCapabilities(read_text_file=True), terminal=True
            ),
            client_info=acp.Implementation(name="zed", version="1", title="Zed"),
        ),
    ),
    ("AuthenticateRequest", acp.AuthenticateParams(method_id="x")),
    ("AuthMethodAgent", acp.AuthMethod(id="x", name="X", description="d")),
    ("NewSessionRequest", acp.NewSessionParams(cwd="/p")),
    (
        "NewSessionResponse",
        acp.NewSessionResult(
            session_id="s",
            modes=AcpSession("s", "/p", "auto", "mock", "m").modes(),
            config_options=AcpSession("s", "/p", "auto", "mock", "m").config_options(),
        ),
    ),
    ("DeleteSessionRequest", acp.SessionIdParams(session_id="s")),
    ("LoadSessionRequest", acp.LoadSessionParams(session_id="s", cwd="/p")),
    ("LoadSessionResponse", acp.LoadSessionResult()),
    ("ResumeSessionResponse", acp.LoadSessionResult()),
    ("CloseSessionRequest", acp.SessionIdParams(session_id="s")),
    ("CancelNotification", acp.SessionIdParams(session_id="s")),
    ("ListSessionsRequest", acp.ListSessionsParams(cwd="/p", cursor="c")),
    (
        "ListSessionsResponse",
        acp.ListSessionsResult(
            sessions=[acp.SessionInfo(session_id="s", cwd="/p", title="t", updated_at="now")],
            next_cursor="n",
        ),
    ),
    (
        "PromptRequest",
        acp.PromptParams(
            session_id="s",
            prompt=[
                acp.TextBlock(text="hi"),
                acp.ImageBlock(data="AAAA", mime_type="image/png", uri="file:///p/a.png"),
                acp.AudioBlock(data="AAAA", mime_type="audio/wav"),
                acp.ResourceLinkBlock(
                    uri="file:///p/a.py", name="a.py", mime_type="text/x-python", size=3
                ),
                acp.ResourceBlock(resource=acp.ResourceContents(uri="file:///p/a.py", text="x")),
                acp.ResourceBlock(resource=acp.ResourceContents(uri="file:///p/b", blob="AAAA")),
            ],
        ),
    ),
    *[("PromptResponse", acp.PromptResult(stop_reason=r)) for r in acp.StopReason.__args__],
    ("SetSessionModeRequest", acp.SetModeParams(session_id="s", mode_id="ask")),
    (
        "SetSessionConfigOptionRequest",
        acp.SetConfigOptionParams(session_id="s", config_id="mode", value="ask"),
    ),
    (
        "SetSessionConfigOptionResponse",
        acp.SetConfigOptionResult(
            config_options=AcpSession("s", "/p", "auto", "mock", "m").config_options()
        ),
    ),
    (
        "RequestPermissionRequest",
        acp.RequestPermissionParams(
            session_id="s",
            tool_call=_tool_fields(),
            options=[acp.PermissionOption(option_id="allow_once", name="Allow", kind="allow_once")],
        ),
    ),
    (
        "RequestPermissionResponse",
        acp.RequestPermissionResult(outcome=acp.SelectedOutcome(option_id="allow_once")),
    ),
    ("RequestPermissionResponse", acp.RequestPermissionResult(outcome=acp.CancelledOutcome())),
    ("ReadTextFileRequest", acp.ReadTextFileParams(session_id="s", path="/p/a", line=1, limit=2)),
    ("ReadTextFileResponse", acp.ReadTextFileResult(content="x")),
    ("WriteTextFileRequest", acp.WriteTextFileParams(session_id="s", path="/p/a", content="x")),
]


UNSTABLE: list[tuple[type[Any], Any]] = [
    (ForkSessionRequest, acp.ForkSessionParams(session_id="s", cwd="/p")),
    (
        ForkSessionResponse,
        acp.ForkSessionResult(
            session_id="f",
            modes=AcpSession("f", "/p", "ask", "mock", "m").modes(),
            config_options=AcpSession("f", "/p", "ask", "mock", "m").config_options(),
        ),
    ),
]
"""Messages of ACP's unstable methods (``session/fork``), not in the stable schema: checked
against the official Python SDK's models of them instead."""


def _initialize_answer() -> acp.InitializeResult:
    """What ``agentd acp`` answers to ``initialize`` (without starting a backend)."""
    agent = AcpAgent(FrontEndOptions())
    params = acp.InitializeParams(protocol_version=1)

    class _Conn:
        id = 1
        sends_cancels = False

    async def answer() -> acp.InitializeResult:
        result = agent.initialize(_Conn(), params)  # type: ignore[arg-type]
        assert agent._backend is not None
        agent._backend.cancel()
        return result

    import asyncio

    return asyncio.run(answer())


@pytest.mark.parametrize(("model", "value"), UNSTABLE, ids=[m.__name__ for m, _ in UNSTABLE])
def test_unstable_example_matches_the_sdk(model: type[Any], value: Any) -> None:
    wire = json.loads(msgspec.json.encode(value))
    parsed = model.model_validate(wire)
    assert parsed.model_dump(mode="json", by_alias=True, exclude_none=True) == wire


@pytest.mark.parametrize(("definition", "value"), EXAMPLES, ids=[d for d, _ in EXAMPLES])
def test_example_matches_the_official_schema(definition: str, value: Any) -> None:
    if value is None:
        value = _initialize_answer()
    check(definition, value)


def test_every_struct_is_checked() -> None:
    seen: set[type] = set()

    def walk(value: Any) -> None:
        if isinstance(value, msgspec.Struct):
            seen.add(type(value))
            for name in value.__struct_fields__:
                walk(getattr(value, name))
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for _, value in [*EXAMPLES, *UNSTABLE]:
        walk(value if value is not None else _initialize_answer())
    defined = {
        cls
        for _, cls in inspect.getmembers(acp, inspect.isclass)
        if issubclass(cls, msgspec.Struct) and cls.__module__.startswith(acp.__name__)
    }
    unchecked = defined - seen - {acp.Acp, acp.Always}
    assert not unchecked, f"no schema example for {sorted(c.__name__ for c in unchecked)}"


def test_methods_are_the_specs() -> None:
    """Every method ``agentd acp`` serves or calls is named so in the schema's meta.json (an
    unstable one, in the official SDK's method table)."""
    agent_methods = set(META["agentMethods"].values()) | {SDK_AGENT_METHODS["session_fork"]}
    client_methods = set(META["clientMethods"].values())
    served = set(AcpAgent(FrontEndOptions()).router().methods()) | {"session/cancel"}
    assert served <= agent_methods
    assert {
        "session/update",
        "session/request_permission",
        "fs/read_text_file",
        "fs/write_text_file",
    } <= client_methods
    assert META["protocolMethods"]["cancel_request"] == "$/cancel_request"
    assert META["version"] == acp.ACP_PROTOCOL_VERSION


def test_mapped_updates_from_real_events_match_the_schema() -> None:
    session = AcpSession("s", "/p", "auto", "mock", "m")
    events: list[Any] = [
        MessageStart(message_id="m1", role="assistant"),
        MessageUpdate(delta=ThinkingDelta(text="hmm")),
        MessageUpdate(delta=TextDelta(text="hello")),
        ToolExecutionStart(
            tool_call_id="c1",
            name="edit",
            args={"path": "a.py", "old_string": "a", "new_string": "b"},
            kind="edit",
            locations=[Location(path="/p/a.py", line=1)],
        ),
        PermissionRequest(tool_call_id="c1", tool="edit", args={}),
        ToolExecutionUpdate(tool_call_id="c2", output="out\n"),
        ToolExecutionEnd(
            tool_call_id="c1",
            name="edit",
            result=[TextContent(text="Edited a.py")],
            details=EditDetails(
                path="/p/a.py",
                replacements=1,
                diff="--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-a\n+b\n",
                first_changed_line=1,
                added=1,
                removed=1,
            ),
        ),
    ]
    replay: list[Any] = [
        UserMessage(id="u", content=[TextContent(text="hi")], timestamp=0),
        AssistantMessage(
            id="a",
            content=[
                TextContent(text="ok"),
                ToolCall(id="c3", name="bash", arguments={"command": "ls"}),
            ],
            provider="mock",
            model="m",
        ),
        ToolResultMessage(
            id="r", tool_call_id="c3", tool_name="bash", content=[TextContent(text="a.py")]
        ),
    ]
    updates = [u for e in events for u in session.mapper.map(e)]
    updates += [u for m in replay for u in session.mapper.map(MessageEnd(message=m), seq=0)]
    assert len(updates) == 10
    ends = [u for u in updates if isinstance(u, acp.ToolCallProgress) and u.status == "completed"]
    assert isinstance(ends[0].content[0], acp.DiffItem)  # the edit's typed details → a diff
    for update in updates:
        check("SessionNotification", acp.SessionNotification(session_id="s", update=update))
