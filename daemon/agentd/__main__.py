"""``python -m agentd``: the same as the ``agentd`` command."""

from __future__ import annotations

import sys

from agentd.cli import main

if __name__ == "__main__":
    sys.exit(main())
