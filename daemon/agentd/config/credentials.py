"""Which environment variables hold credentials (scrubbed from child processes, redacted).

Detection is by name (``*_API_KEY``, ``*_TOKEN``, ``*_SECRET``, ``*PASSWORD*``…), by value
(``sk-…``, ``ghp_…``…) and by configuration (the ``api_key_env`` of every provider table).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentd.config.load import Config

_SECRET_WORDS = frozenset(
    {
        "TOKEN", "SECRET", "PASSWORD", "PASSWD", "APIKEY", "CREDENTIAL", "CREDENTIALS", "PAT",
        "CREDS", "DSN",
    }
)  # fmt: skip
_SECRET_SUFFIXES = ("_KEY", "_KEY_ID", "_TOKEN", "_SECRET", "_CREDS", "_DSN")
_URL_PASSWORD = re.compile(r"://[^/@\s]*:[^/@\s]+@")
_SECRET_VALUE = re.compile(r"^(sk-|sk_|ghp_|gho_|ghs_|github_pat_|xox[abps]-|glpat-|AKIA)")


def credential_env_names(env: Mapping[str, str], config: Config | None = None) -> set[str]:
    """Names of the variables in ``env`` that hold credentials: by name (``*_API_KEY``,
    ``*_TOKEN``, ``*_SECRET``, ``*PASSWORD*``…), by value (``sk-…``, ``ghp_…``…), and the
    ``api_key_env`` variables of ``config``. Used to scrub child environments and redact."""
    names = {name for name, value in env.items() if _looks_secret(name, value)}
    if config is not None:
        names |= {
            section.api_key_env
            for section in config.providers.values()
            if section.api_key_env and section.api_key_env in env
        }
    return names


def _looks_secret(name: str, value: str) -> bool:
    upper = name.upper()
    if _SECRET_WORDS.intersection(upper.split("_")) or upper.endswith(_SECRET_SUFFIXES):
        return True
    if any(
        part in upper for part in ("API_KEY", "ACCESS_KEY", "PRIVATE_KEY", "PASSWORD", "SECRET")
    ):
        return True
    return bool(_SECRET_VALUE.match(value) or _URL_PASSWORD.search(value))
