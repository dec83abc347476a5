"""The test harness every folder builds on: isolated homes, real daemons, clients, and waits.

- :class:`IsolatedHome`: a short temp directory (Unix socket paths stay far below 108 bytes)
  holding its own XDG runtime, state, data and config directories and a project directory,
  with an environment stripped of the caller's ``XDG_*``, ``AGENTD_*`` and provider keys;
  a process started with ``home.env`` never touches the user's daemon, sessions or config.
  :class:`Home` adds what the end-to-end tests expect: a trusted project with fast retries
  and the mock LLM answering :data:`tests.scenarios.E2E_SCENARIOS` before its built-ins.
- Daemons: ``home.start_socket_daemon()`` and ``home.start_tcp_daemon()``, :func:`start_daemon`
  (any argv, returned once a readiness condition holds), :func:`stop` (a signal, then SIGKILL
  after a timeout) and :func:`wait_pid_exit` for daemons that are not our children.
- Clients: :func:`stdio_client` and :func:`socket_client` (agentctl's ``AgentClient``),
  :func:`spawn_stdio_connection` (a bare JSON-RPC ``Connection``), and the run helpers
  :func:`new_session`, :func:`run`, :func:`start_run`, :func:`drain`, :func:`kinds`.
- Waits on a condition, never a fixed sleep: :func:`wait_until`, :func:`wait_until_async`,
  :func:`wait_for_file`, :func:`wait_ready`. Every deadline here is multiplied by
  :data:`SLOWDOWN`; a test's own deadline goes through :func:`scaled`.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from tests.scenarios import E2E_SCENARIOS

if TYPE_CHECKING:
    from agentctl.client import AgentClient, PermissionHandler, QuestionHandler
    from agentd.rpc import Connection, Router

T = TypeVar("T")
REPO = Path(__file__).resolve().parents[1]
BUILTIN_SCENARIOS = REPO / "daemon" / "agentd" / "mockllm" / "scenarios.json"
FAST_RETRIES = "[retry]\nmax_attempts = 3\nbase_delay_ms = 10\nmax_delay_ms = 50\n"
XDG_DIRS = {
    "XDG_RUNTIME_DIR": "run",
    "XDG_STATE_HOME": "sta",
    "XDG_DATA_HOME": "dat",
    "XDG_CONFIG_HOME": "con",
}
PROVIDER_KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "LLM_BASE_URL", "OPENAI_BASE_URL")
TEST_MODE = 'permission_mode = "auto"\n'
TEST_OPT_IN = "[permissions]\nallow_auto_without_sandbox = true\n"
"""What a home's user configuration sets for the tests' runs (:meth:`IsolatedHome.user_config`):
``auto`` mode, opted in without a sandbox. The daemon's own defaults (``ask``; ``auto`` only
with the workspace sandbox) apply where a test writes its configuration with ``auto=False``."""


# --- waiting on conditions ------------------------------------------------------------------


def _slowdown() -> float:
    given = os.environ.get("AGENTD_TEST_SLOWDOWN", "")
    try:
        return max(1.0, float(given)) if given else _default_slowdown()
    except ValueError:
        return 1.0


def _default_slowdown() -> float:
    """2 on two cores or fewer, 1 above; raised to the 1-minute load average per core when the
    machine is busier than that, at most 8."""
    cores = os.cpu_count() or 1
    try:
        per_core = os.getloadavg()[0] / cores
    except OSError:  # no load average on this system
        per_core = 0.0
    return max(2.0 if cores <= 2 else 1.0, min(8.0, round(per_core, 1)))


SLOWDOWN = _slowdown()
"""How much longer than on a quiet machine a deadline may take: ``AGENTD_TEST_SLOWDOWN``, or by
default 2 on a machine with two cores or fewer (where another test run beside this one can
triple every latency) and the load average per core when the machine is already busier than
that (read once per test process, capped at 8: at a load of 25 on two cores every deadline is 8
times its quiet-machine value). Deadlines only bound how long a failing test waits, so a
large factor costs a passing run nothing."""


def scaled(seconds: float) -> float:
    """A test's deadline of ``seconds`` on a quiet machine, scaled by :data:`SLOWDOWN`."""
    return seconds * SLOWDOWN


