"""The daemon's telemetry: its own counters (always, for ``daemon/metrics``) and, when
configured, OpenTelemetry traces and metrics over OTLP/HTTP (docs/telemetry.md).

:class:`Telemetry` is what the session layer holds: its :attr:`~Telemetry.observers` are
told every session event (:mod:`agentd.telemetry.scope`). Off (no endpoint, see
:mod:`agentd.telemetry.settings`), nothing of OpenTelemetry is imported;
:meth:`Telemetry.start` imports the SDK (:mod:`agentd.telemetry.otel`) only when on, and
says what to install when the ``agentd[telemetry]`` extra is missing.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from agentd.errors import ConfigError
from agentd.telemetry.counters import Counters
from agentd.telemetry.scope import Observer

if TYPE_CHECKING:
    from agentd.telemetry.otel import OtelExport
    from agentd.telemetry.settings import TelemetrySettings

MISSING_EXTRA = (
    "telemetry is configured ({source}) but the OpenTelemetry SDK is not installed: "
    "pip install 'agentd[telemetry]' (or remove the endpoint): {error}"
)


class Telemetry:
    """The daemon's counters, and its OpenTelemetry export once :meth:`start` found it
    configured."""

    def __init__(self) -> None:
        self.counters = Counters()
        self.export: OtelExport | None = None
        self.settings: TelemetrySettings | None = None
        self.decided = False
        """:meth:`start` has run and decided (on or off)."""
        self.observers: tuple[Observer, ...] = (self.counters,)

    def start(self, config_file: Path | None, env: Mapping[str, str] | None = None) -> None:
        """Decide once, from your own config file and ``env``, whether to export; build the
        SDK's providers when so. Blocking (it reads the file, may import the SDK): call it off
        the event loop. ConfigError for a bad ``[telemetry]`` table or a missing extra (the
        next call decides again)."""
        if self.decided:
            return
        from agentd.config.load import user_settings
        from agentd.telemetry.settings import telemetry_settings

        env = os.environ if env is None else env
        settings, path = user_settings(config_file, env)
        chosen = telemetry_settings(settings.telemetry, env, str(path) if path else None)
        if chosen is not None:
            try:
                from agentd.telemetry.otel import OtelExport
            except ImportError as exc:
                raise ConfigError(MISSING_EXTRA.format(source=chosen.source, error=exc)) from None
            self.export = OtelExport(chosen, self.counters)
            self.observers = (self.counters, self.export.observer)
        self.settings, self.decided = chosen, True

    def shutdown(self) -> None:
        """Flush and stop the export, if any (blocking: call it in a thread)."""
        export, self.export = self.export, None
        self.observers = (self.counters,)
        if export is not None:
            export.shutdown()
