"""``python -m agentctl``: the same as the ``agentctl`` command."""

from __future__ import annotations

import sys

from agentctl.cli import main

sys.exit(main())
