"""A hostile stdio MCP server, speaking newline-delimited JSON-RPC by hand (no SDK): it lists
the tools ``big`` (answers ``{"mib": N}`` with a text result of N MiB, escaped characters
and all), ``garbage`` (answers with one line of N MiB that is not even JSON) and ``echo``
(answers ``text``).

``python oversize_server.py``: stdio only.
"""

from __future__ import annotations

import json
import sys
from typing import Any

CHUNK = json.dumps('a "quoted" line\n')[1:-1]  # as it is written inside a JSON string
TOOLS = [
    {"name": name, "description": name, "inputSchema": {"type": "object"}}
    for name in ("big", "garbage", "echo")
]


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def big_answer(request_id: Any, mib: float) -> None:
    """A result line of about ``mib`` MiB, written in pieces."""
    head = json.dumps({"jsonrpc": "2.0", "id": request_id})[:-1]
    out = sys.stdout
    out.write(head + ', "result": {"content": [{"type": "text", "text": "')
    piece = CHUNK * (65536 // len(CHUNK))
    for _ in range(int(mib * 1024 * 1024) // len(piece)):
        out.write(piece)
    out.write('"}]}}\n')
    out.flush()


def garbage(mib: float) -> None:
    piece = "x" * 65536
    for _ in range(int(mib * 16)):
        sys.stdout.write(piece)
    sys.stdout.write("\n")
    sys.stdout.flush()


def call(request_id: Any, params: dict[str, Any]) -> None:
    name, arguments = params.get("name"), params.get("arguments") or {}
    if name == "big":
        big_answer(request_id, float(arguments.get("mib", 1)))
    elif name == "garbage":
        garbage(float(arguments.get("mib", 1)))
    else:
        text = str(arguments.get("text", ""))
        content = [{"type": "text", "text": text}]
        send({"jsonrpc": "2.0", "id": request_id, "result": {"content": content}})


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        method, request_id = message.get("method"), message.get("id")
        if request_id is None:
            continue  # notifications
        if method == "initialize":
            info = {"name": "hostile", "version": "1"}
            result = {"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": info}
            send({"jsonrpc": "2.0", "id": request_id, "result": result})
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": request_id, "result": {"tools": TOOLS}})
        elif method == "tools/call":
            call(request_id, message.get("params") or {})
        else:
            send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": method}})


if __name__ == "__main__":
    main()
