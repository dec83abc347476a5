"""The chat page's files (``agentd/web/ui/``), read once and served with ETags.

The set of files is fixed when the server starts: a request can only name one of them, so no
path from the URL ever reaches the file system.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

UI_DIR = Path(__file__).with_name("ui")

CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
}

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
"""The page's Content-Security-Policy: its own scripts and styles only, nothing inline."""


@dataclass(frozen=True)
class Asset:
    """One file: its bytes, type and strong ETag."""

    body: bytes
    content_type: str
    etag: str


def load_assets(root: Path = UI_DIR) -> dict[str, Asset]:
    """``{url path: asset}`` for the UI files: ``/`` is ``index.html``, the rest under ``/ui/``."""
    assets: dict[str, Asset] = {}
    for path in sorted(root.rglob("*")):
        content_type = CONTENT_TYPES.get(path.suffix)
        if content_type is None or not path.is_file():
            continue
        body = path.read_bytes()
        etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
        url = "/ui/" + path.relative_to(root).as_posix()
        assets[url] = Asset(body, content_type, etag)
    assets["/"] = assets["/ui/index.html"]
    return assets
