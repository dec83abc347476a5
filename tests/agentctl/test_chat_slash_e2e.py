"""Custom commands in ``agentctl chat`` on a real pseudo-terminal (pexpect): Tab completes
``/`` names (readline), ``/help`` lists the custom commands, a custom command runs its
expansion, an unknown one is an error naming the known ones, and the chat's own commands win."""

from __future__ import annotations

import json
from pathlib import Path

import pexpect
import pytest

from agentctl.chat.completion import SlashCompleter, custom_help
from agentd.protocol.commands import CommandInfo
from tests.agentctl.harness import Sandbox
from tests.agentctl.test_tty_e2e import PROMPT, spawn_chat

pytestmark = pytest.mark.e2e


def write_commands(sandbox: Sandbox) -> None:
    folder = sandbox.config_dir / "agentd" / "commands"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "review.md").write_text(
        "---\ndescription: Review a file\nargument-hint: FILE\n---\nReview $1 please."
    )
    (folder / "release-notes.md").write_text("Write the release notes.")
    (folder / "clear.md").write_text("A custom /clear, hidden by the chat's own.")


def test_an_unknown_command_in_a_new_chat_leaves_no_session(sandbox: Sandbox) -> None:
    write_commands(sandbox)
    child = spawn_chat(sandbox)
    child.sendline("/nope")
    child.expect_exact("unknown command /nope")
    child.expect_exact(PROMPT)
    child.sendline("/exit")
    child.expect(pexpect.EOF)
    child.close()
    assert list(Path(sandbox.env["XDG_DATA_HOME"]).rglob("*.jsonl")) == []


def test_tab_completes_slash_names_and_commands_run(sandbox: Sandbox) -> None:
    write_commands(sandbox)
    child = spawn_chat(sandbox)
    child.send("/rev\t")
    child.expect_exact("/review ")  # completed by readline, a space after it
    child.send("notes.txt\r")
    child.expect("── done")
    child.expect_exact(PROMPT)
    child.send("/rel\t\r")
    child.expect("── done")
    child.expect_exact(PROMPT)
    child.send("/he\t\r")
    child.expect_exact("custom commands")
    child.expect(r"/clear\s+A custom /clear, hidden by the chat's own. \(hidden by")
    child.expect(r"/review FILE\s+Review a file")
    child.expect_exact(PROMPT)
    child.sendline("/reveiw x")
    child.expect_exact("unknown command /reveiw")
    child.expect_exact("/review")
    child.expect_exact(PROMPT)
    child.sendline("/exit")
    child.expect(pexpect.EOF)
    child.close()
    users = [
        json.loads(line)["message"]
        for path in Path(sandbox.env["XDG_DATA_HOME"]).rglob("*.jsonl")
        for line in path.read_text().splitlines()
        if '"role":"user"' in line
    ]
    assert [(m.get("command"), m["content"][0]["text"]) for m in users] == [
        ("/review notes.txt", "Review notes.txt please."),
        ("/release-notes", "Write the release notes."),
    ]


def test_the_completer_offers_first_words_only() -> None:
    completer = SlashCompleter()
    completer.custom = [
        CommandInfo(name="review", description="r", argument_hint=None, source="user"),
        CommandInfo(name="help", description="h", argument_hint=None, source="project"),
    ]
    assert completer.candidates("/re", 0, "/re") == ["/rewind ", "/review "]  # own first
    assert completer.candidates("/", 0, "/")[:2] == ["/help ", "/clear "]
    assert completer.candidates("/", 0, "/").count("/help ") == 1  # the built-in wins
    assert completer.candidates("say /re", 4, "/re") == []
    assert completer.candidates("re", 0, "re") == []
    assert "(hidden by the chat's own command)" in custom_help(completer.custom)
