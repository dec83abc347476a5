"""Event-loop lag under heavy loads, and bounded descriptors with many sessions touched.

One real ``agentd serve --socket`` with the mock LLM. While each load runs, a prober process
on its own connection sends ``daemon/status`` back to back (a 5 ms pause between calls) and
records every round trip; the row is the p99 (and max) of those round trips: how long any
client may wait for the daemon while the load runs. Budget: p99 ≤ 50 ms.

Loads (their scale is in the row names):

* ``session load``: ``session/load`` of a ~200 MB session file;
* ``find`` (a pattern matching nothing: the whole walk) and ``grep`` over a tree of 300,000
  files (``find`` walks it in Python; ``grep`` uses ripgrep when installed, else the Python
  backend);
* ``ReDoS globs``: ``find`` with ``"*a" * 14 + "b"`` in a directory of 40-character names
  and a ``.gitignore`` line ``"*a" * 9 + "b"``;
* ``ReDoS grep regex``: ``grep`` with ``(a+)+$`` over a line of 60 ``a`` on the Python backend
  (in a project whose ``.agentd.toml`` sets ``grep_backend = "python"`` and ``grep_timeout =
  3``): the search process runs until it is stopped after 3 s;
* ``bash 1 GB``: ``head -c 1G /dev/zero | tr '\\0' y`` (output captured, spilled, streamed);
* ``fsync storm``: 8 sessions at once, each running three 20-turn tool loops in a row (an
  fsync per turn end each) while ``dd oflag=dsync`` floods the same disk with synchronous
  writes (three loops, so that the storm lasts long enough for a p99 of some hundreds of
  samples).

A last row touches 10,000 sessions (``session/new`` on short connections, with
``--max-loaded-sessions 256``) and reports the daemon's open descriptors and RSS after.
Generated data lives under ``/tmp/agentd-bench-lag`` and is reused.

Run: ``python -m tests.bench.bench_loop_lag [NAME]`` (NAME: only the rows whose name contains
it, e.g. ``fsync``).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any

from agentctl.client import AgentClient, connect
from tests.bench import smoke
from tests.bench.smoke import size
from tests.harness import (
    TEST_MODE,
    TEST_OPT_IN,
    connectable,
    isolated_env,
    scaled,
    start_daemon,
    stop,
    wait_until_async,
)

DATA = smoke.data_dir("lag")
TREE_FILES = size(300_000, 300)
SESSION_BYTES = size(200 * 2**20, 2**20)
Row = tuple[str, str, str]
BUDGET = "≤ 50 ms"
PRINTED = "1M" if smoke.enabled() else "1G"  # what "bench bash" prints
STORM_SESSIONS, STORM_RUNS = size(8, 1), size(3, 1)
TOUCHED = size(10_000, 200)


def _call(name: str, args: dict[str, Any], n: int = 1) -> dict[str, Any]:
    function = {"name": name, "arguments": json.dumps(args)}
    return {"id": f"call_{n}", "type": "function", "function": function}


def _scenario(trigger: str, calls: list[dict[str, Any]], repeat: int = 1) -> dict[str, Any]:
    steps = [{"response": {"content": "Working.", "tool_calls": calls}} for _ in range(repeat)]
    return {"name": trigger, "trigger": trigger, "steps": [*steps, {"response": {"content": "ok"}}]}


SCENARIOS = [
    _scenario("bench find", [_call("find", {"pattern": "*.nomatch", "path": "tree"})]),
    _scenario("bench grep", [_call("grep", {"pattern": "needle-4242", "path": "tree"})]),
    _scenario("bench redos", [_call("find", {"pattern": "*a" * 14 + "b", "path": "redos"})]),
    _scenario("bench regex", [_call("grep", {"pattern": "(a+)+$"})]),
    _scenario(
        "bench bash", [_call("bash", {"command": f"head -c {PRINTED} /dev/zero | tr '\\0' y"})]
    ),
    _scenario("bench turns", [_call("bash", {"command": "echo step"})], repeat=20),
    _scenario("bench nap", [_call("bash", {"command": "sleep 60"})]),
]


# --- data ---------------------------------------------------------------------------------


def _tree(root: Path) -> None:
    """300,000 small files in 300 directories (created once)."""
    done = root / ".complete"
    if done.exists():
        return
    shutil.rmtree(root, ignore_errors=True)
    for d in range(300):
        folder = root / f"d{d:03}"
        folder.mkdir(parents=True)
        for f in range(TREE_FILES // 300):
            n = d * 1000 + f
            text = f"line of file {n}\n" + ("needle-4242\n" if n % 9973 == 0 else "")
            (folder / f"f{f:04}.txt").write_text(text)
    done.touch()


def _redos(root: Path) -> None:
    root.mkdir(exist_ok=True)
    (root / ".gitignore").write_text("*a" * 9 + "b\n")
    for n in range(50):
        (root / ("a" * 40 + f"{n:02}")).write_text("x")


def _regex_project(root: Path) -> None:
    """A project grepped with the Python backend, holding a line that makes ``(a+)+$``
    backtrack exponentially."""
    root.mkdir(exist_ok=True)
    (root / ".agentd.toml").write_text('[tools]\ngrep_backend = "python"\ngrep_timeout = 3\n')
    (root / "a.txt").write_text("a" * 60 + "b\n")


def _big_session(sessions: Path, cwd: Path) -> str:
    """A ~200 MB session file (user/assistant/tool turns); returns its id."""
    session_id = "bench-big-200mb"
    folder = sessions / "bench"
    target = folder / f"2026-01-01T00-00-00-000Z_{session_id}.jsonl"
    if target.exists() and target.stat().st_size >= SESSION_BYTES:
        return session_id
    folder.mkdir(parents=True, exist_ok=True)
    header = {"type": "session", "version": 1, "id": session_id, "cwd": str(cwd),
              "createdAt": "2026-01-01T00:00:00.000Z"}  # fmt: skip
    text = ("lorem ipsum dolor sit amet " * 400)[:10_000]
    with target.open("w") as out:
        out.write(json.dumps(header) + "\n")
        parent, n = None, 0
        while out.tell() < SESSION_BYTES:
            n += 1
            role = "user" if n % 2 else "assistant"
            message: dict[str, Any] = {"role": role, "id": f"m{n}", "timestamp": 1.0,
                                       "content": [{"type": "text", "text": text}]}  # fmt: skip
            if role == "assistant":
                message |= {"provider": "mock", "model": "mock", "stopReason": "stop"}
            entry = {"type": "message", "id": f"e{n}", "parentId": parent,
                     "timestamp": "2026-01-01T00:00:00.000Z", "message": message}  # fmt: skip
            out.write(json.dumps(entry) + "\n")
            parent = f"e{n}"
    return session_id


# --- the daemon and the prober ------------------------------------------------------------


class Daemon:
    """``agentd serve --socket`` in isolated XDG directories under a fresh ``root``."""

    def __init__(self, root: Path, *flags: str) -> None:
        root.mkdir(parents=True)
        self.root = root
        self.socket = str(root / "run" / "agentd.sock")
        self.env = isolated_env(root)
        config = Path(self.env["XDG_CONFIG_HOME"]) / "agentd" / "config.toml"
        config.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        config.write_text(TEST_MODE + TEST_OPT_IN)  # bash runs without asking, as in the tests
        scenarios = {"scenarios": SCENARIOS, "default_response": {"content": "ok"}}
        (root / "scenarios.json").write_text(json.dumps(scenarios))
        self.env["AGENTD_MOCK_SCENARIOS"] = str(root / "scenarios.json")
        argv = [sys.executable, "-m", "agentd", "serve", "--socket", self.socket, *flags]
        ready = partial(connectable, self.socket)
        self.process = start_daemon(argv, self.env, root / "daemon.log", ready)

    def stop(self) -> None:
        stop(self.process, timeout=30)

    async def loaded_sessions(self) -> int:
        """How many sessions the daemon holds loaded now."""
        client = await connect(self.socket, autostart=False)
        try:
            return len((await client.call("daemon/status"))["sessions"])
        finally:
            await client.close()

    def fds(self) -> int:
        return len(os.listdir(f"/proc/{self.process.pid}/fd"))

    def rss_mib(self) -> float:
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        line = next(x for x in status.splitlines() if x.startswith("VmRSS:"))
        return int(line.split()[1]) / 1024


PROBE = r"""
import json, socket, sys, threading, time
sock = socket.socket(socket.AF_UNIX)
sock.connect(sys.argv[1])
stream = sock.makefile("rb")
def rpc(n, method):
    sock.sendall(json.dumps({"jsonrpc": "2.0", "id": n, "method": method}).encode() + b"\n")
    while json.loads(stream.readline()).get("id") != n:
        pass
