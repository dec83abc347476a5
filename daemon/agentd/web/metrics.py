"""``GET /metrics``: the daemon's ``daemon/metrics`` numbers in the Prometheus text
exposition format (0.0.4), for a scraper signed in like the page (docs/telemetry.md).

Names are ``agentd_…``; counters end in ``_total``; durations are in seconds. Label values
are the stop reasons and error types, escaped as the format requires.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentd.protocol.metrics import DaemonMetricsResult

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


_SINGLE: tuple[tuple[str, str, str, str], ...] = (
    ("agentd_uptime_seconds", "gauge", "Seconds since the daemon started.", "uptime_s"),
    ("agentd_connections", "gauge", "JSON-RPC connections open.", "connections"),
    ("agentd_sessions_loaded", "gauge", "Sessions loaded.", "sessions_loaded"),
    ("agentd_runs_active", "gauge", "Runs in progress (subagents' included).", "runs_active"),
    ("agentd_runs_started_total", "counter", "Runs started.", "runs_started"),
    ("agentd_queue_depth", "gauge", "Frames waiting in outbound queues.", "queue_depth"),
    ("agentd_queued_messages", "gauge", "Steering and follow-up texts waiting.", "queued_messages"),
    ("agentd_approvals_pending", "gauge", "Tool calls waiting for approval.", "approvals_pending"),
    ("agentd_approvals_total", "counter", "Approvals answered.", "approvals"),
    (
        "agentd_approval_wait_seconds_total", "counter",
        "Seconds tool calls waited for approvals.", "approval_wait_s",
    ),
    ("agentd_bytes_out_total", "counter", "Bytes written to JSON-RPC clients.", "bytes_out"),
    ("agentd_cost_usd_total", "counter", "Model calls' cost in US dollars.", "cost_usd"),
    ("agentd_tool_calls_total", "counter", "Tool calls ended.", "tool_calls"),
    ("agentd_tool_errors_total", "counter", "Tool calls ended in an error.", "tool_errors"),
    ("agentd_telemetry_export", "gauge", "1 while OpenTelemetry export is on.", "telemetry"),
)  # fmt: skip
"""The metrics of one sample: name, type, help, the ``DaemonMetricsResult`` field."""


def prometheus_text(m: DaemonMetricsResult) -> bytes:
    """``m`` as Prometheus text: a ``# HELP`` and ``# TYPE`` line per metric, then its
    samples."""
    families: list[tuple[str, str, str, Sequence[tuple[str, float]]]] = [
        (name, kind, text, [("", getattr(m, field))]) for name, kind, text, field in _SINGLE
    ]
    families += [
        (
            "agentd_runs_ended_total", "counter", "Runs ended, by stop reason.",
            [(_labels(stop_reason=k), v) for k, v in sorted(m.runs_ended.items())],
        ),
        (
            "agentd_loop_lag_seconds", "gauge", "Event loop lag at the last probe.",
            [("", m.loop_lag_ms / 1000)],
        ),
        (
            "agentd_loop_lag_max_seconds", "gauge", "Largest event loop lag of the last minute.",
            [("", m.loop_lag_max_ms / 1000)],
        ),
        (
            "agentd_tokens_total", "counter", "Model tokens, by type.",
            [(_labels(type="input"), m.input_tokens), (_labels(type="output"), m.output_tokens)],
        ),
        (
            "agentd_errors_total", "counter", "Errors, by type.",
            [(_labels(type=k), v) for k, v in sorted(m.errors.items())],
        ),
    ]  # fmt: skip
    lines: list[str] = []
    for name, kind, text, samples in families:
        lines += [f"# HELP {name} {text}", f"# TYPE {name} {kind}"]
        lines += [f"{name}{labels} {_number(value)}" for labels, value in samples]
    return ("\n".join(lines) + "\n").encode()


def _labels(**labels: str) -> str:
    inner = ",".join(f'{key}="{_escape(value)}"' for key, value in labels.items())
    return "{" + inner + "}"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))
