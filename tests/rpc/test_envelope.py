"""Envelope parsing and the shape of outgoing messages."""

from __future__ import annotations

import msgspec
import pytest

from agentd.errors import InvalidRequest, ParseError
from agentd.rpc import envelope


def test_request_keeps_its_id_exactly() -> None:
    """Integer, string, float and null ids come back unchanged."""
    for raw_id, expected in ((b"7", 7), (b'"seven"', "seven"), (b"1.5", 1.5), (b"null", None)):
        parsed = envelope.parse(b'{"jsonrpc":"2.0","id":%b,"method":"m"}' % raw_id)
        assert isinstance(parsed, envelope.Request)
        assert parsed.id == expected
        assert type(parsed.id) is type(expected)


def test_absent_params_are_empty_and_present_params_stay_raw() -> None:
    """``params`` is not decoded here: handlers decode their own type."""
    bare = envelope.parse(b'{"jsonrpc":"2.0","id":1,"method":"m"}')
    full = envelope.parse(b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":[1]}}')
    assert isinstance(bare, envelope.Request)
    assert isinstance(full, envelope.Request)
    assert not envelope.has_value(bare.params)
    assert bytes(full.params) == b'{"a":[1]}'


def test_notifications_and_responses_are_told_apart() -> None:
    """No id means notification; an id with result or error means response."""
    note = envelope.parse(b'{"jsonrpc":"2.0","method":"n"}')
    ok = envelope.parse(b'{"jsonrpc":"2.0","id":3,"result":null}')
    err = envelope.parse(b'{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"no"}}')
    assert isinstance(note, envelope.Notification)
    assert isinstance(ok, envelope.Response)
    assert bytes(ok.result) == b"null"
    assert isinstance(err, envelope.Response)
    assert err.error == envelope.ErrorObject(-32601, "no")


@pytest.mark.parametrize(
    ("frame", "error", "reply_id"),
    [
        (b"{oops", ParseError, None),
        (b'{"jsonrpc":"2.0","id":1,"method":"\xff"}', ParseError, None),
        (b'{"jsonrpc":"2.0","id":1,"method":"m","params":%b}' % (b"[" * 5000), ParseError, None),
        (b'{"params":%b%b}' % (b"[" * 5000, b"]" * 5000), ParseError, None),
        (b"[" * 5000 + b"]" * 5000, InvalidRequest, None),
        (b'[{"jsonrpc":"2.0","id":1,"method":"m"}]', InvalidRequest, None),
        (b"42", InvalidRequest, None),
        (b'{"jsonrpc":"1.0","id":5,"method":"m"}', InvalidRequest, 5),
        (b'{"id":6,"method":"m"}', InvalidRequest, 6),
        (b'{"jsonrpc":"2.0","id":{"a":1},"method":"m"}', InvalidRequest, None),
        (b'{"jsonrpc":"2.0","id":true,"method":"m"}', InvalidRequest, None),
        (b'{"jsonrpc":"2.0","id":7,"method":3}', InvalidRequest, 7),
        (b'{"jsonrpc":"2.0","id":8}', InvalidRequest, 8),
    ],
)
def test_invalid_frames_carry_the_error_and_the_id_to_answer(
    frame: bytes, error: type[Exception], reply_id: object
) -> None:
    """Each malformed frame maps to one error class and the id it can be answered with."""
    parsed = envelope.parse(frame)
    assert isinstance(parsed, envelope.Invalid)
    assert type(parsed.error) is error
    assert parsed.id == reply_id


def test_result_null_is_written_and_params_none_is_left_out() -> None:
    """Responses always carry ``result``; a None params member is omitted."""
    encode = msgspec.json.encode
    assert (
        encode(envelope.ResultMessage(id=1, result=None))
        == b'{"jsonrpc":"2.0","id":1,"result":null}'
    )
    note = envelope.NotificationMessage(method="n", params=envelope.optional_params(None))
    assert encode(note) == b'{"jsonrpc":"2.0","method":"n"}'
    error = envelope.error_message(None, ParseError("bad"))
    assert encode(error) == b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}}'


def test_unknown_error_codes_become_rpc_errors_with_that_code() -> None:
    """Codes agentd does not define still round-trip with their number."""
    error = envelope.to_exception(envelope.ErrorObject(-31999, "custom", {"k": 1}))
    assert error.code == -31999
    assert error.message == "custom"
    assert error.data == {"k": 1}
    known = envelope.to_exception(envelope.ErrorObject(-32601, "nope"))
    assert type(known).__name__ == "MethodNotFound"
