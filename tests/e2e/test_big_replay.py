"""A big session's ``session/load {replay}`` streams while the daemon serves other clients
(real daemon process, real sockets): the replay is paced by the replaying client's connection,
so a client that reads nothing holds up only its own replay, and what happens to the session
meanwhile follows the replayed history, before the load's answer."""

from __future__ import annotations

import json
import select
import socket
from pathlib import Path
from typing import Any

from agentd.protocol.content import AssistantMessage, TextContent, UserMessage
from agentd.store import SessionFile
from tests.harness import Home, new_session, socket_client, stop, wait_until_async

TURNS = 1500
"""User and assistant messages of about 2 KB each: 6 MB, far more than socket buffers hold."""


def _grow(path: Path) -> list[str]:
    """Append ``TURNS`` exchanges to the session file at ``path``; the message ids, in order."""
    ids: list[str] = []
    with SessionFile.open(path, lock=True) as file:
        for n in range(TURNS):
            text = f"turn {n} " + "x" * 2000
            file.append_message(
                UserMessage(id=f"u{n}", content=[TextContent(text=text)], timestamp=n)
            )
            reply = AssistantMessage(
                id=f"a{n}", content=[TextContent(text=text)], provider="mock",
                model="mock-model", timestamp=n,
            )  # fmt: skip
            file.append_message(reply)
            ids += [f"u{n}", f"a{n}"]
    return ids


def _send(sock: socket.socket, request_id: int, method: str, params: dict[str, Any]) -> None:
    frame = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    sock.sendall(json.dumps(frame).encode() + b"\n")


def _read_until_answer(sock: socket.socket, request_id: int) -> list[dict[str, Any]]:
    """Every frame ``sock`` receives up to and including the answer to ``request_id``."""
    frames: list[dict[str, Any]] = []
    pending = b""
    sock.settimeout(60)
    while True:
        chunk = sock.recv(1 << 20)
        assert chunk, "the daemon closed the connection"
        pending += chunk
        *complete, pending = pending.split(b"\n")
        for line in complete:
            frames.append(json.loads(line))
            if frames[-1].get("id") == request_id:
                return frames


async def _replay_with_a_note_meanwhile(
    home: Home, *, subscribed: bool
) -> tuple[list[str], dict[str, Any], dict[str, Any], list[dict[str, Any]]]:
    """A session of ``TURNS`` exchanges replayed to a raw client (``subscribed``: that was
    watching it already) that reads nothing until another client has added a note; returns
    the message ids, the note's answer, the session's state then, and every frame the
    replaying client got up to its load's answer."""
    daemon = home.start_socket_daemon()
    try:
        async with socket_client(home) as other:
            sid = await new_session(other, home)
            await other.call("session/close", {"sessionId": sid})
            (path,) = home.sessions.rglob(f"*_{sid}.jsonl")
            ids = _grow(path)
            await other.call("session/load", {"sessionId": sid})
            replaying = socket.socket(socket.AF_UNIX)
            replaying.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            replaying.connect(str(home.socket))
            _send(replaying, 1, "initialize", {})
            _read_until_answer(replaying, 1)
            if subscribed:
                _send(replaying, 3, "session/subscribe", {"sessionId": sid})
                _read_until_answer(replaying, 3)
            _send(replaying, 2, "session/load", {"sessionId": sid, "replay": True})

            async def replay_began() -> bool:
                return bool(select.select([replaying], [], [], 0)[0])

            await wait_until_async(replay_began, 30, "the replay's first frames", 0.01)
            # the replaying client reads nothing now: the other one is still served
            note = await other.call("session/note", {"sessionId": sid, "text": "meanwhile"})
            state = await other.call("session/state", {"sessionId": sid})
            frames = _read_until_answer(replaying, 2)
            replaying.close()
    finally:
        stop(daemon)
    return ids, note, state, frames


async def test_a_big_replay_yields_to_another_clients_calls(home: Home) -> None:
    ids, note, state, frames = await _replay_with_a_note_meanwhile(home, subscribed=False)
    assert note == {"ok": True}
    assert state["messageCount"] == len(ids) + 1
    *events, answer = frames
    assert answer["result"]["messageCount"] == len(ids) + 1
    items = [frame["params"] for frame in events if frame.get("method") == "session/event"]
    replayed = [item for item in items if item["seq"] == 0]
    live = [item for item in items if item["seq"] > 0]
    assert items == replayed + live  # the replay first, whole; then what happened meanwhile
    assert [item["event"]["message"]["id"] for item in replayed] == ids
    # the note was taken while the replay was still streaming: it comes live, before the answer
    noted = [item for item in live if item["event"]["type"] == "message_end"]
    assert [item["event"]["message"]["content"][0]["text"] for item in noted] == ["meanwhile"]


async def test_a_watching_client_gets_the_live_events_once_during_its_replay(home: Home) -> None:
    """A client already subscribed reloads with ``replay``: what happens meanwhile reaches it
    live (seq above 0), between the replayed chunks, and only once."""
    ids, _note, _state, frames = await _replay_with_a_note_meanwhile(home, subscribed=True)
    items = [frame["params"] for frame in frames if frame.get("method") == "session/event"]
    replayed = [item for item in items if item["seq"] == 0]
    assert [item["event"]["message"]["id"] for item in replayed] == ids
    ends = [item for item in items if item["seq"] > 0 and item["event"]["type"] == "message_end"]
    assert [item["event"]["message"]["content"][0]["text"] for item in ends] == ["meanwhile"]
    seqs = [item["seq"] for item in items if item["seq"] > 0]
    assert len(seqs) == len(set(seqs))
