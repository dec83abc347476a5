"""``session/messages`` in pages, against a real daemon and a large session file."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentd.errors import InvalidParams, RpcError
from agentd.protocol.methods import MAX_MESSAGES_PAGE, MAX_MESSAGES_PAGE_BYTES
from tests.harness import Home, socket_client, stdio_client, stop

pytestmark = pytest.mark.e2e


def write_session(home: Home, session_id: str, texts: list[str]) -> None:
    """A session file whose branch holds one message per text (user and assistant in turn)."""
    folder = home.sessions / "pages"
    folder.mkdir(parents=True, exist_ok=True)
    header = {"type": "session", "version": 1, "id": session_id, "cwd": str(home.project),
              "createdAt": "2026-01-01T00:00:00.000Z"}  # fmt: skip
    lines, parent = [json.dumps(header)], None
    for n, text in enumerate(texts):
        role = "user" if n % 2 == 0 else "assistant"
        message: dict[str, Any] = {"role": role, "id": f"m{n}", "timestamp": 1.0,
                                   "content": [{"type": "text", "text": text}]}  # fmt: skip
        if role == "assistant":
            message |= {"provider": "mock", "model": "mock", "stopReason": "stop"}
        entry = {"type": "message", "id": f"e{n}", "parentId": parent,
                 "timestamp": "2026-01-01T00:00:00.000Z", "message": message}  # fmt: skip
        lines.append(json.dumps(entry))
        parent = f"e{n}"
    path = folder / f"2026-01-01T00-00-00-000Z_{session_id}.jsonl"
    path.write_text("\n".join(lines) + "\n")


def texts_of(messages: list[dict[str, Any]]) -> list[str]:
    return [m["content"][0]["text"] for m in messages]


async def test_pages_cover_the_branch_and_stay_bounded(home: Home) -> None:
    """2,500 messages of 3 KB: the newest page first, each within the count and byte caps,
    ``before: start`` walking back to 0; together exactly the branch, in order."""
    texts = [f"{n:05d} " + "word " * 600 for n in range(2500)]
    write_session(home, "pages-big", texts)
    daemon = home.start_socket_daemon()
    try:
        async with socket_client(home) as client:
            pages, before = [], None
            while True:
                params: dict[str, Any] = {"sessionId": "pages-big"}
                if before is not None:
                    params["before"] = before
                page = await client.call("session/messages", params)
                assert page["total"] == 2500
                assert 0 < len(page["messages"]) <= MAX_MESSAGES_PAGE
                size = len(json.dumps(page["messages"], separators=(",", ":")))
                assert size <= MAX_MESSAGES_PAGE_BYTES
                pages.append(page)
                if page["start"] == 0:
                    break
                before = page["start"]
            assert len(pages) >= 3  # the byte cap, not only the count, cut them
            assert pages[0]["start"] + len(pages[0]["messages"]) == 2500
            joined = [t for page in reversed(pages) for t in texts_of(page["messages"])]
            assert joined == texts
            small = await client.call(
                "session/messages", {"sessionId": "pages-big", "limit": 5, "before": 7}
            )
            assert (small["start"], texts_of(small["messages"])) == (2, texts[2:7])
            whole = await client.messages("pages-big")  # agentctl pages through it all
            assert [m.content[0].text for m in whole] == texts  # type: ignore[union-attr]
    finally:
        stop(daemon)


async def test_one_huge_message_is_still_returned(home: Home) -> None:
    """A message bigger than the byte cap comes alone in its page."""
    huge = "x" * (MAX_MESSAGES_PAGE_BYTES + 1000)
    write_session(home, "pages-huge", ["hi", huge, "after"])
    async with stdio_client(home) as client:
        page = await client.call("session/messages", {"sessionId": "pages-huge", "before": 2})
        assert (page["start"], texts_of(page["messages"])) == (1, [huge])
        page = await client.call("session/messages", {"sessionId": "pages-huge"})
        assert (page["start"], texts_of(page["messages"])) == (2, ["after"])


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"limit": 0}, "`limit` must be between 1 and 1000"),
        ({"limit": 1001}, "`limit` must be between 1 and 1000"),
        ({"before": -1}, "`before` must be 0 or more"),
    ],
)
async def test_bad_page_params_are_clear_errors(
    home: Home, extra: dict[str, int], message: str
) -> None:
    write_session(home, "pages-bad", ["one", "two"])
    async with stdio_client(home) as client:
        with pytest.raises(RpcError) as failed:
            await client.call("session/messages", {"sessionId": "pages-bad", **extra})
        assert failed.value.code == InvalidParams.code
        assert message in failed.value.message
        past = await client.call("session/messages", {"sessionId": "pages-bad", "before": 99})
        assert texts_of(past["messages"]) == ["one", "two"]
        empty = await client.call("session/messages", {"sessionId": "pages-bad", "before": 0})
        assert (empty["messages"], empty["start"], empty["total"]) == ([], 0, 2)