TEST_MCP_STARTUP = f"mcp_startup_timeout = {scaled(60):g}\n"
"""The tests' user configuration gives MCP servers a minute (scaled) to start: the SDK's test
servers take seconds to import, and on a loaded 2-core machine they took longer than the
daemon's default 30 s."""


def wait_until(
    condition: Callable[[], T | None], timeout: float = 10, what: str = "", interval: float = 0.02
) -> T:
    """Poll ``condition`` until it returns something true and return that; TimeoutError
    naming ``what`` once ``timeout`` seconds (scaled) pass."""
    timeout = scaled(timeout)
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise TimeoutError(f"not within {timeout} s: {what or condition}")
        time.sleep(interval)


async def wait_until_async(
    condition: Callable[[], T | Awaitable[T | None] | None],
    timeout: float = 10,
    what: str = "",
    interval: float = 0.01,
) -> T:
    """:func:`wait_until` for a coroutine: the event loop keeps running between polls, and
    ``condition`` may be a coroutine function (an RPC asking the daemon, say)."""
    timeout = scaled(timeout)
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return cast(T, value)
        if time.monotonic() >= deadline:
            raise TimeoutError(f"not within {timeout} s: {what or condition}")
        await asyncio.sleep(interval)


async def wait_for_file(path: Path, timeout: float = 10) -> None:
    """Wait until ``path`` exists (a command the test started has reached that point)."""
    await wait_until_async(path.exists, timeout, f"{path} to appear")


# --- daemon processes -----------------------------------------------------------------------


def connectable(path: str | os.PathLike[str]) -> bool:
    """Whether the Unix socket ``path`` accepts a connection now."""
    with socket.socket(socket.AF_UNIX) as probe:
        return probe.connect_ex(os.fspath(path)) == 0


def start_daemon(
    argv: Sequence[str],
    env: dict[str, str],
    stderr: Path,
    ready: Callable[[], object],
    *,
    timeout: float = 15,
    **popen: Any,
) -> subprocess.Popen[bytes]:
    """Start ``argv`` (stdin and stdout on /dev/null, stderr appended to the file ``stderr``) and
    return it once ``ready()`` is true; RuntimeError with its stderr if it exits first, and
    stopped again if it is not ready within ``timeout`` seconds."""
    with stderr.open("ab") as err:
        process = subprocess.Popen(
            argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, **popen
        )

    wait_ready(process, ready, timeout, stderr)
    return process


def wait_ready(
    process: subprocess.Popen[Any],
    ready: Callable[[], object],
    timeout: float = 15,
    stderr: Path | None = None,
) -> None:
    """Wait until ``ready()`` is true; RuntimeError (with the ``stderr`` file's text) if
    ``process`` exits first; ``process`` is stopped if it is not ready in time."""

    def up() -> object:
        if process.poll() is not None:
            said = stderr.read_text(errors="replace") if stderr else ""
            raise RuntimeError(f"daemon exited with {process.returncode}:\n{said}")
        return ready()

    try:
        wait_until(up, timeout, f"{process.args!r} to be ready")
    except BaseException:
        stop(process)
        raise


def stop(process: subprocess.Popen[Any], sig: int = signal.SIGTERM, timeout: float = 15) -> int:
    """Send ``sig`` and wait for the process (SIGKILL if it has not exited after ``timeout``
    seconds); returns its exit code."""
    if process.poll() is None:
        process.send_signal(sig)
        try:
            process.wait(scaled(timeout))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    return process.returncode


def stop_processes_with_env(assignment: str, grace: float = 5) -> None:
    """Stop every process (but this one) running with ``assignment`` (``NAME=value``) in its
    environment — say, the runtime folder of a test's isolated home, so whatever the test
    started and did not stop goes with it: SIGTERM, then SIGKILL after ``grace`` seconds."""
    marker = assignment.encode()
    ours = [pid for pid in _running_pids() if pid != os.getpid() and _has_env(pid, marker)]
    for pid in ours:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)
    for pid in ours:
        wait_pid_exit(pid, grace)


def _running_pids() -> list[int]:
    """The pids of every process this user can see in ``/proc``."""
    return [int(entry.name) for entry in Path("/proc").iterdir() if entry.name.isdigit()]


def _has_env(pid: int, assignment: bytes) -> bool:
    """Whether process ``pid`` runs with ``assignment`` (``NAME=value``) in its environment
    (False when it is gone or not ours to read)."""
    try:
        return assignment in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return False


