"""What the cold paths import, against allow-lists: a one-shot ``agentctl send`` (its session
in its own process, no daemon running) and ``agentd serve --stdio``.

The one-shot is the mock's ``hello world`` (a write and a bash tool call) with an
OpenAI-compatible provider over plain ``http://`` (the real ``agentd mock-llm`` on loopback);
``--daemon-process`` runs the same in a private ``agentd serve --stdio``, and a bare
``agentd serve --stdio`` answers ``initialize`` only. Every process writes the modules it holds
when it exits (a ``sitecustomize`` on ``PYTHONPATH`` hooks ``atexit`` and ``os._exit``).

Allowed are: what the interpreter floor itself imports (``python -c "import asyncio,
msgspec"``, measured here: on Python 3.11 ``asyncio`` brings ``ssl``, ``traceback`` and
``logging``, msgspec's ``typing_extensions`` brings ``inspect`` and ``tokenize``), the
standard library modules of :data:`STDLIB_COMMON`, and each path's packages below. Never
allowed, unless the floor has them: :data:`NEVER` (structlog is set up only when something is
logged at warning level; a one-shot writes its few info lines without it). A plain ``http://``
provider is spoken to without httpx: none of :data:`HTTP_STACK` nor of httpx's own imports
(:data:`WITH_HTTPX`) is held by any of the paths, and no CA bundle (``certifi``) is loaded.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.agentctl.harness import Sandbox
from tests.harness import scaled, wait_until

DUMP = """
import atexit, os, sys
def _dump():
    path = os.path.join(os.environ["AGENTD_TEST_IMPORT_LOG"], f"{os.getpid()}.txt")
    held = sorted(name for name, module in sys.modules.items() if module is not None)
    with open(path, "w") as out:
        out.write(" ".join(sys.argv) + "\\n" + "\\n".join(held))
atexit.register(_dump)
_exit = os._exit
def _dumping_exit(code):
    _dump()
    _exit(code)
os._exit = _dumping_exit
"""

STDLIB_COMMON = {
    *("abc", "argparse", "array", "ast", "asyncio", "atexit", "base64", "binascii", "bisect"),
    *("builtins", "codecs", "collections", "concurrent", "contextlib", "contextvars", "copy"),
    *("copyreg", "dataclasses", "datetime", "dis", "encodings", "enum", "errno", "fcntl"),
    *("fnmatch", "functools", "genericpath", "gettext", "hashlib", "heapq", "hmac"),
    *("importlib", "inspect", "io", "ipaddress", "itertools", "json", "keyword", "linecache"),
    *("locale", "logging", "marshal", "math", "opcode", "operator", "os", "posix", "posixpath"),
    *("random", "re", "reprlib", "secrets", "select", "selectors", "shlex", "signal", "site"),
    *("sitecustomize", "socket", "sre_compile", "sre_constants", "sre_parse", "stat", "string"),
    *("struct", "subprocess", "sys", "termios", "textwrap", "threading", "time", "token"),
    *("types", "typing", "uuid", "warnings", "weakref", "zipimport", "zlib", "zoneinfo"),
    *("grp", "pwd", "unicodedata", "decimal", "numbers", "ntpath", "pathlib", "platform"),
    *("compression", "urllib", "tty", "ctypes", "tomllib", "queue", "difflib", "runpy", "gc"),
}
"""Standard library modules any of the paths may hold (``ctypes``: the non-dumpable process;
``tomllib``: the config files; ``difflib``: the config schema's suggestions, a write's diff;
``gc``, built in: the session reader pauses collection while it decodes)."""

NEVER = {
    *("structlog", "rich", "click", "greenlet", "pygments", "pickle", "certifi"),
    *("ssl", "tokenize", "traceback", "bz2", "lzma", "urllib.request", "http.client"),
}
"""Modules no cold path may import beyond the floor (or, with httpx, :data:`WITH_HTTPX`)."""

WITH_HTTPX = {
    "urllib.request": "httpx._auth imports it (for parse_http_list)",
    "http.client": "urllib.request imports it",
    "email": "http.client parses headers with it",
    "tempfile": "urllib.request imports it",
    "shutil": "tempfile imports it",
    "bz2": "shutil imports it",
    "lzma": "shutil imports it",
    "mimetypes": "httpx._utils guesses upload types with it",
    "http": "httpx._status_codes",
    "calendar": "email.utils",
    "quopri": "email",
}
"""What httpx brings along (each with the module importing it): an ``https://`` provider's
client, never a cold path's with a plain ``http://`` one."""

AGENTD = {"agentd", "msgspec", "typing_extensions", "tree_sitter", "tree_sitter_bash"}
"""The daemon's packages on a session's path (``tree_sitter``: the bash parser of the
permission rules)."""
HTTP_STACK = {"httpx", "httpcore", "h11", "anyio", "sniffio", "idna", "certifi"}


def _top_levels(modules: list[str]) -> set[str]:
    """Top-level names, less the interpreter's internals and C accelerators (``_…``)."""
    return {name.split(".")[0] for name in modules if not name.startswith("_")}


