"""What a cold one-shot run imports: ``agentctl send --stdio`` against an OpenAI-compatible
provider over plain ``http://`` (the real ``agentd mock-llm`` on loopback), its ``hello world``
scenario (a write and a bash tool call).

Both processes (the client and the ``agentd serve --stdio`` it starts) write the modules they
hold when they exit (a ``sitecustomize`` on ``PYTHONPATH`` hooks ``atexit`` and ``os._exit``);
every top-level package must be on the process's allow-list below, so a new import on the
path fails here and is either made lazy or added with its reason. Some modules the path does not
use still come with the standard library the path does use, and are allowed for that reason:
``ssl`` (``asyncio.base_events`` imports it), ``traceback``/``linecache``/``tokenize`` (imported
by ``logging``, which ``concurrent.futures`` imports, and by ``inspect`` under
``typing_extensions`` under msgspec), ``structlog.dev`` (``structlog``'s own ``__init__``) and
``bz2``/``lzma`` (``shutil``, which ``tempfile`` imports). No TLS context and no CA bundle is
loaded for a plain ``http://`` provider: ``certifi`` is not imported.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.agentctl.harness import Sandbox
from tests.harness import scaled, wait_until

DUMP = """
import atexit, os, sys
def _dump():
    path = os.path.join(os.environ["AGENTD_TEST_IMPORT_LOG"], f"{os.getpid()}.txt")
    with open(path, "w") as out:
        out.write(" ".join(sys.argv) + "\\n" + "\\n".join(sorted(sys.modules)))
atexit.register(_dump)
_exit = os._exit
def _dumping_exit(code):
    _dump()
    _exit(code)
os._exit = _dumping_exit
"""

STDLIB_COMMON = {
    "abc",
    "argparse",
    "array",
    "ast",
    "asyncio",
    "atexit",
    "base64",
    "binascii",
    "bisect",
    "builtins",
    "bz2",
    "codecs",
    "collections",
    "concurrent",
    "contextlib",
    "contextvars",
    "copy",
    "copyreg",
    "dataclasses",
    "datetime",
    "dis",
    "encodings",
    "enum",
    "errno",
    "fcntl",
    "fnmatch",
    "functools",
    "genericpath",
    "gettext",
    "hashlib",
    "heapq",
    "hmac",
    "importlib",
    "inspect",
    "io",
    "ipaddress",
    "itertools",
    "json",
    "keyword",
    "linecache",
    "locale",
    "logging",
    "lzma",
    "marshal",
    "math",
    "opcode",
    "operator",
    "os",
    "posix",
    "posixpath",
    "random",
    "re",
    "reprlib",
    "secrets",
    "select",
    "selectors",
    "shlex",
    "shutil",
    "signal",
    "site",
    "sitecustomize",
    "socket",
    "sre_compile",
    "sre_constants",
    "sre_parse",
    "ssl",
    "stat",
    "string",
    "struct",
    "subprocess",
    "sys",
    "tempfile",
    "termios",
    "textwrap",
    "threading",
    "time",
    "token",
    "tokenize",
    "traceback",
    "types",
    "typing",
    "uuid",
    "warnings",
    "weakref",
    "zipimport",
    "zlib",
    "zoneinfo",
    "grp",
    "pwd",
    "unicodedata",
}


def _top_levels(modules: list[str]) -> set[str]:
    """Top-level names, less the interpreter's internals and C accelerators (``_…``)."""
    return {name.split(".")[0] for name in modules if not name.startswith("_")}


def _run_one_shot(sandbox: Sandbox, log: Path) -> dict[str, list[str]]:
    """Run the one-shot, return the modules each process held at exit, by its argv."""
    mock_log = sandbox.root / "mock-llm.log"
    with mock_log.open("wb") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "agentd", "mock-llm", "--port", "0"],
            env=sandbox.env, stdin=subprocess.DEVNULL, stderr=out,
        )  # fmt: skip
    try:
        pattern = r"(http://127\.0\.0\.1:\d+/v1)"
        found = wait_until(lambda: re.search(pattern, mock_log.read_text()), 30, "mock-llm URL")
        sandbox.user_config(
            f'[providers.local]\napi = "openai"\nbase_url = "{found.group(1)}"\n'
            'models = ["mock-model"]\n'
        )
        site = sandbox.root / "site"
        site.mkdir()
        (site / "sitecustomize.py").write_text(DUMP)
        env = dict(sandbox.env, PYTHONPATH=str(site), AGENTD_TEST_IMPORT_LOG=str(log))
        agentctl = Path(sys.executable).with_name("agentctl")
        argv = [str(agentctl), "send", "--stdio", "--provider", "local", "hello world"]
        result = subprocess.run(
            argv, cwd=sandbox.project, env=env, capture_output=True, text=True,
            timeout=scaled(120), check=False,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        assert (sandbox.project / "hello.py").is_file(), result.stdout  # the tools did run
    finally:
        server.terminate()
        server.wait(scaled(15))
    dumps = [path.read_text().split("\n") for path in log.glob("*.txt")]
    return {lines[0]: lines[1:] for lines in dumps}


def test_a_cold_one_shot_imports_only_the_allowed_packages(tmp_path: Path) -> None:
    sandbox = Sandbox()
    log = tmp_path / "imports"
    log.mkdir()
    held = _run_one_shot(sandbox, log)
    client = next(mods for argv, mods in held.items() if " send " in argv)
    daemon = next(mods for argv, mods in held.items() if "serve --stdio" in argv)
    assert _top_levels(client) - STDLIB_COMMON - CLIENT == set()
    assert _top_levels(daemon) - STDLIB_COMMON - DAEMON == set()
    for modules in (client, daemon):
        assert "certifi" not in modules  # no CA bundle for a plain http:// provider


STDLIB_COMMON |= {"decimal", "numbers", "ntpath", "pathlib", "platform", "compression", "urllib"}
CLIENT = {"agentctl", "agentd", "msgspec", "typing_extensions", "tty"}
DAEMON = {
    "agentd",
    "msgspec",
    "typing_extensions",
    "structlog",
    "tomllib",
    "queue",
    "httpx",
    "httpcore",
    "h11",
    "anyio",
    "sniffio",
    "idna",
    "http",
    "email",
    "mimetypes",
    "quopri",
    "calendar",
    "ctypes",
    "gc",
    "runpy",
    "difflib",
    "tree_sitter",  # the bash command parser (permissions, read-only rules)
    "tree_sitter_bash",
    # found on the path and still to be removed (``structlog.dev`` loads ``rich`` and
    # ``colorama`` when installed; the rest come with them): allowed until then
    "rich",
    "colorama",
    "click",
    "greenlet",
    "pickle",
}
