"""``python -m agentd``: the same as the ``agentd`` command."""

from __future__ import annotations

from agentd.cli import run

if __name__ == "__main__":
    run()
