"""Hooks of every event, with real scripts, through the in-process session service (the real
agent loop, tools and HTTP provider against the mock LLM)."""

from __future__ import annotations

import json
from pathlib import Path

from agentd.api.subscriber import QueueSubscriber
from agentd.protocol.content import AssistantMessage, TextContent, UserMessage
from agentd.protocol.events import (
    AgentEnd,
    HookResult,
    SessionWarning,
    ToolExecutionEnd,
)
from agentd.protocol.methods import (
    CompactParams,
    MessagesParams,
    PromptParams,
    SessionExportParams,
    SessionIdParams,
    SessionNewParams,
)
from agentd.session.service import SessionService
from tests.hooks.conftest import hook, script, until_end, user_hooks

RECORD = 'cat > "$OUT/$(date +%s%N).json"\n'
"""A hook body that saves its stdin as one file in ``$OUT``."""


def new(project: Path) -> SessionNewParams:
    return SessionNewParams(cwd=str(project), provider="mock")


def inputs(folder: Path) -> list[dict[str, object]]:
    """The stdin objects a recording hook saved, in order."""
    return [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))]


async def test_every_event_reaches_its_hooks_with_the_documented_input(
    service: SessionService, project: Path, xdg_home: Path
) -> None:
    """session_start, user_prompt, pre_tool, post_tool, stop and pre_compact hooks each run
    once per occasion, with the event's JSON on stdin, and each run is a hook_result event
    recorded in the session file."""
    out = xdg_home / "seen"
    out.mkdir()
    record = script(xdg_home, "record.sh", f"OUT={out}\n" + RECORD)
    events = ("session_start", "user_prompt", "pre_tool", "post_tool", "stop", "pre_compact")
    user_hooks(xdg_home, "".join(hook(e, str(record)) for e in events))
    queue = QueueSubscriber()
    info = await service.create(new(project), queue)
    await service.prompt(PromptParams(session_id=info.session_id, text="list the files"))
    seen = await until_end(queue)
    await service.compact(CompactParams(session_id=info.session_id))

    got = inputs(out)
    assert [i["event"] for i in got] == [
        "session_start", "user_prompt", "pre_tool", "post_tool", "stop", "pre_compact"
    ]  # fmt: skip
    assert all(i["sessionId"] == info.session_id and i["cwd"] == str(project) for i in got)
    assert got[1]["prompt"] == "list the files"
    assert got[2]["tool"] == "bash"
    assert got[2]["args"] == {"command": "echo listed > out.txt"}
    assert got[3]["toolCallId"] == got[2]["toolCallId"]
    assert got[3]["isError"] is False
    assert "(no output)" in got[3]["result"]
    assert got[4]["stopReason"] == "end_turn"
    results = [e for e in seen if isinstance(e, HookResult)]
    assert [r.event for r in results] == list(events[:5])
    assert all(r.decision == "allow" and r.exit_code == 0 for r in results)
    assert results[2].tool == "bash"
    assert results[2].tool_call_id == got[2]["toolCallId"]
    recorded = [
        json.loads(line)
        for line in Path(info.path).read_text().splitlines()
        if '"hook_result"' in line
    ]
    assert [r["hook"]["event"] for r in recorded] == list(events)


async def test_session_start_runs_once_per_loaded_session(
    service: SessionService, project: Path, xdg_home: Path
) -> None:
    out = xdg_home / "seen"
    out.mkdir()
    record = script(xdg_home, "record.sh", f"OUT={out}\n" + RECORD)
    user_hooks(xdg_home, hook("session_start", str(record)))
    info = await service.create(new(project))
    for text in ("how are you", "how are you again"):
        await service.prompt(PromptParams(session_id=info.session_id, text=text))
    assert [i["event"] for i in inputs(out)] == ["session_start"]


