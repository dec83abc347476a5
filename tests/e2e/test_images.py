"""Images end to end: ``agentctl send --image`` and ``read`` of an image file, through a real
daemon, in each provider's request format (OpenAI Chat ``image_url``, Responses
``input_image``, Anthropic ``image`` blocks), read back from the mock LLM's recorded requests;
and the clear errors for a file that is not an image or is too big."""

from __future__ import annotations

import asyncio
import base64
import json
import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest

from agentd.mockllm import MockLLMServer
from agentd.mockllm.scenarios import BUILT_IN, parse_scenarios
from tests.harness import Home, new_session, run, scaled, stdio_client
from tests.scenarios import tool_call

pytestmark = pytest.mark.e2e

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(40))
PNG_B64 = base64.b64encode(PNG).decode()
PROVIDERS = """
[providers.oai]
api = "openai"
base_url = "{url}"
models = ["mock-model"]

[providers.resp]
api = "openai-responses"
base_url = "{url}"
models = ["mock-model"]

[providers.ant]
api = "anthropic"
base_url = "{url}"
models = ["mock-model"]
"""
READ_PICTURE = {
    "name": "read-picture",
    "trigger": "look at the picture",
    "steps": [
        {"response": {"tool_calls": [tool_call("read", {"path": "pic.png"})]}},
        {"response": {"content": "A picture."}},
    ],
}

NO_VISION = {
    "name": "no-vision",
    "trigger": "describe the screenshot",
    "fail": [
        {"status": 400, "message": "this model does not support image input", "forever": True}
    ],
    "steps": [{"response": {"content": "never"}}],
}


@pytest.fixture
async def llm(home: Home) -> AsyncIterator[MockLLMServer]:
    """A mock LLM that the user's config points three providers at, one per wire format."""
    builtin = json.loads(BUILT_IN.read_text())
    scenarios = parse_scenarios(
        {**builtin, "scenarios": [READ_PICTURE, NO_VISION, *builtin["scenarios"]]}
    )
    async with MockLLMServer(scenarios) as server:
        config = home.config_dir / "agentd" / "config.toml"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(PROVIDERS.format(url=server.url))
        yield server


async def agentctl(home: Home, *args: str) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "agentctl",
        "send",
        "--stdio",
        *args,
        env=home.env,
        cwd=home.project,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), scaled(60))
    return process.returncode or 0, out.decode(), err.decode()


def images_in(request: dict[str, Any], provider: str) -> list[Any]:
    """Every image part of a recorded request, in the provider's own shape."""
    found: list[Any] = []
    items = request.get("input") if provider == "resp" else request["messages"]
    for item in items or []:
        parts = item.get("content") if isinstance(item, dict) else None
        for part in parts if isinstance(parts, list) else []:
            found += _image_parts(part)
    return found


def _image_parts(part: dict[str, Any]) -> list[Any]:
    if part.get("type") in ("image_url", "input_image"):
        return [part]
    if part.get("type") == "image":
        return [part]
    if part.get("type") == "tool_result" and isinstance(part.get("content"), list):
        return [p for p in part["content"] if p.get("type") == "image"]
    return []


EXPECTED = {
    "oai": {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG_B64}"}},
    "resp": {"type": "input_image", "image_url": f"data:image/png;base64,{PNG_B64}"},
    "ant": {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": PNG_B64},
    },
}


def strip(part: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in part.items() if k not in ("cache_control", "detail")}


@pytest.mark.parametrize("provider", ["oai", "resp", "ant"])
async def test_agentctl_send_image(home: Home, llm: MockLLMServer, provider: str) -> None:
    (home.project / "shot.png").write_bytes(PNG)
    code, _, err = await agentctl(
        home, "--provider", provider, "--image", "shot.png", "--image", "shot.png", "how are you"
    )
    assert code == 0, err
    parts = [strip(p) for p in images_in(llm.requests[-1], provider)]
    assert parts == [EXPECTED[provider], EXPECTED[provider]]


@pytest.mark.parametrize("provider", ["oai", "resp", "ant"])
async def test_read_of_an_image_reaches_the_model(
    home: Home, llm: MockLLMServer, provider: str
) -> None:
    (home.project / "pic.png").write_bytes(PNG)
    async with stdio_client(home) as client:
        sid = await new_session(client, home, provider=provider)
        result, _ = await run(client, sid, "look at the picture")
    assert result["stopReason"] == "end_turn"
    assert [strip(p) for p in images_in(llm.requests[-1], provider)] == [EXPECTED[provider]]


async def test_bad_images_are_refused_with_a_clear_error(home: Home, llm: MockLLMServer) -> None:
    (home.project / "notes.txt").write_text("not an image\n")
    (home.project / "huge.png").write_bytes(PNG + b"\0" * (5 * 1024 * 1024))
    code, _, err = await agentctl(home, "--provider", "oai", "--image", "notes.txt", "hi")
    assert code == 2
    assert "notes.txt is not a PNG, JPEG, GIF or WebP image" in err
    code, _, err = await agentctl(home, "--provider", "oai", "--image", "huge.png", "hi")
    assert code == 2
    assert "image huge.png is 5.0 MB; images may be at most 5 MB" in err
    code, _, err = await agentctl(home, "--provider", "oai", "--image", "gone.png", "hi")
    assert code == 2
    assert "cannot read image gone.png: No such file or directory" in err
    assert len(llm.requests) == 0


async def test_a_model_that_refuses_images_is_a_clear_error_without_retries(
    home: Home, llm: MockLLMServer
) -> None:
    (home.project / "shot.png").write_bytes(PNG)
    code, out, err = await agentctl(
        home, "--provider", "oai", "--image", "shot.png", "describe the screenshot"
    )
    assert code == 1
    assert "this model does not support image input" in out + err
    assert len(llm.requests) == 1
