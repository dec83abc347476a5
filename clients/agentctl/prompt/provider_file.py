"""``agentctl send --provider-env-file FILE``: provider variables that never enter an
environment.

A CI step (the GitHub Action) hands agentctl the API key on a pipe (``/dev/fd/3``) or a 0600
file instead of an environment variable: ``/proc/PID/environ`` is fixed when a process starts,
and every same-uid process (or, with sudo, any process) can read it, so a key in agentctl's or
the private daemon's environment would be readable by the commands the agent runs. Read from
the file, the variables go to the daemon over its pipes as ``providerEnv`` (kept in memory for
the session, never written, never passed to bash), and this process makes itself non-dumpable
so its memory is not readable through ``/proc`` either. Imports only the standard library.
"""

from __future__ import annotations

import sys
from pathlib import Path

from agentctl.common import UsageError
from agentd.protocol.provider_env import is_provider_variable

MAX_BYTES = 64 * 1024
"""More than any set of provider variables; a larger file is refused."""
PR_SET_DUMPABLE = 4


def read_provider_env_file(path: str) -> dict[str, str]:
    """The ``NAME=VALUE`` lines of ``path`` (blank lines and ``#`` comments skipped), each a
    provider variable (``LLM_*``, ``OPENAI_*``, ``ANTHROPIC_*``, ``*_API_KEY``); UsageError
    naming the line otherwise. The file is read once (a pipe works); empty values are dropped."""
    try:
        with Path(path).open("rb") as source:
            data = source.read(MAX_BYTES + 1)
    except OSError as exc:
        raise UsageError(f"--provider-env-file {path}: {exc.strerror or exc}") from None
    if len(data) > MAX_BYTES:
        raise UsageError(f"--provider-env-file {path}: larger than {MAX_BYTES} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"--provider-env-file {path}: not UTF-8 text") from None
    variables: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        name, equals, value = line.partition("=")
        name = name.strip()
        if not equals or not is_provider_variable(name):
            raise UsageError(
                f"--provider-env-file {path}, line {number}: expected NAME=VALUE with a provider "
                "variable (LLM_*, OPENAI_*, ANTHROPIC_*, *_API_KEY)"
            )
        if value:
            variables[name] = value
    return variables


def make_undumpable() -> bool:
    """``prctl(PR_SET_DUMPABLE, 0)``: same-uid processes can no longer read this process's
    memory or ``/proc`` files. False where that is not available (not Linux)."""
    import ctypes

    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False
