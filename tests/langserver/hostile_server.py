"""A small language server that misbehaves on purpose (run as a script; imports nothing of
agentd). ``MODE`` picks how, on a hover request:

- ``crash``: exits in the middle of answering (half a frame written);
- ``hang-init``: never answers ``initialize``;
- ``stderr-flood``: writes megabytes to stderr, then answers normally;
- ``garbage``: answers hover with a frame that is not JSON, then one that does not fit the
  hover type, then a valid answer to a later hover;
- ``huge``: answers hover with a 50 MB message;
- ``slow``: never answers hover (writes ``MARKER.asked``), and records ``$/cancelRequest``
  ids in ``MARKER`` (env);
- ``good``: answers hover with "good hover";
- ``stale-push``: pushes diagnostics naming no version: an empty list on open; after each
  change first a stale "stale problem", then (0.1 s later) the real, empty list, as servers
  that push the old list or the syntax-only list first do.

Every mode records its pid in ``$PID_FILE`` when set (for the orphan tests).
"""

from __future__ import annotations

import json
import os
import sys
import time

MODE = sys.argv[1]


def read() -> dict | None:
    length = 0
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            return None
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode().partition(":")
        if name.lower() == "content-length":
            length = int(value)
    return json.loads(sys.stdin.buffer.read(length))


def send(message: dict | bytes) -> None:
    body = message if isinstance(message, bytes) else json.dumps(message).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    sys.stdout.buffer.flush()


def answer(msg_id: object, result: object) -> None:
    send({"jsonrpc": "2.0", "id": msg_id, "result": result})


CAPABILITIES = {"hoverProvider": True, "textDocumentSync": 1}


def main() -> None:
    if os.environ.get("PID_FILE"):
        with open(os.environ["PID_FILE"], "w") as file:
            file.write(str(os.getpid()))
    hovers = 0
    while (message := read()) is not None:
        method = message.get("method")
        if method == "initialize":
            if MODE != "hang-init":
                answer(message["id"], {"capabilities": CAPABILITIES})
        elif method == "shutdown":
            answer(message["id"], None)
        elif method == "exit":
            return
        elif method == "$/cancelRequest" and os.environ.get("MARKER"):
            with open(os.environ["MARKER"], "a") as file:
                file.write(f"{message['params']['id']}\n")
        elif method == "textDocument/didOpen" and MODE == "stale-push":
            publish(message["params"]["textDocument"]["uri"], [])
        elif method == "textDocument/didChange" and MODE == "stale-push":
            stale_then_clean(message["params"]["textDocument"]["uri"])
        elif method == "textDocument/hover":
            hovers += 1
            hover(message["id"], hovers)


def publish(uri: str, diagnostics: list[dict]) -> None:
    params = {"uri": uri, "diagnostics": diagnostics}  # no version, as some servers do
    send({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": params})


def stale_then_clean(uri: str) -> None:
    stale = {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}},
             "severity": 1, "message": "stale problem"}  # fmt: skip
    publish(uri, [stale])
    time.sleep(0.1)  # the behaviour under test: the real list comes a moment later
    publish(uri, [])


def hover(msg_id: object, count: int) -> None:
    good = {"contents": {"kind": "plaintext", "value": "good hover"}}
    if MODE == "crash":
        sys.stdout.buffer.write(b'Content-Length: 100\r\n\r\n{"jsonrpc"')
        sys.stdout.buffer.flush()
        os._exit(3)
    elif MODE == "stderr-flood":
        for _ in range(4000):
            sys.stderr.write("x" * 1000 + "\n")
        sys.stderr.flush()
        answer(msg_id, good)
    elif MODE == "garbage":
        if count == 1:
            send(b"{this is not json")
            send({"jsonrpc": "2.0", "id": msg_id, "result": {"contents": {"kind": "plaintext"}}})
        else:
            answer(msg_id, good)
    elif MODE == "huge":
        answer(msg_id, {"contents": {"kind": "plaintext", "value": "y" * (50 * 1024 * 1024)}})
    elif MODE == "good":
        answer(msg_id, good)
    elif MODE == "slow" and os.environ.get("MARKER"):  # no answer; the test sees it asked
        with open(os.environ["MARKER"] + ".asked", "w") as file:
            file.write(str(msg_id))


if __name__ == "__main__":
    main()
