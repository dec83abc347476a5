"""``daemon/metrics``: the daemon's load and counts, for people who scrape (the web server's
``GET /metrics`` serves the same numbers in the Prometheus text format)."""

from __future__ import annotations

import msgspec

from agentd.protocol.base import Result


class DaemonMetricsResult(Result):
    """The daemon now and since it started. Counts cover every run, subagents' included.

    ``queue_depth``: frames waiting in the JSON-RPC connections' outbound queues;
    ``queued_messages``: steering and follow-up texts waiting for their run;
    ``loop_lag_ms`` / ``loop_lag_max_ms``: how late the event loop ran at the last probe and
    at worst over the last minute (probed from the first metrics request on: 0 before);
    ``bytes_out``: bytes written to JSON-RPC clients; ``errors``: by type (the ``error``
    events' codes: ``provider_error``, ``store_error``, ``internal_error``; and
    ``rpc_internal_error``, requests answered -32603); ``telemetry``: OpenTelemetry export is
    on."""

    uptime_s: float
    connections: int
    sessions_loaded: int
    runs_active: int
    runs_started: int
    runs_ended: dict[str, int] = msgspec.field(default_factory=dict)
    queue_depth: int = 0
    queued_messages: int = 0
    approvals_pending: int = 0
    approvals: int = 0
    approval_wait_s: float = 0.0
    loop_lag_ms: float = 0.0
    loop_lag_max_ms: float = 0.0
    bytes_out: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    tool_calls: int = 0
    tool_errors: int = 0
    errors: dict[str, int] = msgspec.field(default_factory=dict)
    telemetry: bool = False
