"""The plugin's shared mode against a socket another user squatted (see
``tests/security/test_socket_squat.py``): ``agentctl bridge`` refuses it, the user is told
why, and the fake daemon receives nothing."""

from __future__ import annotations

import os

import pytest

from tests.nvim.harness import EditorFactory, Home
from tests.security.squat import NOBODY, Squat, shared_tmp


@pytest.mark.skipif(os.geteuid() != 0, reason="a second uid needs root")
def test_shared_mode_refuses_another_users_socket(
    editor_factory: EditorFactory, home: Home
) -> None:
    fake = Squat(shared_tmp(home.root))
    try:
        editor = editor_factory(connection="shared", socket=str(fake.socket))
        editor.nvim.command("Agent hello")
        notes = editor.wait_for(
            lambda: [n for n in editor.notes() if "refusing to connect" in n],
            what="the bridge's refusal as a notification",
        )
        assert f"belongs to uid {NOBODY}" in notes[0]
        assert fake.received(0) == []
        editor.finish()
    finally:
        if fake.process.poll() is None:
            fake.process.kill()
            fake.process.wait()
