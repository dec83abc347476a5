"""Images in session files, stored once: content-addressed files beside the session file.

An image in a user or tool-result message is written, decoded, to
``<session file without .jsonl>.images/<sha256>`` (directory 0700, files 0600, written once:
an image seen again costs nothing) and its entry line holds ``"data": "sha256:<hex>"``
instead of the base64 text. So a session that shows the same screenshot ten times holds it
once, the lines stay small, and redaction never scans (or damages) image data. Loading a
file puts the data back; an image whose file is gone becomes a text block saying so.
:func:`remove` deletes a session's images with it.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from agentd.protocol.content import (
    ImageContent,
    TextContent,
    ToolResultMessage,
    UserContent,
    UserMessage,
)
from agentd.protocol.session_file import MessageEntry
from agentd.store.contents import digest_of

REF_PREFIX = "sha256:"
T = TypeVar("T")


def images_dir(session_path: Path) -> Path:
    """Where the images of the session file ``session_path`` are kept."""
    return session_path.with_suffix(".images")


def externalized(entry: T, session_path: Path) -> T:
    """``entry`` with the data of each of its images replaced by a reference to the image's
    file (written when new); other entries, and images already referenced, unchanged.
    Raises OSError when an image file cannot be written."""
    return _mapped(entry, lambda block: _store(block, session_path), inline=True)


def resolved(entry: T, session_path: Path) -> T:
    """``entry`` with referenced images read back (a missing file: a text block)."""
    return _mapped(entry, lambda block: _load(block, session_path), inline=False)


def _mapped(entry: T, change: Callable[[ImageContent], UserContent], *, inline: bool) -> T:
    """``entry`` with ``change`` applied to its inline (or referenced) images."""
    if not isinstance(entry, MessageEntry):
        return entry
    message = entry.message
    if not isinstance(message, UserMessage | ToolResultMessage):
        return entry
    chosen = [
        isinstance(b, ImageContent) and b.data.startswith(REF_PREFIX) != inline
        for b in message.content
    ]
    if not any(chosen):
        return entry
    content: list[Any] = [
        change(block) if pick and isinstance(block, ImageContent) else block
        for block, pick in zip(message.content, chosen, strict=True)
    ]
    updated = msgspec.structs.replace(message, content=content)
    return msgspec.structs.replace(entry, message=updated)


def remove(session_path: Path) -> None:
    """Delete the images of a deleted session (nothing when it has none)."""
    import shutil  # only when a session is deleted

    shutil.rmtree(images_dir(session_path), ignore_errors=True)


def _store(image: ImageContent, session_path: Path) -> ImageContent:
    try:
        raw = base64.b64decode(image.data, validate=True)
    except (binascii.Error, ValueError):
        return image  # not valid base64: kept inline, as given
    digest = digest_of(raw)
    directory = images_dir(session_path)
    target = directory / digest
    if not target.exists():
        directory.mkdir(mode=0o700, exist_ok=True)
        partial = directory / f".{digest}.{os.getpid()}.tmp"
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            with os.fdopen(fd, "wb") as file:
                file.write(raw)
                file.flush()
                os.fsync(file.fileno())
            partial.replace(target)
        finally:
            with contextlib.suppress(FileNotFoundError):
                partial.unlink()
    return msgspec.structs.replace(image, data=REF_PREFIX + digest)


def _load(image: ImageContent, session_path: Path) -> ImageContent | TextContent:
    digest = image.data.removeprefix(REF_PREFIX)
    try:
        raw = (images_dir(session_path) / digest).read_bytes()
    except OSError:
        raw = None
    if raw is None or digest_of(raw) != digest:
        return TextContent(
            text=f"[image unavailable: its file {digest[:12]}… is missing or damaged]"
        )
    return msgspec.structs.replace(image, data=base64.b64encode(raw).decode("ascii"))
