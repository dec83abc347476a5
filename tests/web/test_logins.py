"""The web front-end's credentials (``agentd.web.logins``) on a clock the test moves: links,
sign-ins and tickets expire, are used up, end at sign-out, and never accumulate."""

from __future__ import annotations

from agentd.web.logins import (
    LINK_TTL,
    MAX_LINKS,
    MAX_SIGN_INS,
    MAX_TICKETS,
    SIGN_IN_IDLE,
    SIGN_IN_MAX,
    TICKET_TTL,
    Logins,
)


class Clock:
    """A monotonic clock that moves only when told."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def signed_in(logins: Logins) -> tuple[str, str]:
    new = logins.exchange(logins.mint_link_token())
    assert new is not None
    return new.cookie, new.key


def test_a_link_is_used_once_and_expires() -> None:
    clock = Clock()
    logins = Logins(clock=clock)
    token = logins.mint_link_token()
    assert logins.exchange(token) is not None
    assert logins.exchange(token) is None
    late = logins.mint_link_token()
    clock.now += LINK_TTL
    assert logins.exchange(late) is None
    assert logins.exchange("") is None


def test_the_cookie_and_the_key_are_separate_secrets() -> None:
    logins = Logins(clock=Clock())
    cookie, key = signed_in(logins)
    assert cookie != key
    assert logins.by_cookie(cookie) is logins.by_key(key) is not None
    assert logins.by_key(cookie) is None  # a cookie is not a page key
    assert logins.by_cookie(key) is None
    assert logins.by_key("") is None


def test_a_sign_in_ends_after_idling_and_at_its_maximum_age() -> None:
    clock = Clock()
    logins = Logins(clock=clock)
    cookie, key = signed_in(logins)
    clock.now += SIGN_IN_IDLE - 1
    assert logins.by_key(key) is not None  # used: the idle time starts again
    clock.now += SIGN_IN_IDLE - 1
    assert logins.by_cookie(cookie) is not None
    clock.now += SIGN_IN_IDLE
    assert logins.by_key(key) is None
    assert logins.by_cookie(cookie) is None

    busy_cookie, busy_key = signed_in(logins)
    for _ in range(int(SIGN_IN_MAX // 3600)):
        clock.now += 3600
        sign_in = logins.by_key(busy_key)
    assert sign_in is None  # used every hour, still over at the maximum age
    assert logins.by_cookie(busy_cookie) is None


def test_an_open_event_stream_keeps_its_sign_in_alive() -> None:
    clock = Clock()
    logins = Logins(clock=clock)
    _, key = signed_in(logins)
    sign_in = logins.by_key(key)
    assert sign_in is not None
    for _ in range(5):
        clock.now += SIGN_IN_IDLE / 2
        logins.touch(sign_in)
    assert logins.by_key(key) is sign_in


def test_a_ticket_is_used_once_expires_and_ends_with_its_sign_in() -> None:
    clock = Clock()
    logins = Logins(clock=clock)
    _, key = signed_in(logins)
    sign_in = logins.by_key(key)
    assert sign_in is not None
    ticket = logins.mint_ticket(sign_in)
    assert logins.redeem(ticket) is sign_in
    assert logins.redeem(ticket) is None
    late = logins.mint_ticket(sign_in)
    clock.now += TICKET_TTL
    assert logins.redeem(late) is None
    orphan = logins.mint_ticket(sign_in)
    logins.end(sign_in)
    assert logins.redeem(orphan) is None
    assert logins.redeem("") is None


def test_sign_out_ends_every_sign_in_link_and_ticket() -> None:
    logins = Logins(clock=Clock())
    pages = [signed_in(logins) for _ in range(3)]
    link = logins.mint_link_token()
    sign_in = logins.by_key(pages[0][1])
    assert sign_in is not None
    ticket = logins.mint_ticket(sign_in)
    logins.end_all()
    for cookie, key in pages:
        assert logins.by_cookie(cookie) is None
        assert logins.by_key(key) is None
    assert logins.exchange(link) is None
    assert logins.redeem(ticket) is None
    assert sign_in.ended


def test_nothing_accumulates() -> None:
    """Thousands of links, sign-ins and tickets leave the tables at their bounds; expired
    entries are pruned as the tables are used."""
    clock = Clock()
    logins = Logins(clock=clock)
    for _ in range(2000):
        logins.mint_link_token()
    assert len(logins.links) == MAX_LINKS
    pages = [signed_in(logins) for _ in range(2000)]
    assert len(logins.keys) == len(logins.cookies) == MAX_SIGN_INS
    assert logins.by_key(pages[-1][1]) is not None  # the newest survive
    assert logins.by_key(pages[0][1]) is None
    sign_in = logins.by_key(pages[-1][1])
    assert sign_in is not None
    for _ in range(2000):
        logins.mint_ticket(sign_in)
    assert len(logins.tickets) == MAX_TICKETS
    clock.now += SIGN_IN_MAX
    logins.prune()
    assert (len(logins.links), len(logins.keys), len(logins.cookies)) == (0, 0, 0)
    assert len(logins.tickets) == 0
