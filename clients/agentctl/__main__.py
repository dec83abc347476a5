"""``python -m agentctl``: the same as the ``agentctl`` command."""

from __future__ import annotations

from agentctl.cli import run

run()