def wait_pid_exit(pid: int, timeout: float = 5) -> bool:
    """Wait for process ``pid`` (not necessarily our child) to end, by its pidfd; SIGKILL it
    after ``timeout`` seconds. True if it ended by itself."""
    try:
        pidfd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        if select.select([pidfd], [], [], scaled(timeout))[0]:
            return True
        signal.pidfd_send_signal(pidfd, signal.SIGKILL)
        select.select([pidfd], [], [], timeout)
        return False
    finally:
        os.close(pidfd)


def isolated_env(root: Path) -> dict[str, str]:
    """This process's environment without ``XDG_*``, ``AGENTD_*`` and provider keys, with the
    XDG base directories under ``root`` (made, mode 0700, where missing), and
    ``AGENTCTL_SHARED=1``: a plain ``agentctl send`` uses the shared daemon, autostarted, as
    the tests that follow its sessions from other commands expect (those of the in-process
    one-shot, ``tests/agentctl/test_oneshot_e2e.py``, drop it)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "AGENTD_"))}
    env["AGENTCTL_SHARED"] = "1"
    for key in PROVIDER_KEYS:
        env.pop(key, None)
    for name, folder in XDG_DIRS.items():
        path = root / folder
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        env[name] = str(path)
    return env


class IsolatedHome:
    """Isolated directories and environment for one test (see the module docstring).

    ``socket`` is the daemon's default socket path, ``log`` the log file and ``stderr`` the
    file :meth:`start_socket_daemon` and :func:`stdio_client` send the daemon's stderr to;
    ``runtime_dir``, ``state_dir``, ``config_dir`` and ``sessions`` are where the daemon keeps
    its socket, log, config and sessions.
    """

    prefix = "h-"

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix=self.prefix, dir="/tmp"))
        self.project = self.root / "proj"
        self.project.mkdir()
        self.env = isolated_env(self.root)
        self.runtime_dir = Path(self.env["XDG_RUNTIME_DIR"])
        self.state_dir = Path(self.env["XDG_STATE_HOME"])
        self.config_dir = Path(self.env["XDG_CONFIG_HOME"])
        self.sessions = Path(self.env["XDG_DATA_HOME"]) / "agentd" / "sessions"
        self.socket = self.runtime_dir / "agentd" / "agentd.sock"
        self.log = self.root / "daemon.log"
        self.stderr = self.root / "stderr.txt"
        self.tcp_token_file = self.root / "tcp.token"
        self.user_config()

    def user_config(self, text: str = "", *, auto: bool = True) -> Path:
        """Write the user's ``config.toml``: ``text``, plus (``auto``) the tests' run mode:
        :data:`TEST_MODE` first unless ``text`` sets a mode (and :data:`TEST_MCP_STARTUP`
        unless it sets that), :data:`TEST_OPT_IN` last unless
        it has a ``[permissions]`` table (then add the opt-in to it). Returns its path."""
        if auto:
            mode = "" if "permission_mode" in text else TEST_MODE
            if "mcp_startup_timeout" not in text:
                mode += TEST_MCP_STARTUP
            if "[permissions]\n" in text:
                opt_in = ""
                text = text.replace("[permissions]\n", TEST_OPT_IN, 1)
            else:
                opt_in = "\n" + TEST_OPT_IN
            text = mode + text + opt_in
        path = self.config_dir / "agentd" / "config.toml"
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        path.write_text(text)
        return path

    def agentd(self, *args: str) -> list[str]:
        """The argv of ``agentd ARGS…`` in this interpreter."""
        return [sys.executable, "-m", "agentd", *args]

    def run_agentd(
        self, *args: str, timeout: float = 30, **kw: Any
    ) -> subprocess.CompletedProcess[bytes]:
        """Run ``agentd ARGS…`` to completion (``timeout`` scaled), output captured."""
        return subprocess.run(
            self.agentd(*args),
            env=self.env,
            capture_output=True,
            timeout=scaled(timeout),
            check=False,
            **kw,
        )

    def log_args(self) -> list[str]:
        """The options that send a started daemon's log to :attr:`log`."""
        return ["--log-file", str(self.log)]

    def start_socket_daemon(self, *extra: str, path: Path | None = None) -> subprocess.Popen[bytes]:
        """``agentd serve --socket`` in the background; returns once the socket accepts."""
        path = path or self.socket
        argv = self.agentd("serve", "--socket", str(path), *self.log_args(), *extra)
        return start_daemon(argv, self.env, self.stderr, lambda: connectable(path))

    def start_tcp_daemon(self, *extra: str, **popen: Any) -> tuple[subprocess.Popen[bytes], int]:
        """``agentd serve --tcp 127.0.0.1:0``, its token in :attr:`tcp_token_file`; returns
        the process and its port once it has said on stderr where it listens."""
        argv = self.agentd(
            "serve", "--tcp", "127.0.0.1:0", "--token-file", str(self.tcp_token_file)
        )
        before = self.stderr.stat().st_size if self.stderr.exists() else 0

        def port() -> int | None:
            with self.stderr.open("rb") as said:
                said.seek(before)
                found = re.search(rb"listening on 127\.0\.0\.1:(\d+)", said.read())
            return int(found[1]) if found else None

        process = start_daemon(
            [*argv, *self.log_args(), *extra], self.env, self.stderr, port, **popen
        )
        return process, int(port() or 0)

    def tcp_token(self) -> str:
        """The token a TCP daemon of this home wrote."""
        return self.tcp_token_file.read_text().strip()

    def log_events(self) -> list[dict[str, Any]]:
        """The daemon log, parsed (every line must be JSON)."""
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    def use_scenarios(self, extra: Sequence[dict[str, Any]]) -> None:
        """Make the mock LLM try the ``extra`` scenarios before those it already has."""
        path = self.root / "scenarios.json"
        scenarios = json.loads((path if path.exists() else BUILTIN_SCENARIOS).read_text())
        scenarios["scenarios"] = [*extra, *scenarios["scenarios"]]
        path.write_text(json.dumps(scenarios))
        self.env["AGENTD_MOCK_SCENARIOS"] = str(path)

    def stop_leftover_daemons(self, grace: float = 5) -> None:
        """Stop every process still running with this home's environment: daemons started by
        a client's autostart or by a test that did not stop them, whether or not they wrote a
        pid file. SIGTERM, then SIGKILL after ``grace`` seconds. A process whose environment
        is not this home's is never touched (a reused pid in an old pid file, say)."""
        stop_processes_with_env(f"XDG_RUNTIME_DIR={self.runtime_dir}", grace)

    def cleanup(self) -> None:
        """Stop leftover daemons and remove the directories."""
        self.stop_leftover_daemons()
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.cleanup()


