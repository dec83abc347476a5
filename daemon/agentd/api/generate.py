"""The generator of :mod:`agentd.api.methods`: a Protocol method per ``call`` of the method
table (its params and result types). ``agentd schema`` (:mod:`agentd.schema`) writes the file
and drift-checks it with the schemas; nothing imports this module at run time."""

from __future__ import annotations

from pathlib import Path

from agentd.protocol.table import METHODS

API_METHODS_FILE = Path(__file__).parent / "methods.py"
"""The generated session-method Protocol (in the package, not under ``schemas/``)."""


def api_methods_source() -> str:
    """The source of :data:`API_METHODS_FILE`: a Protocol method per table ``call``."""
    calls = [(s.call, s) for s in METHODS.values() if s.call is not None]
    modules: dict[str, set[str]] = {}
    for _, spec in calls:
        for tp in (spec.params, spec.result):
            modules.setdefault(tp.__module__, set()).add(tp.__name__)
    lines = [
        '"""The session methods as a Protocol, one per ``call`` of the method table.',
        "",
        "Generated from :data:`agentd.protocol.table.METHODS` by ``agentd schema`` (``make",
        'schema``); do not edit. :class:`agentd.api.SessionApi` extends it."""',
        "",
        "from __future__ import annotations",
        "",
        "from typing import TYPE_CHECKING, Protocol",
        "",
        "if TYPE_CHECKING:",
        "    from agentd.api.subscriber import Subscriber",
        *_imports(modules),
        "",
        "",
        "class SessionMethods(Protocol):",
        '    """Each method takes its params Struct (and the watching subscriber) and returns its',
        '    result Struct."""',
    ]
    for call, spec in calls:
        params, result = spec.params.__name__, spec.result.__name__
        lines += [
            "",
            f"    async def {call}(",
            f"        self, params: {params}, subscriber: Subscriber | None = None",
            f"    ) -> {result}: ...",
        ]
    return "\n".join(lines) + "\n"


def _imports(modules: dict[str, set[str]]) -> list[str]:
    """``from MODULE import (…)`` lines (indented, for a TYPE_CHECKING block), sorted."""
    lines: list[str] = []
    for module, names in sorted(modules.items()):
        if len(names) == 1:
            lines.append(f"    from {module} import {next(iter(names))}")
            continue
        ordered = sorted(names, key=str.lower)  # as ruff's isort orders them
        lines += [f"    from {module} import (", *(f"        {n}," for n in ordered), "    )"]
    return lines
