"""When telemetry is on and where it goes: the ``[telemetry]`` table over the standard
``OTEL_*`` variables (:func:`agentd.telemetry.settings.telemetry_settings`), and the user-only
rule (a project's ``[telemetry]`` is ignored); the Prometheus text's escaping; a driver's
``traceparent`` values (:mod:`agentd.api.tracecontext`)."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from agentd.api.tracecontext import new_trace_id, trace_id_of, traceparent
from agentd.config.load import load_config, user_settings
from agentd.config.schema import TelemetrySection
from agentd.errors import ConfigError
from agentd.protocol.methods import PromptParams
from agentd.protocol.metrics import DaemonMetricsResult
from agentd.protocol.trust_list import add_trusted
from agentd.telemetry.settings import telemetry_settings
from agentd.web.metrics import prometheus_text

BASE = "OTEL_EXPORTER_OTLP_ENDPOINT"


def test_off_without_an_endpoint() -> None:
    assert telemetry_settings(TelemetrySection(), {}) is None
    assert telemetry_settings(TelemetrySection(), {"OTEL_SERVICE_NAME": "x"}) is None


def test_the_base_variable_turns_both_signals_on() -> None:
    chosen = telemetry_settings(TelemetrySection(), {BASE: "http://c:4318/"})
    assert chosen is not None
    assert (chosen.traces_url, chosen.metrics_url) == (
        "http://c:4318/v1/traces",
        "http://c:4318/v1/metrics",
    )
    assert chosen.headers is None  # the exporters read OTEL_EXPORTER_OTLP_HEADERS
    assert (chosen.service_name, chosen.source) == ("agentd", BASE)


def test_a_signal_variable_alone_exports_that_signal_only() -> None:
    env = {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://t/api/traces"}
    chosen = telemetry_settings(TelemetrySection(), env)
    assert chosen is not None
    assert (chosen.traces_url, chosen.metrics_url) == ("https://t/api/traces", None)


def test_the_table_wins_over_the_variables() -> None:
    section = TelemetrySection(
        otlp_endpoint="http://mine:4318", service_name="evals", headers={"x-team": "a"}
    )
    env = {
        BASE: "http://other",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://t",
        "OTEL_SERVICE_NAME": "n",
    }
    chosen = telemetry_settings(section, env, "/home/me/config.toml")
    assert chosen is not None
    assert chosen.traces_url == "http://mine:4318/v1/traces"
    assert chosen.headers == {"x-team": "a"}
    assert chosen.service_name == "evals"
    assert chosen.source == "[telemetry] otlp_endpoint in /home/me/config.toml"


def test_enabled_false_and_sdk_disabled_turn_it_off() -> None:
    on = TelemetrySection(otlp_endpoint="http://c:4318")
    off = TelemetrySection(otlp_endpoint="http://c:4318", enabled=False)
    assert telemetry_settings(off, {BASE: "http://c"}) is None
    assert telemetry_settings(on, {"OTEL_SDK_DISABLED": "true"}) is None


def test_an_endpoint_that_is_not_http_is_an_error() -> None:
    with pytest.raises(ConfigError, match="OTEL_EXPORTER_OTLP_ENDPOINT: the OTLP/HTTP endpoint"):
        telemetry_settings(TelemetrySection(), {BASE: "localhost:4317"})


def test_a_project_file_cannot_set_telemetry(tmp_path: Path) -> None:
    """``[telemetry]`` comes from your own file only, even from a trusted project."""
    user = tmp_path / "config.toml"
    user.write_text('[telemetry]\notlp_endpoint = "http://mine:4318"\n')
    project = tmp_path / "proj"
    project.mkdir()
    (project / ".git").mkdir()
    (project / ".agentd.toml").write_text('[telemetry]\notlp_endpoint = "http://theirs"\n')
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path)}
    add_trusted(project, env)
    merged = load_config(project, user, env)
    assert merged.untrusted_file is None  # trusted: its other keys would apply
    assert merged.settings.telemetry.otlp_endpoint == "http://mine:4318"
    settings, path = user_settings(user, env)
    assert (settings.telemetry.otlp_endpoint, path) == ("http://mine:4318", user)
    assert user_settings(None, env)[1] is None


def test_prometheus_text_escapes_label_values() -> None:
    metrics = DaemonMetricsResult(
        uptime_s=1.5, connections=1, sessions_loaded=2, runs_active=0, runs_started=3,
        runs_ended={"end_turn": 3}, errors={'odd"type\\': 1},
    )  # fmt: skip
    text = prometheus_text(metrics).decode()
    assert 'agentd_errors_total{type="odd\\"type\\\\"} 1' in text
    assert "agentd_uptime_seconds 1.5" in text
    assert "agentd_sessions_loaded 2" in text
    assert text.endswith("\n")


def test_trace_context_values_for_a_driver() -> None:
    trace_id = new_trace_id()
    value = traceparent(trace_id)
    assert trace_id_of(value) == trace_id
    assert msgspec.convert({"sessionId": "s", "text": "t", "traceparent": value}, PromptParams)
    assert traceparent(trace_id, "00f067aa0ba902b7", sampled=False).endswith("-00f067aa0ba902b7-00")
    assert trace_id_of("00-" + "0" * 32 + "-00f067aa0ba902b7-01") is None
    with pytest.raises(ValueError, match="not a valid trace id"):
        traceparent("XYZ")
    with pytest.raises(msgspec.ValidationError, match=r"\$\.traceparent"):
        msgspec.convert({"sessionId": "s", "text": "t", "traceparent": "01-x"}, PromptParams)
