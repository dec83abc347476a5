"""Images in session files are stored once, content-addressed, beside the file: lines hold a
``sha256:`` reference, loading puts the data back, forks get their own copy, a missing image
file becomes a note."""

from __future__ import annotations

import base64
import hashlib
import json
import time
from pathlib import Path

from agentd.protocol.content import ImageContent, TextContent, ToolResultMessage, UserMessage
from agentd.store.blobs import images_dir, remove
from agentd.store.file import SessionFile

CWD = "/home/me/proj"
RAW = b"\x89PNG\r\n\x1a\n\x00" + bytes(range(256)) * 4
DATA = base64.b64encode(RAW).decode()
DIGEST = hashlib.sha256(RAW).hexdigest()


def user(text: str, message_id: str) -> UserMessage:
    image = ImageContent(data=DATA, mime_type="image/png")
    return UserMessage(
        id=message_id, content=[TextContent(text=text), image], timestamp=time.time()
    )


def lines(session: SessionFile) -> list[dict[str, object]]:
    return [json.loads(line) for line in session.path.read_text().splitlines()[1:]]


def test_an_image_is_stored_once_and_loaded_back(tmp_path: Path) -> None:
    with SessionFile.create(tmp_path, cwd=CWD, session_id="img-1") as session:
        session.append_message(user("first", "u1"))
        session.append_message(
            ToolResultMessage(
                id="t1",
                tool_call_id="c1",
                tool_name="read",
                content=[ImageContent(data=DATA, mime_type="image/png")],
                timestamp=time.time(),
            )
        )
        session.append_message(user("again", "u2"))
        in_memory = session.messages()
        path = session.path
    stored = lines(session)
    assert [e["message"]["content"][-1]["data"] for e in stored] == [f"sha256:{DIGEST}"] * 3
    assert DATA not in path.read_text()
    folder = images_dir(path)
    assert [p.name for p in folder.iterdir()] == [DIGEST]
    assert (folder / DIGEST).read_bytes() == RAW
    assert (folder / DIGEST).stat().st_mode & 0o777 == 0o600
    assert folder.stat().st_mode & 0o777 == 0o700
    assert in_memory[0].content[1] == ImageContent(data=DATA, mime_type="image/png")
    with SessionFile.open(path, secrets=["unrelated-secret-value"]) as loaded:
        images = [e.message.content[-1] for e in loaded.entries()]  # type: ignore[union-attr]
    assert images == [ImageContent(data=DATA, mime_type="image/png")] * 3


def test_a_fork_has_its_own_images_and_a_missing_one_is_a_note(tmp_path: Path) -> None:
    with SessionFile.create(tmp_path, cwd=CWD, session_id="img-2") as session:
        session.append_message(user("look", "u1"))
        with session.fork(tmp_path, session_id="img-3") as child:
            child_path = child.path
        path = session.path
    assert (images_dir(child_path) / DIGEST).read_bytes() == RAW
    remove(path)
    assert not images_dir(path).exists()
    with SessionFile.open(path) as loaded:
        note = loaded.messages()[0].content[1]
    assert isinstance(note, TextContent)
    assert note.text.startswith("[image unavailable: its file")
    with SessionFile.open(child_path) as forked:
        assert forked.messages()[0].content[1] == ImageContent(data=DATA, mime_type="image/png")
