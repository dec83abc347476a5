"""OpenTelemetry from a real daemon (``agentd serve --socket --http``) to a real OTLP/HTTP
receiver in the test, decoding the real protobuf: a mock-LLM run with one bash call gives a
run, turn, model-call and tool-call span with the documented attributes, linked to the
``traceparent`` it was given; the metrics arrive; no prompt or tool text unless
``capture_content`` is on. Also ``daemon/metrics``, ``GET /metrics`` with and without the
page key, and the error when telemetry is configured but the SDK is missing."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from tests.harness import Home, scaled, wait_until
from tests.scenarios import tool_call
from tests.telemetry.receiver import Receiver, attributes
from tests.web.conftest import WebDaemon

PROMPT_SECRET = "zebra-quartz-prompt"
OUTPUT_SECRET = "walrus-output-text"
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_SPAN = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE_ID}-{PARENT_SPAN}-01"
SCENARIO = {
    "name": "telemetry-tool",
    "trigger": "telemetry check",
    "steps": [
        {
            "response": {
                "content": "Running it.",
                "tool_calls": [tool_call("bash", {"command": f"echo {OUTPUT_SECRET}"})],
            }
        },
        {"response": {"content": "Done."}},
    ],
}
FAST_EXPORT = {"OTEL_BSP_SCHEDULE_DELAY": "100", "OTEL_METRIC_EXPORT_INTERVAL": "300"}


@contextmanager
def exporting_daemon(receiver: Receiver, extra: str = "") -> Iterator[WebDaemon]:
    """A web daemon whose user config sends telemetry to ``receiver`` (plus ``extra`` keys of
    its ``[telemetry]`` table), its batches exported quickly."""
    home = Home()
    home.use_scenarios([SCENARIO])
    home.user_config(
        f'[telemetry]\notlp_endpoint = "{receiver.endpoint}"\nmetrics_interval = 0.3\n'
        f'service_name = "agentd-under-test"\n{extra}'
    )
    home.env.update(FAST_EXPORT)
    daemon = WebDaemon(home)
    try:
        yield daemon
    finally:
        daemon.close()
        home.cleanup()


def _prompt(web: WebDaemon) -> tuple[str, dict[str, Any]]:
    session_id = web.new_session()
    text = f"telemetry check: {PROMPT_SECRET}"
    result = web.rpc(
        "session/prompt", {"sessionId": session_id, "text": text, "traceparent": TRACEPARENT}
    )
    return session_id, result


def _spans_by_name(receiver: Receiver) -> dict[str, Any]:
    """The spans of the run once its run span arrived (its children are exported first),
    by name; the two model calls as ``chat mock-model`` (the first, which asked for the
    tool) and ``chat mock-model 2``."""
    wait_until(
        lambda: any(s.name == "invoke_agent agentd" for s in receiver.spans()),
        scaled(20),
        "the run span",
    )
    named: dict[str, Any] = {}
    for span in sorted(receiver.spans(), key=lambda span: span.start_time_unix_nano):
        name = span.name
        while name in named:
            name = f"{span.name} {2 if name == span.name else int(name.rsplit(' ', 1)[1]) + 1}"
        named[name] = span
    return named


def test_a_run_exports_spans_and_metrics_without_content() -> None:
    receiver = Receiver()
    try:
        with exporting_daemon(receiver) as web:
            session_id, result = _prompt(web)
            assert result["stopReason"] == "end_turn"
            spans = _spans_by_name(receiver)
            metrics = web.rpc("daemon/metrics")
            _check_daemon_metrics(metrics)
            _check_scrape(web)
        # the daemon stopped: its last metrics were exported at shutdown
        points = wait_until(
            lambda: (found := receiver.metric_points()) and "agentd.runs" in found and found,
            scaled(20),
            "the metrics",
        )
    finally:
        receiver.close()
    _check_spans(spans, session_id)
    _check_metrics(points)
    assert receiver.resource_attributes()["service.name"] == "agentd-under-test"
    everything = b"".join(receiver.raw)
    assert PROMPT_SECRET.encode() not in everything
    assert OUTPUT_SECRET.encode() not in everything
    assert b"Running it." not in everything


def _check_spans(spans: dict[str, Any], session_id: str) -> None:
    run, turn = spans["invoke_agent agentd"], spans["turn 1"]
    model, tool = spans["chat mock-model"], spans["execute_tool bash"]
    assert run.trace_id.hex() == TRACE_ID
    assert run.parent_span_id.hex() == PARENT_SPAN
    assert {s.trace_id.hex() for s in spans.values()} == {TRACE_ID}
    assert turn.parent_span_id == run.span_id
    assert model.parent_span_id == turn.span_id
    assert tool.parent_span_id == turn.span_id
    assert spans["turn 2"].parent_span_id == run.span_id
    assert spans["chat mock-model 2"].parent_span_id == spans["turn 2"].span_id
    assert len(spans) == 6  # run, two turns, two model calls, one tool call
    run_attrs = attributes(run.attributes)
    assert run_attrs["gen_ai.operation.name"] == "invoke_agent"
    assert run_attrs["gen_ai.conversation.id"] == session_id
    assert run_attrs["gen_ai.provider.name"] == "mock"
    assert run_attrs["gen_ai.request.model"] == "mock-model"
    assert run_attrs["agentd.stop_reason"] == "end_turn"
    assert run_attrs["agentd.turns"] == 2
    assert run_attrs["gen_ai.usage.input_tokens"] > 0
    assert run_attrs["gen_ai.usage.output_tokens"] > 0
    assert "agentd.usage.cost" in run_attrs
    assert "gen_ai.input.messages" not in run_attrs
    model_attrs = attributes(model.attributes)
    assert model_attrs["gen_ai.operation.name"] == "chat"
    assert model_attrs["gen_ai.request.model"] == "mock-model"
    assert model_attrs["gen_ai.response.finish_reasons"] == ["tool_use"]
    assert model_attrs["gen_ai.usage.input_tokens"] > 0
    assert "gen_ai.output.messages" not in model_attrs
    tool_attrs = attributes(tool.attributes)
    assert tool_attrs["gen_ai.operation.name"] == "execute_tool"
    assert tool_attrs["gen_ai.tool.name"] == "bash"
    assert tool_attrs["gen_ai.tool.call.id"]
    assert "error.type" not in tool_attrs
    assert "gen_ai.tool.call.arguments" not in tool_attrs
    assert "gen_ai.tool.call.result" not in tool_attrs


def _check_metrics(points: dict[str, list[Any]]) -> None:
    runs = points["agentd.runs"]
    assert sum(p.as_int for p in runs) >= 1
    assert attributes(runs[-1].attributes) == {"agentd.stop_reason": "end_turn"}
    tools = points["agentd.tool.duration"]
    assert {attributes(p.attributes)["gen_ai.tool.name"] for p in tools} == {"bash"}
    assert max(p.count for p in tools) == 1
    tokens = points["gen_ai.client.token.usage"]
    kinds = {attributes(p.attributes)["gen_ai.token.type"] for p in tokens}
    assert kinds == {"input", "output"}
    assert max(p.count for p in points["gen_ai.client.operation.duration"]) == 2
    assert "agentd.run.duration" in points
    assert points["agentd.runs.active"][-1].as_int == 0  # the last export: the run had ended
    assert "agentd.approvals.pending" in points


def _check_daemon_metrics(metrics: dict[str, Any]) -> None:
    assert metrics["sessionsLoaded"] == 1
    assert metrics["runsStarted"] == 1
    assert metrics["runsActive"] == 0
    assert metrics["runsEnded"] == {"end_turn": 1}
    assert metrics["toolCalls"] == 1
    assert metrics["toolErrors"] == 0
    assert metrics["inputTokens"] > 0
    assert metrics["outputTokens"] > 0
    assert metrics["bytesOut"] > 0
    assert metrics["queueDepth"] == 0
    assert metrics["errors"] == {}
    assert metrics["telemetry"] is True
    assert metrics["loopLagMs"] >= 0


def _check_scrape(web: WebDaemon) -> None:
    """``/metrics`` needs the page key like the API: without it 401, with it the text."""
    with httpx.Client(base_url=web.base, timeout=scaled(30)) as anonymous:
        assert anonymous.get("/metrics").status_code == 401
    with web.signed_in() as client:
        cookie_only = httpx.Client(base_url=web.base, cookies=client.cookies, timeout=30)
        with cookie_only:
            assert cookie_only.get("/metrics").status_code == 401
        answer = client.get("/metrics")
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/plain; version=0.0.4")
    samples = dict(
        line.rsplit(" ", 1) for line in answer.text.splitlines() if not line.startswith("#")
    )
    assert samples["agentd_sessions_loaded"] == "1"
    assert samples["agentd_runs_started_total"] == "1"
    assert samples['agentd_runs_ended_total{stop_reason="end_turn"}'] == "1"
    assert samples["agentd_tool_calls_total"] == "1"
    assert samples["agentd_telemetry_export"] == "1"
    assert int(samples["agentd_bytes_out_total"]) > 0
    assert "# TYPE agentd_runs_started_total counter" in answer.text


def test_capture_content_puts_the_prompt_and_tool_text_in_spans() -> None:
    receiver = Receiver()
    try:
        with exporting_daemon(receiver, "capture_content = true\n") as web:
            _prompt(web)
            spans = _spans_by_name(receiver)
    finally:
        receiver.close()
    run = attributes(spans["invoke_agent agentd"].attributes)
    [prompt] = json.loads(run["gen_ai.input.messages"])
    assert prompt["role"] == "user"
    assert PROMPT_SECRET in prompt["parts"][0]["content"]
    model = attributes(spans["chat mock-model"].attributes)
    [reply] = json.loads(model["gen_ai.output.messages"])
    assert reply["parts"][0] == {"type": "text", "content": "Running it."}
    assert reply["parts"][1]["type"] == "tool_call"
    tool = attributes(spans["execute_tool bash"].attributes)
    assert OUTPUT_SECRET in json.loads(tool["gen_ai.tool.call.arguments"])["command"]
    assert OUTPUT_SECRET in tool["gen_ai.tool.call.result"]


def test_a_configured_endpoint_without_the_sdk_is_a_clear_error(tmp_path: Path) -> None:
    """The extra is missing (an ``opentelemetry`` package without the SDK first on the path):
    ``session/new`` fails naming the setting and what to install; the daemon keeps serving."""
    shadow = tmp_path / "shadow" / "opentelemetry"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("")
    home = Home()
    home.user_config('[telemetry]\notlp_endpoint = "http://127.0.0.1:9"\n')
    home.env["PYTHONPATH"] = os.pathsep.join(
        [str(shadow.parent), *filter(None, [home.env.get("PYTHONPATH")])]
    )
    web = WebDaemon(home)
    try:
        error = _refused(web)
        assert "[telemetry] otlp_endpoint" in error["message"]
        assert "pip install 'agentd[telemetry]'" in error["message"]
        assert web.rpc("daemon/status")["pid"] > 0
    finally:
        web.close()
        home.cleanup()


def _refused(web: WebDaemon) -> dict[str, Any]:
    try:
        web.new_session()
    except RuntimeError as exc:
        return dict(exc.args[0])
    raise AssertionError("session/new succeeded without the SDK")
