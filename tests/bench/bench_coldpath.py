"""The cold path, against the interpreter's own floor.

The floor is ``python -c "import asyncio, msgspec"`` in the same venv: what any asyncio +
msgspec process pays before doing anything. Each timed row is a median of whole-process runs
and its ratio to the median of floor runs taken alternately with them (which makes the rows
comparable across machines, and keeps the ratio honest on a busy one).

The LLM is the OpenAI-compatible provider talking HTTP to a standalone ``agentd mock-llm``
(started once, outside the timings, with this bench's scenarios) configured as
``[providers.local]`` with its ``http://127.0.0.1:PORT/v1`` base URL, the way a user runs
agentd against Ollama, vLLM or LiteLLM. The sandbox's user config runs tools in ``auto`` mode
(:meth:`tests.harness.IsolatedHome.user_config`), so no bash call is refused.

* ``agentd --stdio``: spawn → ``initialize`` answered;
* the cold one-shot: ``agentctl send`` of one prompt with one bash tool call, no daemon
  running, so the session runs in agentctl's own process (:mod:`agentctl.local`); the same
  with ``--daemon-process`` (a private ``agentd serve --stdio`` child, the old way) beside it;
  its peak RSS (``wait4``'s ``ru_maxrss``);
* cold twenty bash turns (in-process), and warm twenty turns: a plain ``send`` using a shared
  daemon started before the timings (it is warm: its modules loaded, its HTTP client open);
* what they are made of: a warm run of one reply without a tool call (the client process's
  own share), a warm one-shot, a bare spawn of the command each bash turn runs (``setpriv
  --pdeathsig KILL -- bash -c 'echo one'``, the floor of a turn), and what each bash turn past
  the first costs, cold and warm (a 20-turn run less a 1-turn one, over 19), against it;
* the one-shot's CPU time (user + system, with the processes it waited for) in-process and
  with ``--daemon-process``, as multiples of the floor's: steadier than wall time on a loaded
  machine;
* the cost of handing one event to the renderer: decoding its JSON (what a daemon's client does
  with each ``session/event``) against taking the session's object (in-process);
* ``codex exec`` on the same one-shot work, when ``@openai/codex`` is installed in
  ``tests/bench/.peers/`` (``npm install --prefix tests/bench/.peers @openai/codex``; the
  folder is git-ignored) and runs here; otherwise its row says why it was skipped.

Every ``agentctl`` row is timed the way ``$(agentctl send …)`` waits: until the process has
exited *and* both of its output pipes have closed (EOF), so a daemon or tool process left
holding them would be counted. Bytecode caches are written, as a user's install has them:
``PYTHONDONTWRITEBYTECODE`` (which these machines' shells export) is unset for every process,
and the table says what the calling shell had.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.agentctl.harness import Sandbox
from tests.bench.mock_server import LocalServer
from tests.bench.smoke import size
from tests.harness import scaled
from tests.scenarios import tool_call

RUNS = size(7)
FLOOR = [sys.executable, "-c", "import asyncio, msgspec"]
INITIALIZE = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}\n'
ONE_BASH = "run one command"
ONE_SHELL = "run one shell command"
"""The same scenario for Codex, whose command tool is ``exec_command``."""
TWENTY = "run twenty commands"
ONE_REPLY = "say one thing"
"""A reply without a tool call: a warm run of it is the client's own share of a run."""
PEERS = Path(__file__).with_name(".peers")
Row = tuple[str, str, str]


def _agentctl() -> list[str]:
    script = Path(sys.executable).with_name("agentctl")
    return [str(script)] if script.exists() else [sys.executable, "-m", "agentctl"]


