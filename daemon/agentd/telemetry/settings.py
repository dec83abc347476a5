"""Whether the daemon exports telemetry, and where: the ``[telemetry]`` table of your own
config file (:class:`~agentd.config.schema.TelemetrySection`) over the standard
``OTEL_EXPORTER_OTLP_*`` variables.

Telemetry is on when an endpoint is known: ``otlp_endpoint`` in the file, else
``OTEL_EXPORTER_OTLP_ENDPOINT`` (a base URL, like the file's) or the per-signal
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` / ``OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`` (full URLs).
``enabled = false`` in the file or ``OTEL_SDK_DISABLED=true`` turns it off whatever else is
set. Deciding this imports nothing of OpenTelemetry.
"""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from agentd.config.schema import TelemetrySection
from agentd.errors import ConfigError

DEFAULT_SERVICE = "agentd"
TRACES_PATH = "v1/traces"
METRICS_PATH = "v1/metrics"
_BASE_ENV = "OTEL_EXPORTER_OTLP_ENDPOINT"
_SIGNAL_ENV = {
    "traces": "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "metrics": "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
}


class TelemetrySettings(msgspec.Struct, frozen=True):
    """What the exporters are built from: each signal's full URL (None: that signal is not
    exported), the headers (None: the exporters read ``OTEL_EXPORTER_OTLP_HEADERS``), the
    service name, whether content is captured, the metric export interval and ``source``
    (what turned telemetry on, for messages)."""

    traces_url: str | None
    metrics_url: str | None
    headers: dict[str, str] | None
    service_name: str
    capture_content: bool
    metrics_interval: float
    source: str


def telemetry_settings(
    section: TelemetrySection, env: Mapping[str, str], config_file: str | None = None
) -> TelemetrySettings | None:
    """The settings when telemetry is on, None when it is off (see the module docstring);
    ConfigError for an endpoint that is not an http(s) URL. ``config_file`` names the file
    the section came from."""
    if not section.enabled or env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    where = f"[telemetry] otlp_endpoint in {config_file or 'the config file'}"
    base, source = (section.otlp_endpoint, where) if section.otlp_endpoint else (None, "")
    if base is None and env.get(_BASE_ENV):
        base, source = env[_BASE_ENV], _BASE_ENV
    urls = {}
    for signal, path in (("traces", TRACES_PATH), ("metrics", METRICS_PATH)):
        given = None if section.otlp_endpoint else env.get(_SIGNAL_ENV[signal])
        url = given or (_join(base, path) if base else None)
        if given:
            source = source or _SIGNAL_ENV[signal]
        if url is not None:
            _check_url(url, source or _SIGNAL_ENV[signal])
        urls[signal] = url
    if urls["traces"] is None and urls["metrics"] is None:
        return None
    return TelemetrySettings(
        traces_url=urls["traces"],
        metrics_url=urls["metrics"],
        headers=dict(section.headers) if section.headers else None,
        service_name=section.service_name or env.get("OTEL_SERVICE_NAME") or DEFAULT_SERVICE,
        capture_content=section.capture_content,
        metrics_interval=section.metrics_interval,
        source=source,
    )


def _join(base: str, path: str) -> str:
    """``base`` with the signal's path, as the OTLP/HTTP specification joins them."""
    return base.rstrip("/") + "/" + path


def _check_url(url: str, source: str) -> None:
    if not url.startswith(("http://", "https://")):
        raise ConfigError(f"{source}: the OTLP/HTTP endpoint must be an http(s) URL, got {url!r}")