rpc(0, "initialize")
stop = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
print("ready", flush=True)
times, n = [], 0
while not stop.is_set():
    n += 1
    start = time.perf_counter()
    rpc(n, "daemon/status")
    times.append(time.perf_counter() - start)
    time.sleep(0.005)
print(json.dumps(times), flush=True)
"""


class Prober:
    """A second client in its own process: ``daemon/status`` round trips until stopped (so
    nothing in this process can delay its measurements)."""

    def __init__(self, path: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", PROBE, path],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        assert self.process.stdout.readline().strip() == "ready"

    def finish(self) -> list[float]:
        out, _ = self.process.communicate("", timeout=scaled(60))
        times: list[float] = json.loads(out.strip().splitlines()[-1])
        return times


async def _lag(daemon: Daemon, name: str, load: Callable[[], Awaitable[object]]) -> Row:
    prober = Prober(daemon.socket)
    started = time.perf_counter()
    await load()
    took = time.perf_counter() - started
    times = sorted(prober.finish())
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))] * 1000
    worst = times[-1] * 1000
    label = f"loop lag p99, {name} ({took:.1f} s, max {worst:.0f} ms, n={len(times)})"
    return label, f"{p99:.1f} ms", BUDGET


async def _prompt(client: AgentClient, cwd: Path, text: str) -> None:
    info = await client.call("session/new", {"cwd": str(cwd), "provider": "mock"})
    result = await client.call("session/prompt", {"sessionId": info["sessionId"], "text": text})
    assert result["stopReason"] == "end_turn", result


async def _prompts(client: AgentClient, cwd: Path, text: str, runs: int) -> None:
    """``runs`` prompts in a row in one new session."""
    info = await client.call("session/new", {"cwd": str(cwd), "provider": "mock"})
    for _ in range(runs):
        params = {"sessionId": info["sessionId"], "text": text}
        result = await client.call("session/prompt", params)
        assert result["stopReason"] == "end_turn", result


async def _fsync_storm(client: AgentClient, cwd: Path) -> None:
    dd = subprocess.Popen(
        ["dd", "if=/dev/zero", f"of={DATA / 'storm.bin'}", "bs=64k", f"count={size(100_000, 100)}",
         "oflag=dsync"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        await asyncio.gather(
            *(_prompts(client, cwd, "bench turns", STORM_RUNS) for _ in range(STORM_SESSIONS))
        )
    finally:
        dd.kill()
        dd.wait()
        (DATA / "storm.bin").unlink(missing_ok=True)


async def _touch_sessions(daemon: Daemon, cwd: Path, count: int) -> Row:
    for _ in range(0, count, 100):
        client = await connect(daemon.socket, autostart=False)
        try:
            params = {"cwd": str(cwd), "provider": "mock"}
            await asyncio.gather(*(client.call("session/new", params) for _ in range(100)))
        finally:
            await client.close()

    async def capped() -> bool:  # the unloader has come down to the cap (it runs every few s)
        return await daemon.loaded_sessions() <= 256

    await wait_until_async(capped, 30, "the loaded sessions down to the cap", 0.05)
    label = f"daemon fds / RSS after {count:,} sessions touched (--max-loaded-sessions 256)"
    return label, f"{daemon.fds()} fds, {daemon.rss_mib():.0f} MiB", "bounded (≤ 300 fds)"


async def _measure(only: str | None = None) -> list[Row]:
    """Every row, or only those whose name contains ``only``."""
    work = DATA / "work"
    work.mkdir(parents=True, exist_ok=True)
    print("  preparing data (first run only: 300k files, 200 MB session) ...", file=sys.stderr)
    _tree(work / "tree")
    _redos(work / "redos")
    _regex_project(DATA / "regex")
    run_root = DATA / "run"
    shutil.rmtree(run_root, ignore_errors=True)
    sessions = DATA / "sessions"
    for folder in sessions.glob("*"):
        if folder.name != "bench":
            shutil.rmtree(folder)
    big = _big_session(sessions, work)
    flags = ["--session-dir", str(sessions), "--max-loaded-sessions", "256", "--idle-unload", "0"]
    daemon = Daemon(run_root, *flags)
    rows: list[Row] = []
    try:
        client = await connect(daemon.socket, autostart=False)
        try:
            await _prompt(client, work, "warm up")
            regex = "ReDoS grep regex (a+)+$, Python backend, stopped after 3 s"
            loads: list[tuple[str, Callable[[], Awaitable[Any]]]] = [
                ("session/load of 200 MB", lambda: client.call("session/load", {"sessionId": big}))
            ]
            for name, text, cwd in [
                ("find over 300k files", "bench find", work),
                ("grep over 300k files", "bench grep", work),
                ("ReDoS globs (find + .gitignore)", "bench redos", work),
                (regex, "bench regex", DATA / "regex"),
                ("bash printing 1 GB", "bench bash", work),
            ]:
                loads.append((name, lambda t=text, c=cwd: _prompt(client, c, t)))
            storm = "fsync storm (8 sessions x 3 runs x 20 turns + dd oflag=dsync)"
            loads.append((storm, lambda: _fsync_storm(client, work)))
            for name, load in loads:
                if only is None or only in name:
                    rows.append(await _lag(daemon, name, load))
        finally:
            await client.close()
        if only is None or only in "sessions touched":
            rows.append(await _touch_sessions(daemon, work, TOUCHED))
    finally:
        daemon.stop()
    return rows


def main(only: str | None = None) -> list[Row]:
    return asyncio.run(_measure(only))


if __name__ == "__main__":
    for row in main(sys.argv[1] if len(sys.argv) > 1 else None):
        print(" | ".join(row))
