"""``python -m tests.bench [NAME ...]``: run ``tests/bench/bench_*.py`` and print one table.

With names (``coldpath`` or ``bench_coldpath``) only those modules run, else every one. With
``AGENTD_BENCH_SMOKE=1`` each runs once on a tiny size (tests/bench/smoke.py). Each module's
``main()`` returns ``(measure, value, budget)`` rows. A module that fails is reported in the
table and the others still run; the exit status is 1 if any failed.
"""

from __future__ import annotations

import importlib
import sys
import traceback
from pathlib import Path


def module_names() -> list[str]:
    """Every bench module's name (``bench_…``), sorted."""
    return sorted(path.stem for path in Path(__file__).parent.glob("bench_*.py"))


def collect(names: list[str] | None = None) -> tuple[list[tuple[str, str, str, str]], bool]:
    """Rows of the named (else every) bench module, with its short name, and whether all ran."""
    rows: list[tuple[str, str, str, str]] = []
    ok = True
    for name in names or module_names():
        print(f"running {name} ...", file=sys.stderr, flush=True)
        try:
            module = importlib.import_module(f"tests.bench.{name}")
            rows += [(m, v, b, name) for m, v, b in module.main()]
        except Exception as exc:
            traceback.print_exc()
            rows.append((f"({type(exc).__name__}: {exc})"[:80], "failed", "—", name))
            ok = False
    return rows, ok


def render(rows: list[tuple[str, str, str, str]]) -> str:
    """A plain-text table: measure | value | budget | module."""
    table = [("measure", "value", "budget", "module"), *rows]
    widths = [max(len(row[i]) for row in table) for i in range(4)]
    lines = [" | ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)) for row in table]
    lines.insert(1, "-+-".join("-" * width for width in widths))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    wanted = [n if n.startswith("bench_") else f"bench_{n}" for n in (argv or sys.argv[1:])]
    unknown = sorted(set(wanted) - set(module_names()))
    if unknown:
        print(f"no such bench module: {', '.join(unknown)}", file=sys.stderr)
        return 2
    from agentd import log

    log.configure("warning")  # an in-process daemon's log lines go to stderr, not the table
    rows, ok = collect(wanted)
    print(render(rows))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
