"""Every documented exit code of ``agentctl send``, produced by real runs."""

from __future__ import annotations

import json
import os
import signal
import time

import pytest

from tests.agentctl.harness import Sandbox, event_types, json_lines, read_until
from tests.harness import scaled, wait_until

pytestmark = pytest.mark.e2e

MOCK = ("--stdio", "--json", "--provider", "mock")


def result_line(stdout: str) -> dict[str, object]:
    final = json_lines(stdout)[-1]
    assert final["type"] == "result"
    return final


def test_max_turns_exits_3(sandbox: Sandbox) -> None:
    """A looping model stopped by --max-turns."""
    result = sandbox.run("send", *MOCK, "--max-turns", "2", "loop forever")
    assert result.returncode == 3, result.stderr
    final = result_line(result.stdout)
    assert final["stopReason"] == "max_turns"
    assert final["turns"] == 2


def test_timeout_exits_4(sandbox: Sandbox) -> None:
    """--timeout cancels a slow run and reports it: the reply was cut off, not waited for."""
    result = sandbox.run("send", *MOCK, "--timeout", "1", "be slow")
    assert result.returncode == 4, result.stderr
    events = [line["event"] for line in json_lines(result.stdout) if "event" in line]
    deltas = [event["delta"] for event in events if event["type"] == "message_update"]
    streamed = "".join(delta["text"] for delta in deltas if delta["type"] == "text_delta")
    # the reply streams for seconds after the 1 s it was given: its end never came
    assert "before it ends." not in streamed
    final = result_line(result.stdout)
    assert final["stopReason"] == "timeout"  # one stop reason per exit code
    assert final["timedOut"] is True
    assert "agent_end" in event_types(json_lines(result.stdout))


def test_refused_permission_exits_5(sandbox: Sandbox) -> None:
    """--permission ask without a terminal: every request is refused, nothing is written."""
    result = sandbox.run("send", *MOCK, "--permission", "ask", "hello world")
    assert result.returncode == 5, result.stderr
    final = result_line(result.stdout)
    assert final["stopReason"] == "refused"  # one stop reason per exit code
    assert final["permissionsRefused"] >= 1
    assert not (sandbox.project / "hello.py").exists()


def test_provider_error_exits_1(sandbox: Sandbox) -> None:
    """A provider that refuses the request ends the run with an error."""
    sandbox.use_test_scenarios()
    result = sandbox.run("send", *MOCK, "bad request")
    assert result.returncode == 1, result.stderr
    final = result_line(result.stdout)
    assert final["stopReason"] == "error"
    assert final["error"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("send", "--bogus", "hi"), "unrecognized arguments"),
        (("send", "--stdio", "--session", "no-such-session", "hi"), "no-such-session"),
        (("send", "--stdio", "--provider", "no-such-provider", "hi"), "no-such-provider"),
        (("send", "--stdio", "--session", "a", "--continue", "hi"), "cannot be combined"),
        (("send", "--stdio", "--system-prompt", "@/nonexistent", "hi"), "/nonexistent"),
    ],
)
def test_usage_and_configuration_errors_exit_2(
    sandbox: Sandbox, args: tuple[str, ...], message: str
) -> None:
    """Bad flags, unknown sessions and unknown providers: exit 2 and a one-line reason."""
    result = sandbox.run(*args)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_json_mode_reports_failures_as_a_result_line(sandbox: Sandbox) -> None:
    """Even when no run starts, --json ends with a result line carrying the exit code."""
    result = sandbox.run("send", *MOCK, "--session", "missing", "hi")
    assert result.returncode == 2
    final = result_line(result.stdout)
    assert final["exitCode"] == 2
    assert final["sessionId"] is None


def test_ctrl_c_cancels_the_run_and_exits_130(sandbox: Sandbox) -> None:
    """SIGINT mid-run: session/cancel, the run's end is still reported, exit 130."""
    process = sandbox.popen("send", *MOCK, "be slow")
    assert process.stdout is not None
    lines: list[dict[str, object]] = []
    for raw in process.stdout:
        lines.append(json.loads(raw))
        if lines[-1].get("event", {}).get("type") == "message_update":  # type: ignore[union-attr]
            break
    process.send_signal(signal.SIGINT)
    rest, errors = process.communicate(timeout=scaled(20))
    assert process.returncode == 130, errors
    lines.extend(json_lines(rest))
    assert "agent_end" in event_types(lines)
    final = lines[-1]
    assert final["type"] == "result"
    assert final["stopReason"] == "interrupted"  # one stop reason per exit code
    assert final["interrupted"] is True


def test_second_ctrl_c_exits_at_once(sandbox: Sandbox) -> None:
    """When the cancel cannot complete (the daemon is frozen), a second SIGINT exits 130 now."""
    process = sandbox.popen_bytes("send", "--json", "--provider", "mock", "be slow")
    daemon = None
    try:
        read_until(process, "stdout", '"text_delta"')
        daemon = sandbox.daemon_pid()
        assert daemon is not None
        os.kill(daemon, signal.SIGSTOP)
        process.send_signal(signal.SIGINT)
        time.sleep(0.5)  # a period the first Ctrl-C must not end it in: the behaviour under test
        assert process.poll() is None  # still waiting for the frozen daemon to stop the run
        started = time.monotonic()
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=scaled(5)) == 130
        assert time.monotonic() - started < scaled(2)
    finally:
        if daemon is not None:
            os.kill(daemon, signal.SIGCONT)
        process.kill()
        process.communicate()


def test_daemon_dying_mid_run_exits_1(sandbox: Sandbox) -> None:
    """If the shared daemon is killed during a run, send reports the lost connection."""
    process = sandbox.popen("send", "--json", "--provider", "mock", "be slow")
    assert process.stdout is not None
    for raw in process.stdout:
        if json.loads(raw).get("event", {}).get("type") == "message_update":
            break
    pid = sandbox.daemon_pid()
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    rest, errors = process.communicate(timeout=scaled(20))
    assert process.returncode == 1, errors
    final = json_lines(rest)[-1]
    assert final["stopReason"] == "error"
    assert "lost the connection" in final["error"]
    assert "Traceback" not in errors


def hang_up_after_first_line(sandbox: Sandbox) -> tuple[str, int, str]:
    """`send --json "be slow" | head -1`: the session id, agentctl's exit code and stderr."""
    process = sandbox.popen("send", "--json", "--provider", "mock", "be slow")
    assert process.stdout is not None
    assert process.stderr is not None
    session_id = json.loads(process.stdout.readline())["sessionId"]
    process.stdout.close()
    code = process.wait(timeout=scaled(20))
    errors = process.stderr.read()
    process.stderr.close()
    return session_id, code, errors


def test_closed_stdout_exits_141_quietly(sandbox: Sandbox) -> None:
    """A reader that hangs up makes agentctl leave with 141 and no traceback."""
    _, code, errors = hang_up_after_first_line(sandbox)
    assert code == 141
    assert "Traceback" not in errors


def test_run_goes_on_after_the_client_hangs_up(sandbox: Sandbox) -> None:
    """agentctl does not cancel the run when its output goes away; the daemon finishes it."""
    session_id, _, _ = hang_up_after_first_line(sandbox)
    params = json.dumps({"sessionId": session_id})

    def finished() -> bool:
        state = json.loads(sandbox.run("rpc", "session/state", params).stdout)
        return bool(state["status"] != "running")

    wait_until(finished, 20, "the run to finish", 0.2)
    shown = sandbox.run("sessions", "show", session_id)
    assert "plenty of time to cancel it" in shown.stdout