class Home(IsolatedHome):
    """The end-to-end tests' home: a trusted project (fast retries), the mock LLM's
    scenarios with :data:`tests.scenarios.E2E_SCENARIOS` first, the socket at
    ``run/agentd.sock``; a socket daemon logs to its default file, its stderr (and that of
    :func:`stdio_client`) goes to ``daemon.log``."""

    prefix = "e2e-"

    def __init__(self) -> None:
        from agentd.protocol.trust_list import add_trusted

        super().__init__()
        (self.project / ".agentd.toml").write_text(FAST_RETRIES)
        add_trusted(self.project, self.env)  # tests of untrusted projects use other folders
        self.socket = self.runtime_dir / "agentd.sock"
        self.log = self.state_dir / "agentd" / "agentd.log"
        self.stderr = self.root / "daemon.log"
        self.use_scenarios(E2E_SCENARIOS)

    def log_args(self) -> list[str]:
        return []

    def trust(self) -> None:
        """Trust the project's control files as they are now (trust pins their content, so a
        test that adds a ``.mcp.json`` or ``.agentd/commands/`` trusts them again)."""
        from agentd.protocol.trust_list import add_trusted

        add_trusted(self.project, self.env)

    def project_config(self, top: str = "", tables: str = "") -> None:
        """Add settings to the project's ``.agentd.toml`` (top-level keys before its tables,
        tables after) and trust its new content (trust is pinned to the file's content)."""
        from agentd.protocol.trust_list import add_trusted

        config = self.project / ".agentd.toml"
        config.write_text(top + config.read_text() + tables)
        add_trusted(self.project, self.env)


