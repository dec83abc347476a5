"""Images in the chat page (real Chromium, real daemon): pasted into the message box or
dropped on the composer, shown as thumbnails, sent with the prompt as ``images`` (the daemon
stores them in the user message), refused clearly when not an image."""

from __future__ import annotations

import base64
import struct
import zlib
from pathlib import Path

import pytest

from tests.web.conftest import WebDaemon
from tests.web.test_page import IDLE, open_page, send, shoot

pytest.importorskip("playwright")
from playwright.sync_api import BrowserContext, Page, expect

from tests.web.test_page import browser, context  # noqa: F401  (fixtures)


def _png(size: int = 24) -> bytes:
    """A real PNG: a square with a diagonal stripe (so a screenshot shows a picture)."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        )

    rows = b"".join(
        b"\0"
        + b"".join(b"\x20\x80\xe0" if abs(x - y) < 4 else b"\xf0\xa0\x30" for x in range(size))
        for y in range(size)
    )
    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


PNG = _png()
GIF = b"GIF89a" + bytes(range(30))

DISPATCH = """([kind, name, type, b64]) => {
  const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  const data = new DataTransfer();
  data.items.add(new File([bytes], name, { type }));
  const input = document.querySelector('.composer .input');
  const event = kind === 'paste'
    ? new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true })
    : new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true });
  input.dispatchEvent(event);
}"""


def give(page: Page, kind: str, name: str, mime: str, data: bytes) -> None:
    page.evaluate(DISPATCH, [kind, name, mime, base64.b64encode(data).decode()])


def test_pasted_and_dropped_images_go_with_the_prompt(
    context: BrowserContext,  # noqa: F811
    web: WebDaemon,
    artifacts: Path,
) -> None:
    page = open_page(context, web)
    give(page, "paste", "shot.png", "image/png", PNG)
    give(page, "drop", "anim.gif", "image/gif", GIF)
    thumbs = page.get_by_role("list", name="Attached images").locator("img")
    expect(thumbs).to_have_count(2)
    shoot(page, artifacts, "attachments")
    send(page, "how are you")
    page.wait_for_function(IDLE)
    expect(thumbs).to_have_count(0)
    expect(page.locator(".item--user").last.locator("img.user-image")).to_have_count(2)
    session_id = page.url.split("#session=", 1)[1]
    messages = web.rpc("session/messages", {"sessionId": session_id})["messages"]
    user = next(m for m in messages if m["role"] == "user")
    images = [(b["mimeType"], b["data"]) for b in user["content"] if b["type"] == "image"]
    assert images == [
        ("image/png", base64.b64encode(PNG).decode()),
        ("image/gif", base64.b64encode(GIF).decode()),
    ]


def test_a_file_that_is_not_an_image_is_refused(
    context: BrowserContext,  # noqa: F811
    web: WebDaemon,
) -> None:
    page = open_page(context, web)
    give(page, "paste", "notes.png", "image/png", b"just text, named .png")
    expect(page.locator(".attach-error")).to_have_text(
        "notes.png is not a PNG, JPEG, GIF or WebP image"
    )
    expect(page.get_by_role("list", name="Attached images").locator("img")).to_have_count(0)
    give(page, "drop", "shot.png", "image/png", PNG)
    page.get_by_role("button", name="Remove shot.png").click()
    expect(page.get_by_role("list", name="Attached images").locator("img")).to_have_count(0)
