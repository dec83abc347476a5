"""Images from Neovim: ``:AgentSend`` and ``:Agent`` with image file paths among the words
send them as ``images`` (kept in the session's user message); a file that is not an image is
a clear error and nothing is sent. Real nvim, real daemon."""

from __future__ import annotations

import base64
import hashlib
import json

import pytest

from tests.nvim.harness import Editor

pytestmark = pytest.mark.e2e

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 3


def user_images(editor: Editor) -> list[tuple[str, str]]:
    (path,) = editor.home.sessions.glob("*/*.jsonl")
    entries = [json.loads(line) for line in path.read_text().splitlines()[1:]]
    users = [e["message"] for e in entries if e.get("message", {}).get("role") == "user"]
    return [(b["mimeType"], b["data"]) for b in users[-1]["content"] if b["type"] == "image"]


def test_agent_send_with_an_image_path(editor: Editor) -> None:
    (editor.home.project / "shot.png").write_bytes(PNG)
    editor.nvim.current.buffer[:] = ["print('hi')"]
    editor.nvim.command("AgentSend what is in shot.png")
    text = editor.wait_run_end()
    assert "what is in\n" in text
    digest = hashlib.sha256(PNG).hexdigest()
    assert user_images(editor) == [("image/png", f"sha256:{digest}")]  # stored once, beside
    (session_file,) = editor.home.sessions.glob("*/*.jsonl")
    assert (session_file.with_suffix(".images") / digest).read_bytes() == PNG


def test_a_bad_image_is_refused_and_nothing_is_sent(editor: Editor) -> None:
    (editor.home.project / "fake.png").write_text("not an image")
    editor.nvim.command("Agent look at fake.png")
    editor.wait_for(lambda: any("fake.png is not a PNG" in n for n in editor.notes()))
    assert not editor.lua("return require('agentd.client').running")
    assert list(editor.home.sessions.glob("*/*.jsonl")) == []


def test_base64_without_vim_base64(editor: Editor) -> None:
    """The pure-Lua encoder (Neovim 0.7) agrees with Python's for every padding case."""
    for data in (b"", b"a", b"ab", b"abc", PNG[:100]):
        encoded = editor.lua(
            "local saved = vim.base64; vim.base64 = nil;"
            " local out = require('agentd.images').base64(...); vim.base64 = saved; return out",
            data,
        )
        assert encoded == base64.b64encode(data).decode()