# --- clients --------------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def stdio_client(
    home: IsolatedHome, permission_handler: PermissionHandler | None = None
) -> AsyncIterator[AgentClient]:
    """A private ``agentd serve --stdio`` for one test, in ``home.project``."""
    from agentctl.client import spawn_stdio

    client = await spawn_stdio(
        env=home.env,
        cwd=str(home.project),
        log_path=home.stderr,
        permission_handler=permission_handler,
    )
    try:
        yield client
    except BaseException:
        _show_log_tail(home.stderr)  # a failing test shows what the daemon logged
        raise
    finally:
        await client.close()


def _show_log_tail(path: Path, lines: int = 40) -> None:
    """Write the last ``lines`` of the daemon log at ``path`` to stderr (pytest shows it
    with the failure)."""
    with contextlib.suppress(OSError):
        tail = path.read_text(errors="replace").splitlines()[-lines:]
        sys.stderr.write(f"--- last lines of {path} ---\n" + "\n".join(tail) + "\n")


@contextlib.asynccontextmanager
async def socket_client(
    home: IsolatedHome,
    permission_handler: PermissionHandler | None = None,
    question_handler: QuestionHandler | None = None,
) -> AsyncIterator[AgentClient]:
    """A client of the daemon already serving ``home.socket`` (with ``question_handler`` it
    declares the ``questions`` capability)."""
    from agentctl.client import connect

    client = await connect(
        home.socket,
        autostart=False,
        permission_handler=permission_handler,
        question_handler=question_handler,
    )
    try:
        yield client
    finally:
        await client.close()


async def replayed(client: AgentClient, session_id: str) -> list[dict[str, Any]]:
    """Every event item ``session/load {replay}`` sends for ``session_id`` on ``client``."""
    stream = client.raw_events(session_id)
    await client.call("session/load", {"sessionId": session_id, "replay": True})
    stream.close()
    return [item async for item in stream]


async def spawn_stdio_connection(
    home: IsolatedHome, *extra: str, framing: str = "ndjson", router: Router | None = None
) -> tuple[asyncio.subprocess.Process, Connection]:
    """``agentd --stdio`` as a child, with a bare JSON-RPC Connection on its pipes."""
    from agentd.rpc.connect import open_connection

    with home.stderr.open("ab") as err:
        process = await asyncio.create_subprocess_exec(
            *home.agentd("--stdio", *extra),
            env=home.env,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=err,
        )
    assert process.stdout is not None
    assert process.stdin is not None
    return process, open_connection(process.stdout, process.stdin, router, framing=framing)


async def new_session(client: AgentClient, home: IsolatedHome, **params: Any) -> str:
    """``session/new`` in ``home.project`` with the mock provider; returns the session id."""
    params = {"cwd": str(home.project), "provider": "mock", **params}
    info = await client.call("session/new", params)
    return str(info["sessionId"])


async def run(
    client: AgentClient, session_id: str, text: str, timeout: float = 30
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Prompt and collect this session's events up to agent_end (the answer within ``timeout``
    seconds, scaled); returns (result, events)."""
    stream = client.raw_events(session_id)
    try:
        result = await asyncio.wait_for(
            client.call("session/prompt", {"sessionId": session_id, "text": text}),
            scaled(timeout),
        )
        events = await drain(stream, until="agent_end")
    finally:
        stream.close()
    return result, events


async def start_run(
    client: AgentClient, session_id: str, text: str, *, until: str
) -> tuple[Any, asyncio.Task[Any]]:
    """Start a prompt and wait for its first ``until`` event; returns (event stream, the
    pending prompt call)."""
    stream = client.raw_events(session_id)
    prompt = asyncio.create_task(
        client.call("session/prompt", {"sessionId": session_id, "text": text})
    )
    await drain(stream, until=until)
    return stream, prompt


async def drain(stream: Any, until: str, timeout: float = 10) -> list[dict[str, Any]]:
    """The events of ``stream`` up to and including the first of type ``until``."""
    events: list[dict[str, Any]] = []

    async def collect() -> None:
        async for params in stream:
            events.append(params)
            if params["event"]["type"] == until:
                return

    await asyncio.wait_for(collect(), scaled(timeout))
    return events


def kinds(events: list[dict[str, Any]]) -> list[str]:
    """The event type of each ``session/event`` params."""
    return [e["event"]["type"] for e in events]
