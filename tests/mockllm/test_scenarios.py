"""Scenario files, the shipped scenarios played through the real providers, and the CLI."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import msgspec
import pytest

from agentd.mockllm import MockLLMServer, ScenarioError, load_scenarios
from agentd.mockllm.scenarios import parse_scenarios
from agentd.protocol.content import (
    AssistantMessage,
    Message,
    TextContent,
    ToolResultMessage,
)
from tests.harness import scaled
from tests.providers.replay import collect, provider_for, request, user

OUR_TOOLS = {"read", "write", "edit", "bash", "grep", "find", "ls"}
REQUIRED_TRIGGERS = [
    "hello world",
    "how are you",
    "run twenty commands",
    "loop forever",
    "be slow",
    "long reply",
    "rate limited",
    "server error",
    "truncated stream",
    "bad tool json",
    "unknown tool",
    "think first",
]


def test_shipped_scenarios_use_our_tools_and_valid_json() -> None:
    """Every tool call names one of our tools with JSON object arguments, except the two
    scenarios that exist to break those rules."""
    shipped = load_scenarios(None)
    assert set(REQUIRED_TRIGGERS) <= {s.trigger for s in shipped.scenarios}
    for scenario in shipped.scenarios:
        for step in scenario.steps:
            for call in step.response.tool_calls:
                if scenario.trigger == "unknown tool":
                    assert call.function.name not in OUR_TOOLS
                    continue
                assert call.function.name in OUR_TOOLS
                if scenario.trigger != "bad tool json":
                    assert isinstance(msgspec.json.decode(call.function.arguments), dict)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("{", "truncated"),
        ('{"scenarios": [{"name": "x", "trigger": "y", "steps": []}]}', "length >= 1"),
        ('{"scenarios": [{"name": "x", "trigger": "y", "stepz": []}]}', "stepz"),
        ('{"scenarios": [], "default_response": {"content": 3}}', "Expected `str`"),
    ],
)
def test_bad_scenario_files(tmp_path: Path, text: str, problem: str) -> None:
    """Syntax and shape errors are ScenarioErrors naming the file and the problem."""
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(ScenarioError, match=problem) as caught:
        load_scenarios(path)
    assert str(path) in str(caught.value)
    with pytest.raises(ScenarioError, match="cannot read"):
        load_scenarios(tmp_path / "missing.json")


def results_for(message: AssistantMessage) -> list[ToolResultMessage]:
    """Pretend to run every tool call of ``message``."""
    return [
        ToolResultMessage(
            id=f"r-{call.id}",
            tool_call_id=call.id,
            tool_name=call.name,
            content=[TextContent(text="done")],
        )
        for call in message.tool_calls()
    ]


async def play(api: str, prompt: str, turns: int = 30) -> list[AssistantMessage]:
    """Drive a shipped scenario through the real provider until the model stops."""
    replies: list[AssistantMessage] = []
    conversation: list[Message] = [user(prompt)]
    async with MockLLMServer() as server, httpx.AsyncClient() as http:
        provider = provider_for(api, http, base_url=server.url, model="mock-model")
        for _ in range(turns):
            outcome = await collect(provider, request(conversation, model="mock-model"))
            reply = outcome.end.message
            replies.append(reply)
            if reply.stop_reason != "tool_use":
                break
            conversation += [reply, *results_for(reply)]
    return replies


@pytest.mark.parametrize("api", ["openai", "anthropic"])
async def test_hello_world_through_the_real_provider(api: str) -> None:
    """write hello.py, run it with bash, then report."""
    replies = await play(api, "Please write a hello world script")
    assert [r.stop_reason for r in replies] == ["tool_use", "tool_use", "stop"]
    write = replies[0].tool_calls()[0]
    assert (write.name, write.arguments["path"]) == ("write", "hello.py")
    assert "print(" in write.arguments["content"]
    assert replies[1].tool_calls()[0].arguments == {"command": "python3 hello.py"}
    assert "Hello, World!" in replies[2].text()


@pytest.mark.parametrize("api", ["openai", "anthropic"])
async def test_twenty_commands(api: str) -> None:
    """Twenty bash turns, then a final text."""
    replies = await play(api, "run twenty commands")
    assert len(replies) == 21
    assert replies[19].tool_calls()[0].arguments == {"command": "echo step 20"}
    assert replies[-1].stop_reason == "stop"


async def test_long_reply_streams_a_thousand_deltas() -> None:
    """The long reply is exactly 1,000 text deltas."""
    async with MockLLMServer() as server, httpx.AsyncClient() as http:
        provider = provider_for("openai", http, base_url=server.url)
        outcome = await collect(provider, request([user("give me a long reply")]))
    assert len(outcome.deltas) == 1000
    assert len(outcome.end.message.text()) == 5000


@pytest.mark.parametrize("api", ["openai", "anthropic"])
async def test_think_first(api: str) -> None:
    """Reasoning streams as thinking before the text."""
    replies = await play(api, "think first, then answer")
    kinds = [type(block).__name__ for block in replies[0].content]
    assert kinds == ["ThinkingContent", "TextContent"]


def test_custom_scenarios_validate_types() -> None:
    """parse_scenarios accepts decoded objects too."""
    parsed = parse_scenarios(
        {"scenarios": [{"name": "n", "trigger": "t", "steps": [{"response": {}}]}]}
    )
    assert parsed.scenarios[0].steps[0].response.text == ""


def start_cli(*args: str) -> subprocess.Popen[str]:
    code = "import sys; from agentd.mockllm.server import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.Popen(
        [sys.executable, "-c", code, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


def test_cli_serves_until_sigterm() -> None:
    """``agentd mock-llm`` prints its URL to stderr, answers, and exits 0 on SIGTERM."""
    process = start_cli("--port", "0")
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        assert line.startswith("mock-llm listening on http://127.0.0.1:")
        url = line.split()[-1]
        body = {"messages": [{"role": "user", "content": "how are you"}]}
        reply = httpx.post(url + "/chat/completions", json=body, timeout=scaled(10))
        assert "doing well" in reply.json()["choices"][0]["message"]["content"]
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=scaled(10)) == 0
        assert process.stdout is not None
        assert process.stdout.read() == ""
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def test_cli_rejects_a_bad_scenarios_file(tmp_path: Path) -> None:
    """A broken scenarios file is reported on stderr with exit code 2, no traceback."""
    bad = tmp_path / "bad.json"
    bad.write_text("[]")
    process = start_cli("--scenarios", str(bad))
    started = time.monotonic()
    out, err = process.communicate(timeout=scaled(30))
    assert process.returncode == 2
    assert err.startswith("mock-llm: ")
    assert "Traceback" not in err
    assert out == ""
    assert time.monotonic() - started < scaled(30)
