"""``agentctl chat``'s ``/rewind`` and ``/compact`` on a real pseudo-terminal (pexpect, a
private daemon, the mock LLM), and the images of a prompt marked in ``sessions show``."""

from __future__ import annotations

import json
from pathlib import Path

import pexpect
import pytest

from tests.agentctl.harness import Sandbox, json_lines
from tests.agentctl.test_tty_e2e import PROMPT, spawn_chat

pytestmark = pytest.mark.e2e

PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 3000


def stored_types(sandbox: Sandbox) -> list[str]:
    return [
        json.loads(line)["type"]
        for path in Path(sandbox.env["XDG_DATA_HOME"]).rglob("*.jsonl")
        for line in path.read_text().splitlines()[1:]
    ]


def test_chat_rewind_and_compact(sandbox: Sandbox) -> None:
    sandbox.user_config("[compaction]\nkeep_tokens = 1\n")  # so two short turns can compact
    child = spawn_chat(sandbox)
    for _ in range(2):
        child.sendline("how are you")
        child.expect("── done")
        child.expect_exact(PROMPT)
    child.sendline("/compact keep the greetings")
    child.expect(r"compacted: \S+ → \S+ tokens of context")
    child.expect_exact(PROMPT)

    child.sendline("hello world")
    child.expect("── done")
    child.expect_exact(PROMPT)
    assert (sandbox.project / "hello.py").exists()
    child.sendline("/rewind")
    child.expect_exact("rewound ")
    child.expect_exact("to before: hello world")
    child.expect(r"removed\s+hello.py")
    child.expect_exact(PROMPT + "hello world")  # the prompt is back on the input line
    assert not (sandbox.project / "hello.py").exists()
    child.send("\x15")  # readline: erase the line
    child.sendline("/rewind x")
    child.expect_exact("usage: /rewind [N]")
    child.expect_exact(PROMPT)
    child.sendline("/help")
    child.expect_exact("/rewind [N]")
    child.expect_exact("/compact [TEXT]")
    child.expect_exact(PROMPT)
    child.sendline("/exit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    types = stored_types(sandbox)
    assert "rewind" in types
    assert "compaction" in types


def test_sessions_show_marks_images(sandbox: Sandbox) -> None:
    image = sandbox.project / "shot.png"
    image.write_bytes(PNG)
    sent = sandbox.run(
        "send", "--json", "--provider", "mock", "--image", "shot.png", "--image", "shot.png",
        "what is in it",
    )  # fmt: skip
    assert sent.returncode == 0, sent.stderr
    session_id = json_lines(sent.stdout)[0]["sessionId"]
    shown = sandbox.run("sessions", "show", session_id)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    start = lines.index("› what is in it")
    assert lines[start + 1 : start + 3] == [
        "  ▣ image 1 (image/png, 2 KB)",
        "  ▣ image 2 (image/png, 2 KB)",
    ]


def test_chat_rewind_stopped_by_a_conflict_then_forced(sandbox: Sandbox) -> None:
    """hello.py changed by hand: ``/rewind`` moves nothing and says ``/rewind --force``
    rewinds anyway; that rewinds the same prompt, removing the file the run created."""
    child = spawn_chat(sandbox)
    child.sendline("hello world")
    child.expect("── done")
    child.expect_exact(PROMPT)
    (sandbox.project / "hello.py").write_text("print('mine')\n")
    child.sendline("/rewind")
    child.expect_exact("not rewound: ")
    child.expect_exact("to before: hello world meets conflicts")
    child.expect(r"conflict\s+hello.py: changed since agentd left it")
    child.expect_exact("nothing was changed; /rewind --force rewinds to before the same prompt")
    child.expect_exact(PROMPT)
    assert (sandbox.project / "hello.py").read_text() == "print('mine')\n"
    child.sendline("/rewind --force")
    child.expect_exact("rewound ")
    child.expect_exact("to before: hello world")
    child.expect(r"removed\s+hello.py")
    child.expect_exact(PROMPT + "hello world")
    assert not (sandbox.project / "hello.py").exists()
    child.send("\x15")
    child.sendline("/exit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
