"""The OpenTelemetry SDK, set up for one daemon: a tracer provider with a batching OTLP/HTTP
(protobuf) span exporter, a meter provider with a periodic OTLP/HTTP metric exporter, and
the :class:`~agentd.telemetry.spans.SpanObserver` on them.

Imported only when telemetry is on (:func:`agentd.telemetry.Telemetry.start`); this is the
one module that imports the SDK and the exporters (the ``agentd[telemetry]`` extra). The
providers are the daemon's own, never installed as the process's global ones. Exports run in
the SDK's worker threads, never on the event loop.
"""

from __future__ import annotations

from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.metrics import CallbackOptions, Observation
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import MetricReader, PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from agentd import __version__
from agentd.telemetry.counters import Counters
from agentd.telemetry.settings import TelemetrySettings
from agentd.telemetry.spans import SpanObserver

SHUTDOWN_TIMEOUT_MS = 5_000
"""How long the last export may take at shutdown."""


class OtelExport:
    """The daemon's providers and their observer (see the module docstring)."""

    def __init__(self, settings: TelemetrySettings, counters: Counters) -> None:
        """``counters``: the daemon's, observed as the ``agentd.runs.active`` and
        ``agentd.approvals.pending`` gauges at each metric export."""
        resource = Resource.create(
            {"service.name": settings.service_name, "service.version": __version__}
        )
        headers = settings.headers
        self.tracer_provider = TracerProvider(resource=resource)
        if settings.traces_url is not None:
            spans = OTLPSpanExporter(endpoint=settings.traces_url, headers=headers)
            self.tracer_provider.add_span_processor(BatchSpanProcessor(spans))
        readers: list[MetricReader] = []
        if settings.metrics_url is not None:
            metrics = OTLPMetricExporter(endpoint=settings.metrics_url, headers=headers)
            interval = settings.metrics_interval * 1000
            readers.append(PeriodicExportingMetricReader(metrics, interval))
        self.meter_provider = MeterProvider(metric_readers=readers, resource=resource)
        meter = self.meter_provider.get_meter("agentd", __version__)
        self.observer = SpanObserver(
            self.tracer_provider.get_tracer("agentd", __version__),
            meter,
            capture_content=settings.capture_content,
        )

        def active(options: CallbackOptions) -> list[Observation]:
            return [Observation(counters.runs_active)]

        def pending(options: CallbackOptions) -> list[Observation]:
            return [Observation(counters.approvals_pending)]

        meter.create_observable_gauge("agentd.runs.active", [active], "{run}", "runs now")
        meter.create_observable_gauge(
            "agentd.approvals.pending", [pending], "{call}", "tool calls waiting for approval"
        )

    def shutdown(self) -> None:
        """Export what is pending and stop the exporters (blocking: call it in a thread)."""
        self.tracer_provider.force_flush(SHUTDOWN_TIMEOUT_MS)
        self.tracer_provider.shutdown()
        self.meter_provider.shutdown(SHUTDOWN_TIMEOUT_MS)
