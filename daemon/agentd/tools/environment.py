"""The environment of commands run by the bash tool: the session's or the daemon's, minus
credentials.

A variable is treated as a credential when its upper-cased name is ``LLM_AUTH_TOKEN``,
``API_KEY``, ``TOKEN``, ``SECRET`` or ``PASSWORD``, or ends with ``_API_KEY``,
``_AUTH_TOKEN``, ``_TOKEN``, ``_SECRET``, ``_SECRET_KEY``, ``_ACCESS_KEY``,
``_PRIVATE_KEY`` or ``_PASSWORD``, or matches a name or glob in ``ctx.options["secret_env"]``.
Names in ``ctx.options["pass_env"]`` are passed through even so (e.g. a ``GITHUB_TOKEN`` the
user wants ``gh`` to see). Pagers are disabled and git never prompts for a password, since
commands run without a terminal.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable, Mapping
from typing import Any

SECRET_NAMES = frozenset({"LLM_AUTH_TOKEN", "API_KEY", "TOKEN", "SECRET", "PASSWORD"})
SECRET_SUFFIXES = (
    "_API_KEY",
    "_AUTH_TOKEN",
    "_TOKEN",
    "_SECRET",
    "_SECRET_KEY",
    "_ACCESS_KEY",
    "_PRIVATE_KEY",
    "_PASSWORD",
)
NONINTERACTIVE = {"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"}


def is_secret_name(name: str, extra: Iterable[str] = ()) -> bool:
    """True when ``name`` looks like a credential or matches one of the ``extra`` globs."""
    upper = name.upper()
    if upper in SECRET_NAMES or upper.endswith(SECRET_SUFFIXES):
        return True
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in extra)


def _names(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, Iterable):
        return [str(item) for item in value]
    return []


def child_env(env: Mapping[str, str] | None, options: Mapping[str, Any]) -> dict[str, str]:
    """``env`` (or the daemon's environment when None) without credentials, plus the
    non-interactive defaults where unset."""
    base = os.environ if env is None else env
    extra = _names(options.get("secret_env"))
    keep = set(_names(options.get("pass_env")))
    result = {
        name: value
        for name, value in base.items()
        if name in keep or not is_secret_name(name, extra)
    }
    for name, value in NONINTERACTIVE.items():
        result.setdefault(name, value)
    return result
