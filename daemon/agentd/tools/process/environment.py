"""The environment of commands run by the bash tool: built from an allow-list.

A command gets only the variables of :data:`SAFE_NAMES` and :data:`SAFE_PREFIXES` (the shell,
locale, terminal, temp dirs, language toolchains, CI markers) from the session's or the
daemon's environment, plus the names and globs of ``ctx.settings.pass_env`` (the user's
choice, e.g. a ``GITHUB_TOKEN`` for ``gh``). Everything else (API keys, ``DATABASE_URL``,
``SENTRY_DSN``, cloud credentials…) is left out however it is named. Even an allow-listed
name is dropped when it looks like a credential (:func:`is_secret_name`) or matches
``ctx.settings.secret_env``, unless ``pass_env`` names it; a proxy variable carrying a
password (``http://user:pass@proxy``) is dropped too. Pagers are disabled and git never
prompts for a password, since commands run without a terminal.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentd.tools.defaults import ToolSettings

SAFE_NAMES = frozenset(
    {
        "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TERM", "COLORTERM",
        "TZ", "TMPDIR", "TMP", "TEMP", "HOSTNAME", "NO_COLOR", "FORCE_COLOR", "CI", "EDITOR",
        "VISUAL", "VIRTUAL_ENV", "CONDA_PREFIX", "GOPATH", "GOROOT", "GOFLAGS", "CARGO_HOME",
        "RUSTUP_HOME", "JAVA_HOME", "NVM_DIR", "PYENV_ROOT", "XDG_CONFIG_HOME", "XDG_DATA_HOME",
        "XDG_CACHE_HOME", "XDG_STATE_HOME", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY",
        "http_proxy", "https_proxy", "no_proxy",
    }
)  # fmt: skip
SAFE_PREFIXES = ("LC_",)
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
    "_CREDS",
    "_DSN",
)
NONINTERACTIVE = {"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"}
_USERINFO = re.compile(r"://[^/@\s]*:[^/@\s]*@")


def is_secret_name(name: str, extra: Iterable[str] = ()) -> bool:
    """True when ``name`` looks like a credential or matches one of the ``extra`` globs."""
    upper = name.upper()
    if upper in SECRET_NAMES or upper.endswith(SECRET_SUFFIXES) or "SECRET" in upper:
        return True
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in extra)


_DROP, _KEEP, _KEEP_IF_NO_USERINFO = 0, 1, 2


@lru_cache(maxsize=4096)
def _rule_for(name: str, extra: tuple[str, ...], passed: tuple[str, ...]) -> int:
    """What to do with variable ``name`` (memoised: the same few dozen names are decided on
    every call; values are never part of the key)."""
    if any(fnmatch.fnmatchcase(name, pattern) for pattern in passed):
        return _KEEP
    if name not in SAFE_NAMES and not name.startswith(SAFE_PREFIXES):
        return _DROP
    return _DROP if is_secret_name(name, extra) else _KEEP_IF_NO_USERINFO


def _kept(name: str, value: str, extra: tuple[str, ...], passed: tuple[str, ...]) -> bool:
    rule = _rule_for(name, extra, passed)
    return rule == _KEEP or (rule == _KEEP_IF_NO_USERINFO and not _USERINFO.search(value))


def child_env(env: Mapping[str, str] | None, settings: ToolSettings) -> dict[str, str]:
    """The allow-listed part of ``env`` (the daemon's environment when None), plus
    ``pass_env`` and the non-interactive defaults where unset (see the module docstring).
    A new dict each call (the caller may add to it)."""
    base = os.environ if env is None else env
    key = (tuple(base.items()), tuple(settings.secret_env), tuple(settings.pass_env))
    return dict(_filtered(*key))


@lru_cache(maxsize=16)
def _filtered(
    items: tuple[tuple[str, str], ...], extra: tuple[str, ...], passed: tuple[str, ...]
) -> tuple[tuple[str, str], ...]:
    """:func:`child_env` of one environment (memoised: it rarely changes between calls)."""
    result = {name: value for name, value in items if _kept(name, value, extra, passed)}
    for name, value in NONINTERACTIVE.items():
        result.setdefault(name, value)
    return tuple(result.items())