async def test_a_blocked_prompt_ends_the_run_before_any_model_call(
    service: SessionService, project: Path, xdg_home: Path
) -> None:
    """exit 2 from a user_prompt hook: stop reason ``blocked`` with stderr as the reason, no
    turn, nothing added to the conversation."""
    policy = script(
        xdg_home,
        "policy.sh",
        'grep -q secret && { echo "no secrets in prompts" >&2; exit 2; }\nexit 0\n',
    )
    user_hooks(xdg_home, hook("user_prompt", str(policy)))
    queue = QueueSubscriber()
    info = await service.create(new(project), queue)
    result = await service.prompt(
        PromptParams(session_id=info.session_id, text="print the secret key")
    )
    seen = await until_end(queue)
    assert result.stop_reason == "blocked"
    assert result.turns == 0
    assert result.error == "blocked by a hook: no secrets in prompts"
    [blocked] = [e for e in seen if isinstance(e, HookResult)]
    assert (blocked.decision, blocked.exit_code, blocked.reason) == (
        "block", 2, "no secrets in prompts"
    )  # fmt: skip
    assert isinstance(seen[-1], AgentEnd)
    assert seen[-1].stop_reason == "blocked"
    assert not [e for e in seen if type(e).__name__ == "MessageStart"]
    messages = await service.messages(MessagesParams(session_id=info.session_id))
    assert messages.messages == []
    [placed] = messages.hook_blocks  # before any message: the prompt never joined
    assert (placed.after_message_id, placed.hook) == (None, blocked)
    allowed = await service.prompt(PromptParams(session_id=info.session_id, text="how are you"))
    assert allowed.stop_reason == "end_turn"


async def test_prompt_context_joins_the_prompt_the_model_reads(
    service: SessionService, project: Path, xdg_home: Path
) -> None:
    """additionalContext from session_start and user_prompt hooks is added to the prompt's
    user message (the session records it; the model reads it)."""
    start = script(xdg_home, "start.sh", 'echo \'{"additionalContext": "branch: main"}\'\n')
    prompt = script(
        xdg_home, "prompt.sh", 'echo \'{"additionalContext": "ticket ABC-1 is open"}\'\n'
    )
    user_hooks(xdg_home, hook("session_start", str(start)) + hook("user_prompt", str(prompt)))
    info = await service.create(new(project))
    await service.prompt(PromptParams(session_id=info.session_id, text="how are you"))
    messages = (await service.messages(MessagesParams(session_id=info.session_id))).messages
    first = messages[0]
    assert isinstance(first, UserMessage)
    texts = [c.text for c in first.content if isinstance(c, TextContent)]
    assert texts[0] == "how are you"
    assert "branch: main" in texts[1]
    assert "ticket ABC-1 is open" in texts[1]
    assert "ticket ABC-1 is open" in Path(info.path).read_text()


async def test_a_blocked_tool_call_fails_with_the_reason_as_its_result(
    service: SessionService, project: Path, xdg_home: Path
) -> None:
    """A pre_tool hook answering ``{"decision": "block"}`` on stdout: the call does not run,
    its result (what the model reads) is the reason; the run goes on."""
    (project / "build").mkdir()
    policy = script(
        xdg_home,
        "no-rm.sh",
        "if grep -q 'rm -rf'; then\n"
        '  echo \'{"decision": "block", "reason": "rm -rf is not allowed here"}\'\nfi\n',
    )
    user_hooks(xdg_home, hook("pre_tool", str(policy), matcher="bash"))
    queue = QueueSubscriber()
    info = await service.create(new(project), queue)
    result = await service.prompt(
        PromptParams(session_id=info.session_id, text="remove everything")
    )
    seen = await until_end(queue)
    assert result.stop_reason == "end_turn"
    assert (project / "build").is_dir()
    [end] = [e for e in seen if isinstance(e, ToolExecutionEnd)]
    assert end.is_error
    assert isinstance(end.result[0], TextContent)
    assert "rm -rf is not allowed here" in end.result[0].text
    [blocked] = [e for e in seen if isinstance(e, HookResult)]
    assert (blocked.decision, blocked.tool, blocked.exit_code) == ("block", "bash", 0)
    await _the_history_places_the_block(service, info.session_id, blocked)


async def _the_history_places_the_block(
    service: SessionService, session_id: str, blocked: HookResult
) -> None:
    """``session/messages`` places the block after the message with the blocked call (also
    when read back from the file), and only on the page holding it."""
    page = await service.messages(MessagesParams(session_id=session_id))
    [placed] = page.hook_blocks
    assert placed.hook == blocked
    [caller] = [m for m in page.messages if isinstance(m, AssistantMessage) and m.tool_calls()]
    assert placed.after_message_id == caller.id
    newest = await service.messages(MessagesParams(session_id=session_id, limit=1))
    assert newest.hook_blocks == []  # the page is the final reply only
    await service.close_session(SessionIdParams(session_id=session_id))  # unloaded
    again = await service.messages(MessagesParams(session_id=session_id))
    assert again.hook_blocks == page.hook_blocks


