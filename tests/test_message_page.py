"""``session/messages`` pages (:func:`agentd.session.history.message_page`): a message with
nothing to redact is given as it is, one holding a secret as a redacted copy; the paging
bounds stay as documented."""

from __future__ import annotations

from agentd.protocol.content import Message, TextContent, UserMessage
from agentd.redact import REDACTED, Redactor
from agentd.session.history import message_page

SECRET = "hunter2-very-secret-value"


def _user(n: int, text: str) -> Message:
    return UserMessage(id=f"u{n}", content=[TextContent(text=text)], timestamp=float(n))


async def test_a_page_reuses_clean_messages_and_redacts_the_others() -> None:
    messages = [_user(n, f"message {n}") for n in range(10)]
    messages[4] = _user(4, f"the key is {SECRET}")
    page = await message_page(messages, Redactor([SECRET]).json, limit=6)
    assert (page.start, page.total) == (4, 10)
    assert [m.id for m in page.messages] == [f"u{n}" for n in range(4, 10)]
    assert all(page.messages[i] is messages[4 + i] for i in range(1, 6))
    redacted = page.messages[0]
    assert redacted is not messages[4]
    assert redacted.content == [TextContent(text=f"the key is {REDACTED}")]
    earlier = await message_page(messages, Redactor([SECRET]).json, before=page.start)
    assert [m.id for m in earlier.messages] == ["u0", "u1", "u2", "u3"]
    assert earlier.start == 0


async def test_a_page_stops_before_its_byte_bound_but_holds_one_message() -> None:
    messages = [_user(n, "x" * 1000) for n in range(5)]
    page = await message_page(messages, Redactor().json, max_bytes=2500)
    assert [m.id for m in page.messages] == ["u3", "u4"]
    single = await message_page(messages, Redactor().json, max_bytes=10)
    assert [m.id for m in single.messages] == ["u4"]