def _scenarios(sandbox: Sandbox) -> Path:
    """The bench's scenario (one bash call, then a reply) before the built-in ones."""

    def one_call(name: str, args: dict[str, Any]) -> list[dict[str, Any]]:
        say = {"content": "Running it.", "tool_calls": [tool_call(name, args)]}
        return [{"response": say}, {"response": {"content": "Done: it printed one."}}]

    ours = one_call("bash", {"command": "echo one"})
    codex = one_call("exec_command", {"cmd": "echo one"})
    reply = [{"response": {"content": "One thing."}}]
    sandbox.use_scenarios(
        [
            {"name": "one-bash", "trigger": ONE_BASH, "steps": ours},
            {"name": "one-shell", "trigger": ONE_SHELL, "steps": codex},
            {"name": "one-reply", "trigger": ONE_REPLY, "steps": reply},
        ]
    )
    return Path(sandbox.env["AGENTD_MOCK_SCENARIOS"])


def _run(argv: list[str], sandbox: Sandbox, env: dict[str, str] | None = None) -> float:
    """Seconds one successful process takes, until it has exited and its stdout and stderr
    pipes are closed (``communicate`` reads both to EOF, whoever holds them)."""
    seconds, _ = _run_measured(argv, sandbox, env)
    return seconds


def _run_measured(
    argv: list[str], sandbox: Sandbox, env: dict[str, str] | None = None
) -> tuple[float, str]:
    """Seconds (as :func:`_run`) and the process's standard error."""
    started = time.perf_counter()
    process = subprocess.Popen(
        argv,
        cwd=sandbox.project,
        env=env or sandbox.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    _, err = process.communicate(timeout=scaled(120))  # reads both pipes to EOF, then reaps
    elapsed = time.perf_counter() - started
    if process.returncode != 0:
        raise RuntimeError(f"{argv} failed: {err.decode(errors='replace')[-2000:]}")
    return elapsed, err.decode(errors="replace")


PEAK_RSS = (
    "import resource, subprocess, sys\n"
    "code = subprocess.run(sys.argv[1:]).returncode\n"
    "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
    "print(f'peak-rss-kib {peak}', file=sys.stderr)\n"
    "sys.exit(code)\n"
)
"""Runs its arguments as a child and prints that child's peak RSS: the largest process it (or
its own children) reaped, in a process that has reaped nothing else."""


def _peak_rss_kib(argv: list[str], sandbox: Sandbox) -> int:
    """The peak RSS in KiB of one successful run of ``argv``, measured by a fresh parent of
    its own (this process's ``RUSAGE_CHILDREN`` holds every child the bench reaped so far,
    other modules' daemons included)."""
    _, err = _run_measured([sys.executable, "-c", PEAK_RSS, *argv], sandbox)
    return int(err.rsplit("peak-rss-kib ", 1)[1].split()[0])


def _cpu_seconds(argv: list[str], sandbox: Sandbox) -> float:
    """User + system CPU seconds of one successful run of ``argv`` and of every process it
    waited for (a private daemon, the bash calls): less swayed by a loaded machine than the
    wall time."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    _run(argv, sandbox)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def _cpu_row(sandbox: Sandbox, send: list[str]) -> Row:
    """The one-shot's CPU time in-process and with ``--daemon-process``, against the floor's."""
    floor = statistics.median(_cpu_seconds(FLOOR, sandbox) for _ in range(RUNS))
    ours = statistics.median(_cpu_seconds([*send, ONE_BASH], sandbox) for _ in range(RUNS))
    private = [*send, "--daemon-process", ONE_BASH]
    theirs = statistics.median(_cpu_seconds(private, sandbox) for _ in range(RUNS))
    ratios = f"{ours / floor:.2f}× / {theirs / floor:.2f}×"
    value = f"{ours * 1000:.0f} / {theirs * 1000:.0f} ms = {ratios}"
    return ("… its CPU (tree), in-process / --daemon-process", value, "of the floor's CPU")


def _paired(
    measure: Callable[[], float], floor: Callable[[], float], runs: int
) -> tuple[float, float]:
    """Medians of ``measure`` and of ``floor``, run alternately (after one warm-up each), so
    that a busy machine slows both alike and the ratio stays meaningful."""
    measure()
    floor()
    mine: list[float] = []
    base: list[float] = []
    for _ in range(runs):
        base.append(floor())
        mine.append(measure())
    return statistics.median(mine), statistics.median(base)


def _initialize(sandbox: Sandbox) -> float:
    """Seconds from spawning ``agentd --stdio`` to its ``initialize`` answer."""
    started = time.perf_counter()
    with subprocess.Popen(
        [sys.executable, "-m", "agentd", "--stdio"],
        env=sandbox.env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    ) as process:
        assert process.stdin is not None
        assert process.stdout is not None
        process.stdin.write(INITIALIZE)
        process.stdin.flush()
        answer = process.stdout.readline()
        elapsed = time.perf_counter() - started
        assert b'"result"' in answer, answer
        process.stdin.close()
        process.wait(scaled(30))
    return elapsed


def _bare_spawn_seconds(sandbox: Sandbox) -> float:
    """Median seconds of what each bash turn starts, alone: ``bash -c 'echo one'`` behind
    the same ``setpriv --pdeathsig`` prefix, started and reaped by ``subprocess``."""
    from agentd.tools.process.spawn import death_signal_prefix

    argv = [*(death_signal_prefix() or ()), "bash", "-c", "echo one"]
    return statistics.median(_run(argv, sandbox) for _ in range(size(31, 3)))


def _per_turn(name: str, twenty: float, one: float, spawn: float) -> Row:
    """What each bash turn past the first costs: a 20-turn run less a 1-turn one, over 19;
    against a bare spawn of the command (:func:`_bare_spawn_seconds`), its floor."""
    turn = (twenty - one) / 19
    value = f"{turn * 1000:.1f} ms = {turn / spawn:.2f}× a bare spawn"
    return (name, value, "≤ 3.5× a bare spawn")


def _event_handoff() -> Row:
    """Microseconds to hand one streamed text delta to the renderer: decoded from its JSON
    (a daemon's client) against the session's object taken as it is (in-process)."""
    from agentctl.events import EventStream, to_frame
    from agentd.protocol.events import MessageUpdate, SessionEvent, TextDelta

    item = SessionEvent(session_id="0" * 16, seq=7, event=MessageUpdate(delta=TextDelta(text="x")))
    data = json.dumps({"sessionId": "0" * 16, "seq": 7, "event": {"type": "message_update",
                       "delta": {"type": "text_delta", "text": "x"}}}).encode()  # fmt: skip
    count = size(20_000, 100)

    def per_event(feed: Callable[[EventStream[Any]], None]) -> float:
        stream: EventStream[Any] = EventStream(None, to_frame)
        started = time.perf_counter()
        for _ in range(count):
            feed(stream)
        stream.ready()
        return (time.perf_counter() - started) / count * 1e6

    decoded = per_event(lambda s: s.feed(item.session_id, data))
    handed = per_event(lambda s: s.feed_object(item.session_id, data, item))
    return (
        "event → renderer: JSON decoded / object (in-process)",
        f"{decoded:.2f} µs / {handed:.2f} µs",
        "object ≤ decode",
    )


def _codex(sandbox: Sandbox, server: LocalServer, ours: Callable[[], float]) -> Row:
    """``codex exec`` of the one-shot against the same scripted LLM, runs alternating with
    ``ours`` (the in-process one-shot); or why it was skipped."""
    name = "one-shot against codex exec 0.171 (same work)"
    budget = "ours ≤ 0.5× codex"
    codex = PEERS / "node_modules" / ".bin" / "codex"
    if not codex.exists():
        return (name, "skipped: @openai/codex not installed in tests/bench/.peers", budget)
    home = sandbox.root / "codex-home"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(
        'model = "mock-model"\nmodel_provider = "local"\n'
        f'[model_providers.local]\nname = "local"\nbase_url = "{server.base_url}"\n'
        'wire_api = "responses"\n'
    )
    env = dict(sandbox.env, CODEX_HOME=str(home), OPENAI_API_KEY="unused")
    # unconfined, as the sandbox's agentd runs bash here (auto mode, no sandbox): bwrap
    # cannot run in every container, and the comparison is of the same work
    argv = [str(codex), "exec", "--skip-git-repo-check", "--ephemeral"]
    argv += ["--dangerously-bypass-approvals-and-sandbox", ONE_SHELL]
    try:
        mine, theirs = _paired(ours, lambda: _run(argv, sandbox, env), RUNS)
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
        return (name, f"skipped: codex did not run here ({str(exc)[-120:]!r})", budget)
    value = f"{mine * 1000:.0f} / {theirs * 1000:.0f} ms = {mine / theirs:.2f}×"
    return (name, value, budget)


def main() -> list[Row]:
    """Rows of (measure, value, budget)."""
    shell_value = os.environ.get("PYTHONDONTWRITEBYTECODE")
    sandbox = Sandbox()
    sandbox.env.pop("PYTHONDONTWRITEBYTECODE", None)
    sandbox.env.pop("AGENTCTL_SHARED", None)  # a plain send as users have it
    server = LocalServer(sandbox.env, sandbox.root, _scenarios(sandbox))
    sandbox.user_config(server.provider_config)  # the tests' run mode kept: bash runs (auto)
    send = [*_agentctl(), "send", "--provider", "local"]
    table: list[Row] = [
        (
            "PYTHONDONTWRITEBYTECODE",
            f"shell: {shell_value!r}; bench: unset",
            "caches written",
        )
    ]
    floors: list[float] = []

    def row(name: str, measure: Callable[[], float], budget: float | None, runs: int) -> float:
        seconds, floor = _paired(measure, lambda: _run(FLOOR, sandbox), runs)
        floors.append(floor)
        value = f"{seconds * 1000:.0f} ms = {seconds / floor:.2f}× floor"
        table.append((name, value, "—" if budget is None else f"≤ {budget}× floor"))
        return seconds

    try:
        _run([*send, ONE_BASH], sandbox)  # writes the bytecode a user's install has
        rss = _peak_rss_kib([*send, ONE_BASH], sandbox)
        table.append(("cold one-shot: peak RSS (one process)", f"{rss / 1024:.1f} MiB", "≤ 40 MiB"))
        row("agentd --stdio: start → initialize answered", lambda: _initialize(sandbox), 1.3, RUNS)
        cold_one = row(
            "cold one-shot, 1 bash turn, HTTP (in-process)",
            lambda: _run([*send, ONE_BASH], sandbox),
            2,
            RUNS,
        )
        row(
            "… the same with --daemon-process",
            lambda: _run([*send, "--daemon-process", ONE_BASH], sandbox),
            None,
            RUNS,
        )
        table.append(_cpu_row(sandbox, send))
        cold_twenty = row(
            "cold 20 bash turns, HTTP (in-process)",
            lambda: _run([*send, TWENTY], sandbox),
            3.5,
            size(5),
        )
        table.append(_codex(sandbox, server, lambda: _run([*send, ONE_BASH], sandbox)))
        subprocess.run([*_agentctl(), "daemon", "start"], env=sandbox.env, check=True,
                       capture_output=True, timeout=scaled(60))  # fmt: skip
        warm_twenty = row(
            "warm 20 bash turns (shared daemon)", lambda: _run([*send, TWENTY], sandbox), 3, size(5)
        )
        row(
            "warm: one reply, no tool (the client's share)",
            lambda: _run([*send, ONE_REPLY], sandbox),
            1.6,
            RUNS,
        )
        warm_one = row(
            "warm one-shot, 1 bash turn", lambda: _run([*send, ONE_BASH], sandbox), None, RUNS
        )
        spawn = _bare_spawn_seconds(sandbox)
        table.append(("a bare spawn: setpriv … bash -c 'echo one'", f"{spawn * 1000:.2f} ms", "—"))
        table.append(_per_turn("each further bash turn, cold", cold_twenty, cold_one, spawn))
        table.append(_per_turn("each further bash turn, warm", warm_twenty, warm_one, spawn))
        table.append(_event_handoff())
    finally:
        server.close()
        sandbox.close()
    floor_row = (
        "floor: python -c 'import asyncio, msgspec'",
        f"{statistics.median(floors) * 1000:.0f} ms",
        "—",
    )
    return [floor_row, *table]


if __name__ == "__main__":
    for measure, value, budget in main():
        print(f"{measure:<55}  {value:>26}  {budget}")