def _floor(env: dict[str, str]) -> set[str]:
    code = "import sys, asyncio, msgspec; print('\\n'.join(sys.modules))"
    result = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    return set(result.stdout.split())


def _dumps(log: Path) -> dict[str, list[str]]:
    found = [path.read_text().split("\n") for path in log.glob("*.txt")]
    return {lines[0]: lines[1:] for lines in found}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """The modules of each cold process: the in-process one-shot, the ``--daemon-process``
    one-shot's client and daemon, a bare ``serve --stdio``, and the floor."""
    sandbox = Sandbox()
    sandbox.env.pop("AGENTCTL_SHARED", None)
    mock_log = sandbox.root / "mock-llm.log"
    with mock_log.open("wb") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "agentd", "mock-llm", "--port", "0"],
            env=sandbox.env, stdin=subprocess.DEVNULL, stderr=out,
        )  # fmt: skip
    site = sandbox.root / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(DUMP)
    path = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH", "")) if p)
    held: dict[str, list[str]] = {}
    try:
        pattern = r"(http://127\.0\.0\.1:\d+/v1)"
        found = wait_until(lambda: re.search(pattern, mock_log.read_text()), 30, "mock-llm URL")
        sandbox.user_config(
            f'[providers.local]\napi = "openai"\nbase_url = "{found.group(1)}"\n'
            'models = ["mock-model"]\n'
        )
        for name, flags in (("in-process", []), ("daemon-process", ["--daemon-process"])):
            log = tmp_path_factory.mktemp(name)
            env = dict(sandbox.env, PYTHONPATH=path, AGENTD_TEST_IMPORT_LOG=str(log))
            argv = [sys.executable, "-m", "agentctl", "send", *flags, "--provider", "local"]
            result = subprocess.run(
                [*argv, "hello world"], cwd=sandbox.project, env=env, capture_output=True,
                text=True, timeout=scaled(120), check=False,
            )  # fmt: skip
            assert result.returncode == 0, result.stderr
            assert (sandbox.project / "hello.py").is_file(), result.stdout  # the tools ran
            (sandbox.project / "hello.py").unlink()
            for argv_line, modules in _dumps(log).items():
                role = "daemon" if "serve --stdio" in argv_line else "client"
                held[f"{name} {role}"] = modules
        log = tmp_path_factory.mktemp("serve")
        env = dict(sandbox.env, PYTHONPATH=path, AGENTD_TEST_IMPORT_LOG=str(log))
        wire = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}\n'
        subprocess.run(
            [sys.executable, "-m", "agentd", "serve", "--stdio"], input=wire, env=env,
            capture_output=True, timeout=scaled(60), check=True,
        )  # fmt: skip
        (held["serve --stdio"],) = _dumps(log).values()
        held["floor"] = sorted(_floor(dict(sandbox.env, PYTHONPATH=path)))
    finally:
        server.terminate()
        server.wait(scaled(15))
        sandbox.close()
    return held


def _beyond(modules: list[str], floor: list[str], allowed: set[str]) -> set[str]:
    return _top_levels(modules) - _top_levels(floor) - STDLIB_COMMON - allowed


def _never(modules: list[str], floor: list[str], excused: set[str] = frozenset()) -> set[str]:
    return (set(modules) & NEVER) - set(floor) - excused


def _httpx_held(modules: list[str], floor: list[str]) -> set[str]:
    """What of httpx and its imports ``modules`` holds beyond the floor."""
    held = set(modules) - set(floor)
    return {name for name in held if name.split(".")[0] in HTTP_STACK or name in WITH_HTTPX}


def test_the_in_process_one_shot_is_one_process(runs: dict[str, list[str]]) -> None:
    assert "in-process client" in runs
    assert "in-process daemon" not in runs  # no daemon was started for it


def test_the_in_process_one_shot_imports_only_the_allowed(runs: dict[str, list[str]]) -> None:
    modules, floor = runs["in-process client"], runs["floor"]
    assert _beyond(modules, floor, {"agentctl", *AGENTD}) == set()
    assert _never(modules, floor) == set()
    assert _httpx_held(modules, floor) == set()


def test_the_daemon_process_imports_only_the_allowed(runs: dict[str, list[str]]) -> None:
    client, daemon, floor = (
        runs["daemon-process client"],
        runs["daemon-process daemon"],
        runs["floor"],
    )
    assert _beyond(client, floor, {"agentctl", "agentd", "msgspec", "typing_extensions"}) == set()
    assert _never(client, floor) == set()
    assert _beyond(daemon, floor, AGENTD) == set()
    assert _never(daemon, floor) == set()
    assert _httpx_held(daemon, floor) == set()


def test_a_bare_stdio_daemon_imports_nothing_it_does_not_use(runs: dict[str, list[str]]) -> None:
    modules, floor = runs["serve --stdio"], runs["floor"]
    assert _beyond(modules, floor, {"agentd", "msgspec", "typing_extensions"}) == set()
    assert _never(modules, floor) == set()
    assert not set(modules) & HTTP_STACK
