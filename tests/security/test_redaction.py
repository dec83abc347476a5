"""The wider detectors, and the log file redacted like the session files."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import structlog

from agentd import log
from agentd.config.credentials import credential_env_names
from agentd.redact import _BYTES_CUES, _CUE_BELOW, _RULES, _TEXT_CUES, Redactor

CASES = [
    ("postgres://app:hunter2pass@db/app", "hunter2pass"),
    ("mysql://root:pw9@h:3306/x", "pw9"),
    (
        "SENTRY_DSN=https://0123456789abcdef0123456789abcdef@o1.ingest.sentry.io/5",
        "0123456789abcdef",
    ),
    ("CORP_CREDS=creds-value-1", "creds-value-1"),
    ("DB_PASSWORD='pw-value-2'", "pw-value-2"),
    ('{"client_secret": "cs-value-3"}', "cs-value-3"),
    ("-----BEGIN PRIVATE KEY-----\nMIIEvQ\n-----END PRIVATE KEY-----", "MIIEvQ"),
]


@pytest.mark.parametrize(("text", "fragment"), CASES)
def test_detectors(text: str, fragment: str) -> None:
    redactor = Redactor(())
    assert fragment not in redactor.text(text)
    encoded = json.dumps({"value": text}).encode()
    assert fragment.encode() not in redactor.json(encoded)


def test_every_pattern_begins_with_its_cue() -> None:
    """The cue search may stand for the patterns only if no match can start without a cue:
    each pattern begins with its cue (or the group of its cues), each cue with a literal
    character, and the one cue regex finds every cue."""
    for cues, pattern in _RULES:
        start = pattern.removeprefix("(?P<keep>")
        assert start.startswith(cues[0] if len(cues) == 1 else "(?:" + "|".join(cues) + ")")
        for cue in cues:
            assert cue[0].isalnum() or cue[0] in "-:", cue
            sample = re.sub(r"\[(.)[^]]*\]", r"\1", cue).replace(" +", " ")  # one instance
            assert _TEXT_CUES.search(sample), (cue, sample)
            assert _BYTES_CUES.search(sample.encode()), (cue, sample)


@pytest.mark.parametrize("padding", [0, _CUE_BELOW])
@pytest.mark.parametrize(("text", "fragment"), CASES)
def test_detectors_in_short_and_long_texts(text: str, fragment: str, padding: int) -> None:
    """Under the cue limit the cues are searched first; over it the patterns run at once:
    the same secret is found either way, where it stands in the text."""
    padded = "ordinary words " * (padding // 15) + text
    redactor = Redactor(())
    assert fragment not in redactor.text(padded)
    assert fragment.encode() not in redactor.json(json.dumps({"value": padded}).encode())


def test_ordinary_text_is_kept() -> None:
    text = "the password is required; see https://example.com/a:b@c and user@host"
    assert Redactor(()).text(text) == text


def test_credential_variables_by_name_and_value() -> None:
    env = {
        "DATABASE_URL": "postgres://u:p@h/db",
        "SENTRY_DSN": "https://k@s/1",
        "CORP_CREDS": "x",
        "MY_SECRET_THING": "y",
        "PLAIN_URL": "https://example.com",
    }
    assert credential_env_names(env) == {
        "DATABASE_URL",
        "SENTRY_DSN",
        "CORP_CREDS",
        "MY_SECRET_THING",
    }


def test_log_lines_are_redacted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERVICE_TOKEN", "known-token-value-42")
    monkeypatch.setattr(log, "_redactor", None)
    log_file = tmp_path / "agentd.log"
    log.configure("info", log_file)
    try:
        structlog.get_logger("t").info(
            "request", url="postgres://a:pw-in-log@h/d", v="known-token-value-42"
        )
    finally:
        log.configure("info", None)
    text = log_file.read_text()
    assert "pw-in-log" not in text
    assert "known-token-value-42" not in text
    assert "[REDACTED]" in text
