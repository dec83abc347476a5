"""``GET /metrics``: the daemon's ``daemon/metrics`` numbers in the Prometheus text
exposition format (0.0.4), for a scraper signed in like the page (docs/telemetry.md).

Names are ``agentd_…``; counters end in ``_total``; durations are in seconds. Label values
are the stop reasons and error types, escaped as the format requires.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentd.protocol.metrics import DaemonMetricsResult

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def prometheus_text(m: DaemonMetricsResult) -> bytes:
    """``m`` as Prometheus text: a ``# HELP`` and ``# TYPE`` line per metric, then its
    samples."""
    lines: list[str] = []

    def metric(name: str, kind: str, text: str, samples: Sequence[tuple[str, float]]) -> None:
        lines.append(f"# HELP {name} {text}")
        lines.append(f"# TYPE {name} {kind}")
        lines.extend(f"{name}{labels} {_number(value)}" for labels, value in samples)

    def one(name: str, kind: str, text: str, value: float) -> None:
        metric(name, kind, text, [("", value)])

    one("agentd_uptime_seconds", "gauge", "Seconds since the daemon started.", m.uptime_s)
    one("agentd_connections", "gauge", "JSON-RPC connections open.", m.connections)
    one("agentd_sessions_loaded", "gauge", "Sessions loaded.", m.sessions_loaded)
    one("agentd_runs_active", "gauge", "Runs in progress (subagents' included).", m.runs_active)
    one("agentd_runs_started_total", "counter", "Runs started.", m.runs_started)
    ended = [(_labels(stop_reason=k), v) for k, v in sorted(m.runs_ended.items())]
    metric("agentd_runs_ended_total", "counter", "Runs ended, by stop reason.", ended)
    one("agentd_queue_depth", "gauge", "Frames waiting in outbound queues.", m.queue_depth)
    one(
        "agentd_queued_messages",
        "gauge",
        "Steering and follow-up texts waiting.",
        m.queued_messages,
    )
    one(
        "agentd_approvals_pending", "gauge", "Tool calls waiting for approval.", m.approvals_pending
    )
    one("agentd_approvals_total", "counter", "Approvals answered.", m.approvals)
    one(
        "agentd_approval_wait_seconds_total", "counter",
        "Seconds tool calls waited for approvals.", m.approval_wait_s,
    )  # fmt: skip
    one(
        "agentd_loop_lag_seconds",
        "gauge",
        "Event loop lag at the last probe.",
        m.loop_lag_ms / 1000,
    )
    one(
        "agentd_loop_lag_max_seconds", "gauge", "Largest event loop lag of the last minute.",
        m.loop_lag_max_ms / 1000,
    )  # fmt: skip
    one("agentd_bytes_out_total", "counter", "Bytes written to JSON-RPC clients.", m.bytes_out)
    tokens = [(_labels(type="input"), m.input_tokens), (_labels(type="output"), m.output_tokens)]
    metric("agentd_tokens_total", "counter", "Model tokens, by type.", tokens)
    one("agentd_cost_usd_total", "counter", "Model calls' cost in US dollars.", m.cost_usd)
    one("agentd_tool_calls_total", "counter", "Tool calls ended.", m.tool_calls)
    one("agentd_tool_errors_total", "counter", "Tool calls ended in an error.", m.tool_errors)
    errors = [(_labels(type=k), v) for k, v in sorted(m.errors.items())]
    metric("agentd_errors_total", "counter", "Errors, by type.", errors)
    one("agentd_telemetry_export", "gauge", "1 while OpenTelemetry export is on.", m.telemetry)
    return ("\n".join(lines) + "\n").encode()


def _labels(**labels: str) -> str:
    inner = ",".join(f'{key}="{_escape(value)}"' for key, value in labels.items())
    return "{" + inner + "}"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))
