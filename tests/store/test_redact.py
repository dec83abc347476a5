"""Secrets never reach a session file: credential-shaped values and the daemon's own
credential values are redacted in every string, and the JSON stays valid."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentd.protocol.content import ToolResultMessage
from agentd.protocol.session_file import CustomEntry, MessageEntry
from agentd.redact import REDACTED
from agentd.store import Redactor, SessionFile, redactor
from tests.store.conftest import CWD, assistant, result, texts, user

_KEYS = {
    "openai": "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4",
    "anthropic": "sk-ant-api03-" + "x" * 40,
    "github": "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "github_pat": "github_pat_11ABCDEFG0" + "abcdefghij" * 5,
    "slack": "xoxb-1234567890-abcdefABCDEF",
    "aws": "AKIAIOSFODNN7EXAMPLE",
    "google": "AIza" + "Sy" * 17 + "A",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9",
}


@pytest.mark.parametrize("kind", sorted(_KEYS))
def test_key_shapes_are_redacted(kind: str) -> None:
    """Each known credential shape disappears from text, whatever surrounds it."""
    redact = redactor([])
    key = _KEYS[kind]
    for text in [key, f"export KEY={key}\n", f"'{key}'", f"x\n{key}\ty", f"({key})"]:
        out = redact(text)
        assert key not in out
        assert REDACTED in out


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Authorization: Bearer abc.def-123", "Authorization: Bearer [REDACTED]"),
        ("authorization: token 0123456789", "authorization: token [REDACTED]"),
        ('{"Authorization": "Basic dXNlcjpwYXNz"}', '{"Authorization": "Basic [REDACTED]"}'),
        ("curl -H 'X-Api-Key: 5f3e2a1b9c'", "curl -H 'X-Api-Key: [REDACTED]'"),
        ("PROXY-AUTHORIZATION: secretvalue", "PROXY-AUTHORIZATION: [REDACTED]"),
        ("the bearer token12345678 here", "the bearer [REDACTED] here"),
    ],
)
def test_header_values_are_redacted_and_names_kept(text: str, expected: str) -> None:
    """Header names and auth schemes stay readable; only the value goes."""
    assert redactor([])(text) == expected


def test_private_key_blocks_are_redacted() -> None:
    """A PEM private key, newlines and all, is replaced as one block."""
    pem = (
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\nAAAA\n"
        "-----END OPENSSH PRIVATE KEY-----"
    )
    assert redactor([])(f"key:\n{pem}\nend") == f"key:\n{REDACTED}\nend"


@pytest.mark.parametrize(
    "text",
    [
        "task-abcdefghijklmnopqrstuvwxyz0123 is a branch name",
        "the sky is blue; github is a site; Bearer of news",
        "short sk-abc and AKIA123",
        "authorization: no",
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    """Words that merely contain a key prefix are not keys."""
    assert redactor([])(text) == text


def test_known_secret_values_are_redacted_and_short_ones_ignored() -> None:
    """The daemon's credential values go; values under 8 characters would match noise."""
    redact = redactor(["hunter2-hunter2", "abc"])
    assert redact("pw=hunter2-hunter2; abc") == f"pw={REDACTED}; abc"


def test_json_redaction_handles_escaped_secrets() -> None:
    """A secret with characters JSON escapes is found in its escaped form."""
    secret = 'p@ss"word\\with\nescapes'
    encoded = msgspec.json.encode({"out": f"value={secret}!"})
    red = Redactor([secret]).json(encoded)
    assert msgspec.json.decode(red) == {"out": f"value={REDACTED}!"}


def test_json_redaction_never_breaks_an_escape_sequence() -> None:
    """A secret that starts with the letter of an escape (\\n + 'secret…') is not matched
    inside the escape: the result stays valid JSON and equals per-string redaction."""
    secret = "nsecretvalue"
    text = "line\nsecretvalue and nsecretvalue"
    red = Redactor([secret]).json(msgspec.json.encode([text]))
    assert msgspec.json.decode(red) == [f"line\nsecretvalue and {REDACTED}"]


def test_unchanged_json_is_returned_as_is() -> None:
    """No secret, no copy: the same bytes object comes back."""
    encoded = msgspec.json.encode({"a": "plain"})
    assert Redactor(["somesecretvalue"]).json(encoded) is encoded


_PIECES = st.sampled_from(
    [*_KEYS.values(), "hunter2-hunter2", "\n", '"', "\\", "\t", "é", "task-", "Bearer ", "x"]
)


@given(st.lists(st.one_of(_PIECES, st.text(max_size=8)), max_size=12))
def test_json_redaction_equals_redacting_each_string(parts: list[str]) -> None:
    """Redacting encoded JSON gives valid JSON whose strings are the redacted strings."""
    text = "".join(parts)
    red = Redactor(["hunter2-hunter2"])
    decoded = msgspec.json.decode(red.json(msgspec.json.encode({"k": [text]})))
    assert decoded == {"k": [red.text(text)]}


def test_a_key_printed_by_a_tool_never_reaches_the_file(root: Path) -> None:
    """`cat .env` output with an API key and the daemon's own credential is redacted on
    disk, in every field, and the returned entry matches the file."""
    own = "daemon-credential-0123456789"
    with SessionFile.create(root, cwd=CWD, session_id="r", secrets=[own]) as session:
        session.append_message(user("show me .env"))
        session.append_message(assistant("", [("c1", "bash", {"command": f"echo {own}"})]))
        stored = session.append_message(
            result("c1", f"OPENAI_API_KEY={_KEYS['openai']}\nTOKEN={own}\n")
        )
        session.append(CustomEntry(custom_type="x", data={"headers": {"k": _KEYS["github"]}}))
    raw = session.path.read_bytes()
    for secret in [own, _KEYS["openai"], _KEYS["github"]]:
        assert secret.encode() not in raw
    assert isinstance(stored, MessageEntry)
    assert isinstance(stored.message, ToolResultMessage)
    assert texts([stored.message]) == [f"OPENAI_API_KEY={REDACTED}\nTOKEN={REDACTED}\n"]
    reopened = SessionFile.open(session.path)
    assert reopened.messages() == session.messages()
    assert reopened.messages()[1].content[0].arguments == {"command": f"echo {REDACTED}"}  # type: ignore[union-attr]
