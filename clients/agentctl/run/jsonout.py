"""The ``--json`` output contract: one JSON object per line, flushed line by line.

Lines, in order:

1. ``{"type":"session","sessionId":…,"cwd":…,"provider":…,"model":…}``
2. one line per event: the ``session/event`` params as the daemon sent them,
   ``{"sessionId":…,"seq":…,"event":{"type":…,…}}``
3. ``{"type":"result","stopReason":…,"sessionId":…,"turns":…,"usage":…,"cost":…,
   "durationMs":…,"exitCode":…,"error"?:…}``

Lines end with ``\\n`` only; JSON strings escape every control character, so a line never
contains a raw newline.
"""

from __future__ import annotations

from typing import Any, BinaryIO

import msgspec

from agentd.protocol.methods import SessionInfo

_encode = msgspec.json.Encoder().encode


class JsonLines:
    """Writes JSON lines to a binary stream, flushing after each one."""

    def __init__(self, out: BinaryIO) -> None:
        self.out = out

    def write(self, value: Any) -> None:
        """Encode ``value`` (builtins, Structs or ``msgspec.Raw``) as one line and flush."""
        self.out.write(_encode(value) + b"\n")
        self.out.flush()

    def raw(self, data: bytes) -> None:
        """Write already encoded JSON (one value without newlines) as one line and flush."""
        self.out.write(data + b"\n")
        self.out.flush()

    def session(self, info: SessionInfo) -> None:
        """The first line: which session the run uses."""
        line: dict[str, Any] = {
            "type": "session",
            "sessionId": info.session_id,
            "cwd": info.cwd,
            "provider": info.provider,
            "model": info.model,
            "permissionMode": info.permission_mode,
        }
        if info.title is not None:
            line["title"] = info.title
        if info.path is not None:
            line["path"] = info.path
        self.write(line)
