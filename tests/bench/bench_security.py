"""Security budgets: the permission check of a 2 KB command, the bash grammar's first-use
cost, nothing added to daemon start-up, and the client's socket folder/peer check
(≤ 1 ms added to a connect).

Run: ``python -m tests.bench.bench_security``.
"""

from __future__ import annotations

import json
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from agentd import paths
from agentd.permissions.policy import PermissionPolicy
from agentd.tools import build_tools

Row = tuple[str, str, str]
_FIRST_USE = """
import time
from agentd.tools.shellparse.grammar import parse_command
start = time.perf_counter()
parse_command("npm test -- -k 'a b' && git status")
print((time.perf_counter() - start) * 1000)
"""
_STARTUP = """
import sys
from agentd.cli import main
code = main(['--stdio'])
sys.stderr.write('LOADED ' + ' '.join(m for m in ('tree_sitter', 'tree_sitter_bash',
    'agentd.permissions.policy', 'agentd.tools.shellparse.grammar') if m in sys.modules) + '\\n')
"""


def _command(seed: int) -> str:
    """A 2 KB command line: allowed simple commands joined by && and pipes."""
    parts = [f"npm test -- --grep case_{seed}_{i} 2>&1 | tee /dev/null" for i in range(60)]
    parts += ["git status", f"ls src/module_{seed}", "cat README.md"]
    return " && ".join(parts)[:2048].rsplit(" && ", 1)[0]


def _long_command(seed: int) -> str:
    """A 2 KB command of a few simple commands (a long commit message)."""
    message = " ".join(f"word{seed}_{i}" for i in range(400))[:1900]
    return f"git add -A && git commit -m '{message}' && git status"


def permission_check_rows() -> list[Row]:
    """Median and p95 of PermissionPolicy.check over distinct 2 KB commands (cache misses)
    in a project folder: a dense one (about 75 simple commands, 40 distinct argument words)
    and a long one (3 simple commands)."""
    rows: list[Row] = []
    for label, make in (("dense", _command), ("long", _long_command)):
        rows += _check_rows(label, make)
    return rows


def _project(root: Path) -> None:
    """A project folder as sessions see one: files, folders, a symlink, ignored clutter."""
    for name in ("README.md", "package.json", "package-lock.json", "tsconfig.json", ".env"):
        (root / name).write_text("{}\n")
    for folder in ("src", "tests", "docs", "scripts", ".git", "node_modules", "dist"):
        (root / folder).mkdir()
        for index in range(20):
            (root / folder / f"module_{index}.ts").write_text("export {}\n")
    (root / "env-link").symlink_to(root / ".env")


def _check_rows(label: str, make: Callable[[int], str]) -> list[Row]:
    tools = build_tools()
    with tempfile.TemporaryDirectory() as cwd:
        _project(Path(cwd))
        policy = PermissionPolicy(
            "ask",
            allow=[
                "bash(npm test:*)",
                "bash(git status)",
                "bash(tee:*)",
                "bash(ls:*)",
                "bash(cat:*)",
                "bash(git add:*)",
                "bash(git commit:*)",
            ],
            deny=["bash(rm:*)", "bash(curl:*)", "read(.env)", "write(.git/**)"],
            cwd=Path(cwd),
        )
        policy.check(tools["bash"], {"command": make(-1)})  # the grammar loads once
        timings = []
        for seed in range(300):
            command = make(seed)
            start = time.perf_counter()
            decision = policy.check(tools["bash"], {"command": command})
            timings.append((time.perf_counter() - start) * 1000)
            assert decision.action == "allow", decision
    size = len(make(0))
    median = statistics.median(timings)
    p95 = statistics.quantiles(timings, n=20)[-1]
    measure = f"permission check, {size} B {label} bash command"
    return [
        (f"{measure}, median", f"{median:.2f} ms", "≤ 1 ms"),
        (f"{measure}, p95", f"{p95:.2f} ms", "—"),
    ]


def first_use_rows() -> list[Row]:
    """The first parse in fresh interpreters (median of 5): loading the grammar included."""
    rows: list[Row] = []
    for label, code in (("grammar loaded on first use", _FIRST_USE),):
        timings = []
        for _ in range(5):
            out = subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, check=True
            )
            timings.append(float(out.stdout))
        measure = f"bash grammar cost on a session's first bash call ({label})"
        rows.append((measure, f"{statistics.median(timings):.1f} ms", "≤ 30 ms"))
    return rows


