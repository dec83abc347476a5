"""Every kind of secret, planted in a real run, reaches no surface unredacted: live events,
session/messages, the session file, the bash spill file, Markdown and HTML exports."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.harness import Home, run, stdio_client

pytestmark = pytest.mark.e2e

JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
PLANTED = {
    "connection string": ("postgres://app:pg-pass-9f8e7d@db.internal/app", "pg-pass-9f8e7d"),
    "DSN": (
        "SENTRY_DSN=https://0123456789abcdef0123456789abcdef@o1.ingest.sentry.io/5",
        "0123456789abcdef0123456789abcdef",
    ),
    "*_CREDS": ("CORP_CREDS=creds-value-77aa55", "creds-value-77aa55"),
    "*_PASSWORD": ("DB_PASSWORD=pw-value-33cc11", "pw-value-33cc11"),
    "*_SECRET*": ("CLIENT_SECRET_KEY=cs-value-88dd22", "cs-value-88dd22"),
    "private key": (
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAAQ\n"
        "-----END OPENSSH PRIVATE KEY-----",
        "b3BlbnNzaC1rZXktdjEAAAAAQ",
    ),
    "JWT": (JWT, JWT.rsplit(".", 1)[1]),
    "daemon credential": ("the token is tok-known-abcdef123", "tok-known-abcdef123"),
}


def _scenario() -> dict[str, Any]:
    # The last printf pair writes one secret in two pieces, half a second apart: two deltas.
    split = "printf 'split: DB_PASSWORD=pw-va'; sleep 0.5; printf 'lue-33cc11 end\\n'"
    command = f"cat secrets.txt; seq 1 3000; cat secrets.txt; {split}"
    call = {"id": "c1", "type": "function"}
    call["function"] = {"name": "bash", "arguments": json.dumps({"command": command})}
    told = " ".join(text for text, _fragment in PLANTED.values())
    return {
        "name": "plant",
        "trigger": "plant secrets",
        "steps": [
            {"chunk_size": 5, "response": {"content": f"Reading. {told}", "tool_calls": [call]}},
            {"chunk_size": 5, "response": {"content": f"Done. {told}"}},
        ],
    }


@pytest.fixture
def planted(home: Home) -> Home:
    (home.project / "secrets.txt").write_text("\n".join(t for t, _f in PLANTED.values()) + "\n")
    home.env["MY_SERVICE_TOKEN"] = "tok-known-abcdef123"
    path = home.root / "scenarios.json"
    document = json.loads(path.read_text())
    document["scenarios"].insert(0, _scenario())
    path.write_text(json.dumps(document))
    return home


def _leaks(text: str) -> list[str]:
    return [kind for kind, (_text, fragment) in PLANTED.items() if fragment in text]


def _joined_deltas(events: list[dict[str, Any]]) -> str:
    """What a client concatenating the deltas sees (text, arguments, bash output)."""
    parts = []
    for item in events:
        event = item["event"]
        if event["type"] == "message_update":
            parts.append(event["delta"].get("text") or event["delta"].get("arguments") or "")
        elif event["type"] == "tool_execution_update":
            parts.append(event["output"])
    return "".join(parts)


async def test_no_planted_secret_reaches_any_surface(planted: Home) -> None:
    async with stdio_client(planted) as client:
        info = await client.call("session/new", {"cwd": str(planted.project), "provider": "mock"})
        sid = info["sessionId"]
        result, events = await run(client, sid, "plant secrets")
        messages = await client.call("session/messages", {"sessionId": sid})
        exports = [
            await client.call("session/export", {"sessionId": sid, "format": kind})
            for kind in ("markdown", "html")
        ]
    assert result["stopReason"] == "end_turn"
    end = next(e["event"] for e in events if e["event"]["type"] == "tool_execution_end")
    spill = Path(end["details"]["spillPath"])
    session_file = Path(info["path"])
    surfaces = {
        "live events": json.dumps(events),
        "streamed deltas, joined": _joined_deltas(events),
        "session/messages": json.dumps(messages),
        "session file": session_file.read_text(),
        "spill file": spill.read_text(),
        "markdown export": exports[0]["content"],
        "html export": exports[1]["content"],
    }
    assert "[REDACTED]" in surfaces["spill file"]
    assert "split: DB_PASSWORD=[REDACTED] end\n" in surfaces["streamed deltas, joined"]
    assert {name: _leaks(text) for name, text in surfaces.items()} == {
        name: [] for name in surfaces
    }


async def test_daemon_status_reports_the_protections(home: Home) -> None:
    """The serving daemon is non-dumpable and reports openat2 and the Landlock ABI."""
    from agentd.hardening import landlock_abi, openat2_available

    async with stdio_client(home) as client:
        status = await client.call("daemon/status", {})
    assert status["security"] == {
        "dumpable": False,
        "openat2": openat2_available(),
        "landlockAbi": landlock_abi(),
    }
