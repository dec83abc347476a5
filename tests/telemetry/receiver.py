"""A real OTLP/HTTP receiver for the telemetry tests: ``POST /v1/traces`` and
``POST /v1/metrics`` bodies decoded with the official protobuf classes
(``opentelemetry-proto``), kept with their raw bytes, answered 200 with an empty export
response, as a collector does.

``python -m tests.telemetry.receiver`` runs one in a process of its own (for the bench, so
decoding does not compete with the measured client): it prints its endpoint, serves until
its stdin closes, then prints how many spans it received."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span


class Receiver:
    """Listens on 127.0.0.1 (any free port) until :meth:`close`; :attr:`endpoint` is its
    base URL."""

    def __init__(self) -> None:
        self.traces: list[ExportTraceServiceRequest] = []
        self.metrics: list[ExportMetricsServiceRequest] = []
        self.raw: list[bytes] = []
        self.headers: list[dict[str, str]] = []
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                answer: Any
                if self.path == "/v1/traces":
                    request: Any = ExportTraceServiceRequest.FromString(body)
                    answer = ExportTraceServiceResponse()
                elif self.path == "/v1/metrics":
                    request = ExportMetricsServiceRequest.FromString(body)
                    answer = ExportMetricsServiceResponse()
                else:
                    self.send_error(404)
                    return
                receiver._keep(self.path, request, body, dict(self.headers.items()))
                payload = answer.SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def _keep(self, path: str, request: Any, body: bytes, headers: dict[str, str]) -> None:
        with self._lock:
            (self.traces if path == "/v1/traces" else self.metrics).append(request)
            self.raw.append(body)
            self.headers.append({k.lower(): v for k, v in headers.items()})

    def spans(self) -> list[Span]:
        """Every span received so far."""
        with self._lock:
            return [
                span
                for request in self.traces
                for resource in request.resource_spans
                for scope in resource.scope_spans
                for span in scope.spans
            ]

    def metric_points(self) -> dict[str, list[Any]]:
        """Every metric's data points received so far, by name (all exports together)."""
        found: dict[str, list[Any]] = {}
        with self._lock:
            requests = list(self.metrics)
        for request in requests:
            for resource in request.resource_metrics:
                for scope in resource.scope_metrics:
                    for metric in scope.metrics:
                        kind = metric.WhichOneof("data")
                        points = list(getattr(metric, kind).data_points) if kind else []
                        found.setdefault(metric.name, []).extend(points)
        return found

    def resource_attributes(self) -> dict[str, Any]:
        with self._lock:
            request = self.traces[0]
        return attributes(request.resource_spans[0].resource.attributes)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __iter__(self) -> Iterator[Span]:
        return iter(self.spans())


def value(any_value: AnyValue) -> Any:
    """The Python value of an OTLP ``AnyValue``."""
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return [value(item) for item in any_value.array_value.values]
    return getattr(any_value, kind) if kind else None


def attributes(pairs: Any) -> dict[str, Any]:
    """OTLP key-value pairs as a dict."""
    return {pair.key: value(pair.value) for pair in pairs}


if __name__ == "__main__":
    receiver = Receiver()
    print(receiver.endpoint, flush=True)
    sys.stdin.read()
    receiver.close()
    print(len(receiver.spans()), flush=True)
