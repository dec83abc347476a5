"""The child process that parses a PDF for ``read`` (run as a script: ``python -I
pdfwork.py``; it imports nothing of agentd).

The daemon hands it the open file as a descriptor and a JSON request on stdin (``fd``,
``first``/``last`` page asked, ``max_pages``, ``max_bytes`` of text, ``render``: whether
scanned pages become images, ``max_images``, ``max_image_bytes``, ``seconds``: when to stop
taking pages, ``memory``: its address-space limit). It writes one JSON answer on stdout:
``{"pages": N, "items": [{"page", "text", "image"?}], "cut": reason?}`` or
``{"error": text}``. Its memory is capped with ``RLIMIT_AS``, so a hostile file costs the
child, not the daemon; the daemon kills it when it runs past its time.
"""

from __future__ import annotations

import base64
import io
import json
import logging
import os
import resource
import struct
import sys
import time
import zlib
from typing import Any

from pypdf import PdfReader
from pypdf.errors import DependencyError, PdfReadError

MIN_TEXT_CHARS = 1
"""A page with less text than this is image-only (a scan) when it is rendered."""
MAX_RENDER_SIDE = 1568
"""Longest side of a rendered page, in pixels."""


def main() -> None:
    """Read the request, parse the PDF, write the answer (see the module docstring)."""
    request = json.loads(sys.stdin.buffer.read())
    memory = int(request["memory"])
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    with os.fdopen(int(request["fd"]), "rb") as file:
        data = file.read()
    try:
        answer = extract(data, request)
    except MemoryError:
        answer = {"error": "parsing it needed more memory than the limit allows"}
    except RecursionError:
        answer = {"error": "its objects are nested too deeply to parse"}
    except Exception as error:
        answer = {"error": f"it could not be parsed ({type(error).__name__}: {error})"}
    sys.stdout.buffer.write(json.dumps(answer).encode("utf-8"))


def extract(data: bytes, request: dict[str, Any]) -> dict[str, Any]:
    """Text of the asked pages, and scans rendered (see the module docstring)."""
    logging.disable(logging.WARNING)  # pypdf warns about every repaired object
    started = time.monotonic()
    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
    except PdfReadError as error:
        return {"error": f"it is not a readable PDF ({error})"}
    if reader.is_encrypted:
        try:
            opened = reader.decrypt("")
        except (DependencyError, NotImplementedError) as error:
            return {"error": f"it is encrypted and cannot be opened ({error})", "encrypted": True}
        if not opened:
            return {"error": "it is encrypted with a password", "encrypted": True}
    total = len(reader.pages)
    first = int(request["first"])
    if total == 0 or first > total:
        return {"pages": total, "items": [], "error": f"it has {total} page(s)"}
    last = min(int(request["last"] or total), total, first + int(request["max_pages"]) - 1)
    items, cut = _pages(reader, first, last, request, started)
    _render_scans(data, items, request)
    return {"pages": total, "items": items, "cut": cut}


def _pages(
    reader: Any, first: int, last: int, request: dict[str, Any], started: float
) -> tuple[list[dict[str, Any]], str | None]:
    items: list[dict[str, Any]] = []
    size = 0
    for number in range(first, last + 1):
        if items and time.monotonic() - started > float(request["seconds"]):
            return items, "time"
        text = reader.pages[number - 1].extract_text() or ""
        size += len(text.encode("utf-8"))
        if items and size > int(request["max_bytes"]):
            return items, "bytes"
        items.append({"page": number, "text": text})
    return items, None


def _render_scans(data: bytes, items: list[dict[str, Any]], request: dict[str, Any]) -> None:
    """Mark pages without a text layer; render up to ``max_images`` of them as PNG."""
    scans = [item for item in items if len(item["text"].strip()) < MIN_TEXT_CHARS]
    for item in scans:
        item["scan"] = True
    if not scans or not request["render"]:
        return
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(data)
    try:
        for item in scans[: int(request["max_images"])]:
            png = _render(document[item["page"] - 1], int(request["max_image_bytes"]))
            if png is not None:
                item["image"] = base64.b64encode(png).decode("ascii")
    finally:
        document.close()


def _render(page: Any, max_bytes: int) -> bytes | None:
    """The page as a PNG within ``max_bytes`` (None when even a small one is too big)."""
    width, height = page.get_size()
    scale = min(2.0, MAX_RENDER_SIDE / max(width, height, 1))
    for _ in range(3):
        bitmap = page.render(scale=scale, grayscale=True)
        png = _png(bitmap)
        if len(png) <= max_bytes:
            return png
        scale /= 2
    return None


def _png(bitmap: Any) -> bytes:
    """A PNG of a pdfium bitmap (grey, or RGB from its BGR/BGRx pixels)."""
    width, height, stride = bitmap.width, bitmap.height, bitmap.stride
    channels = bitmap.n_channels
    buffer = bytes(bitmap.buffer)
    rows = []
    for y in range(height):
        row = buffer[y * stride : y * stride + width * channels]
        if channels == 1:
            rows.append(b"\0" + row)
        else:
            blue, green, red = row[0::channels], row[1::channels], row[2::channels]
            rgb = bytearray(width * 3)
            rgb[0::3], rgb[1::3], rgb[2::3] = red, green, blue
            rows.append(b"\0" + bytes(rgb))
    kind = 0 if channels == 1 else 2
    header = struct.pack(">IIBBBBB", width, height, 8, kind, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(b"".join(rows), 6))
        + _chunk(b"IEND", b"")
    )


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


if __name__ == "__main__":
    main()
