"""Image files given to a prompt (``agentctl send --image``, ``/image`` in ``chat``).

The format is decided by the file's first bytes, not its name: PNG, JPEG, GIF and WebP are
accepted; anything else, an unreadable file or one over :data:`MAX_IMAGE_BYTES` is a
:class:`~agentctl.common.UsageError` naming the file and the rule.
"""

from __future__ import annotations

import base64
from pathlib import Path

from agentctl.common import UsageError
from agentd.protocol.content import ImageContent

MAX_IMAGE_BYTES = 5 * 1024 * 1024
"""The largest image sent (the daemon's ``read`` tool has the same default cap)."""


def sniff(head: bytes) -> str | None:
    """The media type of an image by its first bytes (None: not PNG, JPEG, GIF or WebP)."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def load_image(path: str, max_bytes: int = MAX_IMAGE_BYTES) -> ImageContent:
    """The image at ``path`` as prompt content; UsageError when it cannot be sent."""
    file = Path(path).expanduser()
    try:
        size = file.stat().st_size
        if size > max_bytes:
            raise UsageError(
                f"image {path} is {size / 1048576:.1f} MB; images may be at most "
                f"{max_bytes / 1048576:g} MB"
            )
        data = file.read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read image {path}: {exc.strerror or exc}") from None
    mime = sniff(data[:16])
    if mime is None:
        raise UsageError(f"{path} is not a PNG, JPEG, GIF or WebP image")
    return ImageContent(data=base64.b64encode(data).decode("ascii"), mime_type=mime)


def load_images(paths: list[str] | None) -> list[ImageContent]:
    """Every image of ``--image`` options, in order (UsageError at the first bad one)."""
    return [load_image(path) for path in paths or ()]