async def test_post_tool_context_is_appended_to_the_result(
    service: SessionService, project: Path, xdg_home: Path
) -> None:
    """A post_tool hook on ``write`` only (matcher ``write|edit``) adds its context to the
    write's result; the bash call's result is untouched."""
    fmt = script(
        xdg_home, "fmt.sh", 'echo \'{"additionalContext": "formatted with the house style"}\'\n'
    )
    user_hooks(xdg_home, hook("post_tool", str(fmt), matcher="write|edit"))
    queue = QueueSubscriber()
    info = await service.create(new(project), queue)
    await service.prompt(PromptParams(session_id=info.session_id, text="write and list"))
    seen = await until_end(queue)
    ends = {e.name: e for e in seen if isinstance(e, ToolExecutionEnd)}
    write_text = " ".join(c.text for c in ends["write"].result if isinstance(c, TextContent))
    bash_text = " ".join(c.text for c in ends["bash"].result if isinstance(c, TextContent))
    assert "formatted with the house style" in write_text
    assert "house style" not in bash_text
    assert [e.tool for e in seen if isinstance(e, HookResult)] == ["write"]


async def test_a_failing_hook_is_a_warning_and_the_run_goes_on(
    service: SessionService, project: Path, xdg_home: Path
) -> None:
    """Exit 1 (a crash): the call still runs, a hook_result says ``error`` and a
    session_warning names the hook and what it said."""
    crash = script(xdg_home, "crash.sh", 'echo "cannot reach the policy server" >&2\nexit 1\n')
    user_hooks(xdg_home, hook("pre_tool", str(crash)))
    queue = QueueSubscriber()
    info = await service.create(new(project), queue)
    result = await service.prompt(PromptParams(session_id=info.session_id, text="list the files"))
    seen = await until_end(queue)
    assert result.stop_reason == "end_turn"
    assert (project / "out.txt").read_text() == "listed\n"
    [failed] = [e for e in seen if isinstance(e, HookResult)]
    assert (failed.decision, failed.exit_code) == ("error", 1)
    assert "cannot reach the policy server" in (failed.reason or "")
    warnings = [e.message for e in seen if isinstance(e, SessionWarning)]
    assert any(str(crash) in w and "exited 1" in w for w in warnings)


async def test_a_blocking_session_start_hook_blocks_every_prompt(
    service: SessionService, project: Path, xdg_home: Path
) -> None:
    """A session_start block is not spent by the first prompt: it is asked again."""
    closed = script(xdg_home, "closed.sh", 'echo "this repository is frozen" >&2\nexit 2\n')
    user_hooks(xdg_home, hook("session_start", str(closed)))
    info = await service.create(new(project))
    for text in ("how are you", "how are you again"):
        result = await service.prompt(PromptParams(session_id=info.session_id, text=text))
        assert result.stop_reason == "blocked"
        assert result.error == "blocked by a hook: this repository is frozen"


async def test_exports_show_each_block(
    service: SessionService, project: Path, xdg_home: Path
) -> None:
    """The session file's hook_result entries: a block is a line of the Markdown and HTML
    exports (escaped); hooks that allowed are not shown."""
    (project / "build").mkdir()
    policy = script(
        xdg_home, "no-rm.sh", "grep -q 'rm -rf' && { echo 'no <rm -rf> here' >&2; exit 2; }\n"
    )
    user_hooks(xdg_home, hook("pre_tool", str(policy), matcher="bash"))
    info = await service.create(new(project))
    await service.prompt(PromptParams(session_id=info.session_id, text="remove everything"))
    markdown = await service.export(SessionExportParams(session_id=info.session_id))
    page = await service.export(SessionExportParams(session_id=info.session_id, format="html"))
    assert "*⊘ pre\\_tool hook blocked bash: no \\<rm -rf\\> here (" in markdown.content
    assert "⊘ pre_tool hook blocked bash: no &lt;rm -rf&gt; here" in page.content
