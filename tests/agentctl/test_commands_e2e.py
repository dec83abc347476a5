"""attach, sessions, status, daemon, cancel and rpc against a real shared daemon."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys

import pytest

from tests.agentctl.harness import Sandbox, event_types, json_lines, read_until
from tests.harness import scaled
from tests.scenarios import E2E_SCENARIOS

pytestmark = pytest.mark.e2e


def start_session(sandbox: Sandbox, prompt: str = "how are you") -> tuple[str, list[int]]:
    """One run on the shared daemon (auto-started); its session id and event seqs."""
    result = sandbox.run("send", "--json", "--provider", "mock", prompt)
    assert result.returncode == 0, result.stderr
    lines = json_lines(result.stdout)
    return lines[0]["sessionId"], [line["seq"] for line in lines if "seq" in line]


def test_attach_replays_since_seq_then_follows_until_the_run_ends(sandbox: Sandbox) -> None:
    """attach --since replays the buffered events after SEQ, then shows the next run live;
    on the idle session it says it waits for that run."""
    session_id, seqs = start_session(sandbox)
    since = seqs[len(seqs) // 2]
    attach = sandbox.popen_bytes("attach", session_id, "--since", str(since), "--json")
    assert attach.stdout is not None
    replayed = [json.loads(attach.stdout.readline()) for _ in range(seqs[-1] - since)]
    assert [line["seq"] for line in replayed] == list(range(since + 1, seqs[-1] + 1))
    read_until(attach, "stderr", "is idle; waiting for its next run (Ctrl-C to leave)")

    again = sandbox.run("send", "--json", "--session", session_id, "how are you")
    assert again.returncode == 0, again.stderr
    live = json_lines(read_until(attach, "stdout", '"agent_end"').rsplit("\n", 1)[0] + "\n")
    assert live[0]["seq"] == seqs[-1] + 1
    attach.send_signal(signal.SIGINT)
    attach.communicate(timeout=scaled(20))
    assert attach.returncode == 130


def test_attach_until_end_on_an_idle_session_replays_and_exits(sandbox: Sandbox) -> None:
    """--since 0 --until-end on a finished session: the last run, a note, its exit code."""
    session_id, seqs = start_session(sandbox)
    result = sandbox.run("attach", session_id, "--since", "0", "--until-end", "--json", timeout=20)
    assert result.returncode == 0, result.stderr
    assert [line["seq"] for line in json_lines(result.stdout)] == seqs
    assert f"session {session_id} is idle: its last run ended as shown" in result.stderr


def test_attach_rendered_shows_prompts_and_replies(sandbox: Sandbox) -> None:
    """Without --json attach renders the run, including the prompt someone else sent; on the
    idle session it first says that it waits."""
    session_id, _ = start_session(sandbox)
    attach = sandbox.popen_bytes("attach", session_id)
    read_until(attach, "stderr", "is idle; waiting for its next run")
    sandbox.run("send", "--session", session_id, "how are you")
    out = read_until(attach, "stdout", "── done · 1 turn")
    attach.send_signal(signal.SIGINT)
    attach.communicate(timeout=scaled(20))
    assert "› how are you" in out


def test_attach_until_end_on_a_run_that_ended_exits_at_once(sandbox: Sandbox) -> None:
    """--until-end on an idle session whose last run ended: exit at once with its code."""
    session_id, _ = start_session(sandbox)
    result = sandbox.run("attach", session_id, "--until-end", timeout=20)
    assert result.returncode == 0, result.stderr
    assert f"session {session_id} is idle: its last run ended (end_turn)" in result.stderr


def test_attach_mid_run_starts_from_the_start_of_the_run(sandbox: Sandbox) -> None:
    """Attached while a run is under way, attach shows that run from its agent_start (the
    prompt, the reply so far, the running call), not from the middle."""
    sandbox.use_scenarios(E2E_SCENARIOS)
    send = sandbox.popen_bytes("send", "--json", "--provider", "mock", "sleep in bash")
    try:
        # One read: a loaded machine can hand over the first line and the call's start in one
        # chunk, which a first read up to "\n" would swallow.
        started = read_until(send, "stdout", '"tool_execution_start"')
        session_id = json.loads(started.splitlines()[0])["sessionId"]
        attach = sandbox.popen_bytes("attach", session_id, "--json", "--until-end")
        seen = json_lines(read_until(attach, "stdout", '"tool_execution_start"'))
        events = [line["event"] for line in seen]
        assert [event["type"] for event in events][:2] == ["agent_start", "turn_start"]
        assert any(e["type"] == "message_end" and e["message"]["role"] == "user" for e in events)
        assert sandbox.run("cancel", session_id).returncode == 0
        attach.communicate(timeout=scaled(20))
        assert attach.returncode == 7  # the run was cancelled from elsewhere
    finally:
        send.kill()
        send.communicate()


def test_attach_to_an_unknown_session_fails(sandbox: Sandbox) -> None:
    """An unknown id is a usage error (exit 2), not a hang."""
    start_session(sandbox)
    result = sandbox.run("attach", "nope")
    assert result.returncode == 2
    assert "nope" in result.stderr


def test_sessions_show_export_and_rm(sandbox: Sandbox) -> None:
    """The stored session can be listed, shown, exported (md, html, -o) and deleted."""
    session_id, _ = start_session(sandbox, "hello world")
    listing = sandbox.run("sessions")
    assert session_id in listing.stdout
    shown = sandbox.run("sessions", "show", session_id)
    assert "› hello world" in shown.stdout
    assert "● write  hello.py" in shown.stdout
    markdown = sandbox.run("sessions", "export", session_id, "--format", "md")
    assert markdown.returncode == 0, markdown.stderr
    assert "hello world" in markdown.stdout
    target = sandbox.root / "out.html"
    html = sandbox.run("sessions", "export", session_id, "--format", "html", "-o", str(target))
    assert html.returncode == 0, html.stderr
    assert "<html" in target.read_text().lower()
    removed = sandbox.run("sessions", "rm", session_id)
    assert removed.returncode == 0, removed.stderr
    assert session_id not in sandbox.run("sessions", "list").stdout
    assert sandbox.run("sessions", "show", session_id).returncode == 2


def test_status_and_daemon_lifecycle(sandbox: Sandbox) -> None:
    """daemon start/status/stop/logs manage the shared daemon; status fails when none runs."""
    assert sandbox.run("status").returncode == 1
    started = sandbox.run("daemon", "start")
    assert started.returncode == 0, started.stderr
    assert "started" in started.stdout
    assert "already running" in sandbox.run("daemon", "start").stdout
    status = sandbox.run("status")
    assert status.returncode == 0
    assert status.stdout.startswith("agentd ")
    assert sandbox.run("daemon", "logs", "-n", "5").returncode == 0
    stopped = sandbox.run("daemon", "stop")
    assert stopped.returncode == 0, stopped.stderr
    assert "stopped" in stopped.stdout
    assert sandbox.run("status").returncode == 1
    assert "not running" in sandbox.run("daemon", "stop").stdout


def test_cancel_stops_a_run_from_another_client(sandbox: Sandbox) -> None:
    """agentctl cancel ID stops a run that another agentctl drives; that one exits 7
    (cancelled elsewhere), not 130 (Ctrl-C)."""
    session_id, _ = start_session(sandbox)
    runner = sandbox.popen("send", "--json", "--session", session_id, "be slow")
    assert runner.stdout is not None
    for raw in runner.stdout:
        if json.loads(raw).get("event", {}).get("type") == "message_update":
            break
    cancelled = sandbox.run("cancel", session_id)
    assert cancelled.returncode == 0, cancelled.stderr
    assert cancelled.stdout.startswith("cancelled")
    rest, errors = runner.communicate(timeout=scaled(20))
    assert runner.returncode == 7, errors
    assert json_lines(rest)[-1]["stopReason"] == "cancelled"


def test_rpc_raw_calls(sandbox: Sandbox) -> None:
    """rpc prints the result as JSON, errors as JSON on stderr, events with --events."""
    status = sandbox.run("rpc", "daemon/status")
    assert status.returncode == 0, status.stderr
    assert "pid" in json.loads(status.stdout)
    created = sandbox.run(
        "rpc", "session/new", json.dumps({"cwd": str(sandbox.project), "provider": "mock"})
    )
    session_id = json.loads(created.stdout)["sessionId"]
    prompt = sandbox.run(
        "rpc", "--events", "session/prompt", json.dumps({"sessionId": session_id, "text": "hi"})
    )
    lines = json_lines(prompt.stdout)
    assert event_types(lines[:-1])[-1] == "agent_end"
    assert lines[-1]["stopReason"] == "end_turn"
    bad = sandbox.run("rpc", "session/new", '{"cwd": 42}')
    assert bad.returncode == 2
    assert json.loads(bad.stderr)["code"] == -32602
    assert sandbox.run("rpc", "no/such/method").returncode == 2
    assert sandbox.run("rpc", "daemon/status", "{not json").returncode == 2


def test_client_library_imports_stay_light() -> None:
    """Importing the client library in a fresh interpreter loads no httpx, pygls or structlog."""
    code = (
        "import sys, agentctl, agentctl.client, agentctl.commands.send\n"
        "heavy = ('httpx', 'pygls', 'lsprotocol', 'structlog', 'rich', 'markdown_it')\n"
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_attach_warns_when_the_replay_buffer_no_longer_reaches_back(sandbox: Sandbox) -> None:
    """After thousands of events the oldest are gone: attach says so, then follows."""
    session_id, _ = start_session(sandbox, "long reply")
    for _ in range(4):
        sandbox.run("send", "--session", session_id, "--quiet", "long reply")
    attach = sandbox.popen("attach", session_id, "--since", "1", "--json", "--until-end")
    assert attach.stderr is not None
    assert "no longer buffered" in attach.stderr.readline()
    sandbox.run("send", "--session", session_id, "how are you")
    out, _ = attach.communicate(timeout=scaled(20))
    attach.stderr.close()
    assert attach.returncode == 0
    lines = json_lines(out)
    assert lines[0]["seq"] > 2
    assert event_types(lines)[-1] == "agent_end"


def test_daemon_logs_follow_prints_new_lines_until_ctrl_c(sandbox: Sandbox) -> None:
    """daemon logs -f prints the tail, then each line the daemon writes; Ctrl-C ends it (0)."""
    assert sandbox.run("daemon", "start").returncode == 0
    follow = sandbox.popen_bytes("daemon", "logs", "-f", "-n", "1", "--json")
    try:
        assert "event" in json.loads(read_until(follow, "stdout", "\n"))
        session_id, _ = start_session(sandbox)
        read_until(follow, "stdout", f'"session_id": "{session_id}"')
        follow.send_signal(signal.SIGINT)
        assert follow.wait(timeout=scaled(10)) == 0
    finally:
        follow.kill()
        follow.communicate()


def test_daemon_logs_are_pretty_unless_json(sandbox: Sandbox) -> None:
    """One line per record, ``HH:MM:SS level event key=value``; --json keeps the raw lines."""
    session_id, _ = start_session(sandbox)
    pretty = sandbox.run("daemon", "logs", "-n", "20").stdout
    assert re.search(
        rf"^\d\d:\d\d:\d\d info +session created .*session_id={session_id}", pretty, re.M
    )
    assert "{" not in pretty
    raw = sandbox.run("daemon", "logs", "-n", "5", "--json").stdout.splitlines()
    assert all(json.loads(line)["event"] for line in raw)


def test_rpc_without_a_method_lists_the_methods(sandbox: Sandbox) -> None:
    result = sandbox.run("rpc")
    assert result.returncode == 0
    assert re.search(r"^session/prompt +Run the agent", result.stdout, re.M)
    assert "session/requestPermission" not in result.stdout  # the daemon calls that one