def startup_rows() -> list[Row]:
    """Whether a serving daemon (initialize, daemon/status) has loaded the parser."""
    wire = b'{"jsonrpc":"2.0","id":1,"method":"initialize"}\n'
    wire += b'{"jsonrpc":"2.0","id":2,"method":"daemon/status"}\n'
    with tempfile.TemporaryDirectory() as tmp:
        env = {"PATH": "/usr/bin:/bin", "HOME": tmp, "XDG_RUNTIME_DIR": tmp}
        env |= {"XDG_STATE_HOME": tmp, "XDG_DATA_HOME": tmp}
        done = subprocess.run(
            [sys.executable, "-c", _STARTUP], input=wire, capture_output=True, env=env, check=True
        )
    loaded = done.stderr.decode().rsplit("LOADED", 1)[1].split()
    assert [json.loads(line)["id"] for line in done.stdout.splitlines()] == [1, 2]
    return [("modules the parser adds to daemon start-up", ", ".join(loaded) or "none", "none")]


def spill_redaction_rows() -> list[Row]:
    """Throughput of a spill file written with redaction (16 MB of log-like output)."""
    from agentd.redact import Redactor
    from agentd.tools.process.spill import SpillWriter

    line = b"2026-11-23 INFO worker-3 fetched https://example.com/items?page=7 in 12 ms\n"
    chunk = line * (65536 // len(line))
    with tempfile.TemporaryDirectory() as folder:
        writer = SpillWriter.open(Path(folder), 20, 1 << 30, Redactor(["a-known-secret"]).text)
        start = time.perf_counter()
        for _ in range((16 << 20) // len(chunk)):
            writer.write(chunk)
        writer.close()
        elapsed = time.perf_counter() - start
    rate = writer.written / elapsed / 1e6
    return [("bash spill file written with redaction", f"{rate:.0f} MB/s", "—")]


def socket_check_rows(rounds: int = 2000) -> list[Row]:
    """What the client's checks add to a connect (``agentd.paths.check_socket_folder`` before,
    ``check_socket_peer`` after): median and p95 of a plain ``connect`` to a listening Unix
    socket, of the same with both checks, and of the checks alone."""
    with tempfile.TemporaryDirectory(dir="/tmp") as folder:
        path = str(Path(folder) / "agentd.sock")
        with socket.socket(socket.AF_UNIX) as server:
            server.bind(path)
            server.listen(rounds * 2 + 8)
            plain, checked, checks = [], [], []
            for _ in range(rounds):
                plain.append(_timed_connect(path, server, check=False)[0])
                total, only = _timed_connect(path, server, check=True)
                checked.append(total)
                checks.append(only)
    budget = "≤ 1 ms added"
    return [
        ("unix connect, no checks (median/p95)", _ms_pair(plain), "—"),
        ("unix connect + folder/peer checks (median/p95)", _ms_pair(checked), "—"),
        ("folder + peer checks alone (median/p95)", _ms_pair(checks), budget),
    ]


def _timed_connect(path: str, server: socket.socket, *, check: bool) -> tuple[float, float]:
    """Seconds of one connect (checks included when ``check``) and of the checks alone."""
    start = time.perf_counter()
    spent = 0.0
    if check:
        paths.check_socket_folder(path)
        spent = time.perf_counter() - start
    with socket.socket(socket.AF_UNIX) as client:
        client.connect(path)
        if check:
            before = time.perf_counter()
            paths.check_socket_peer(client, path)
            spent += time.perf_counter() - before
        total = time.perf_counter() - start
        server.accept()[0].close()
    return total, spent


def _ms_pair(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[int(len(ordered) * 0.95)]
    return f"{statistics.median(ordered) * 1000:.3f} / {p95 * 1000:.3f} ms"


def main() -> list[Row]:
    rows = permission_check_rows() + first_use_rows() + startup_rows()
    return rows + spill_redaction_rows() + socket_check_rows()


if __name__ == "__main__":
    for row in main():
        print(" | ".join(row))
