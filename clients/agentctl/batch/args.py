"""The grammar of ``agentctl batch`` (argparse only; imported when the parser is built)."""

from __future__ import annotations

import argparse
from typing import Any

import msgspec

USAGE = (
    "agentctl batch TASKS.jsonl --out DIR [--concurrency N] [--strict] [--retry-failed] "
    "[--max-cost USD] [--max-tokens N] [--rate R] [--json] [--shard K/N]\n"
    "       [--engine local|ray [--address ADDRESS] [--ray-num-cpus N] [--ray-resources JSON] "
    "[--max-retries N] [--ray-work-dir DIR]]\n"
    "       agentctl batch report DIR [--markdown FILE] [--html FILE] [--json]"
)
DESCRIPTION = (
    "Run every task of TASKS.jsonl (one JSON object a line: id, prompt, cwd or repo+ref, "
    "setup, check, provider, model, permission, max_turns, max_cost, timeout, env) in its own "
    "workspace DIR/work/ID, up to N at once; results in DIR/results.jsonl, artifacts in "
    "DIR/ID/. Running it again skips the tasks already done. `batch report DIR` summarises "
    "a batch and writes DIR/report.md and DIR/report.html."
)
EPILOG = (
    "exit codes: 0 every task passed; 1 a task failed or a line was bad; 2 usage error "
    "(--strict: a bad line); 6 the batch's --max-cost/--max-tokens was reached; 130 interrupted"
)


def shard(text: str) -> tuple[int, int]:
    """``K/N`` with 1 ≤ K ≤ N."""
    try:
        k_text, n_text = text.split("/")
        k, n = int(k_text), int(n_text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected K/N (for example 2/8), got {text!r}") from None
    if not 1 <= k <= n:
        raise argparse.ArgumentTypeError(f"{text}: K must be between 1 and N")
    return k, n


def non_negative_float(text: str) -> float:
    """A number ≥ 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"{text}: must be 0 or more")
    return value


def non_negative_int(text: str) -> int:
    """A whole number ≥ 0."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text}: must be 0 or more")
    return value


def ray_resources(text: str) -> dict[str, float]:
    """A JSON object of resource names to amounts ≥ 0 (``{"gpu_box": 1}``)."""
    try:
        value = msgspec.json.decode(text)
    except msgspec.DecodeError as exc:
        raise argparse.ArgumentTypeError(f"not JSON: {exc}") from None
    if not isinstance(value, dict) or not value:
        raise argparse.ArgumentTypeError('expected an object such as {"name": 1}')
    for name, amount in value.items():
        ok = isinstance(amount, int | float) and not isinstance(amount, bool) and amount >= 0
        if not ok:
            raise argparse.ArgumentTypeError(f"{name}: expected a number ≥ 0, got {amount!r}")
        if name in ("CPU", "GPU", "memory"):
            raise argparse.ArgumentTypeError(f"{name}: use --ray-num-cpus for CPUs; "
                                             "GPU and memory are not custom resources")  # fmt: skip
    return {str(name): float(amount) for name, amount in value.items()}


def add_batch_parser(commands: Any, positive_int: Any, positive_float: Any) -> None:
    """Add ``batch`` to the ``agentctl`` sub-commands."""
    batch = commands.add_parser(
        "batch",
        help="run many tasks (a JSONL file) in isolated workspaces; report on them",
        usage=USAGE,
        description=DESCRIPTION,
        epilog=EPILOG,
    )
    batch.add_argument("words", nargs="+", metavar="TASKS.jsonl | report DIR")
    batch.add_argument("--socket", metavar="PATH", default=argparse.SUPPRESS,
                       help="Unix socket of the shared daemon")  # fmt: skip
    batch.add_argument("--out", metavar="DIR", help="output folder (required to run)")
    batch.add_argument("--concurrency", type=positive_int, metavar="N",
                       help="tasks at once (default: the cores, at most 8)")  # fmt: skip
    batch.add_argument("--strict", action="store_true",
                       help="refuse the whole file when a line is bad")  # fmt: skip
    batch.add_argument("--retry-failed", action="store_true",
                       help="also run again the tasks that failed or errored")  # fmt: skip
    batch.add_argument("--max-cost", type=positive_float, metavar="USD",
                       help="cost cap of the whole batch (needs the model's prices)")  # fmt: skip
    batch.add_argument("--max-tokens", type=positive_int, metavar="N",
                       help="token cap of the whole batch")  # fmt: skip
    batch.add_argument("--rate", type=positive_float, metavar="R",
                       help="start at most R tasks per second")  # fmt: skip
    batch.add_argument("--shard", type=shard, metavar="K/N",
                       help="run only the K-th of N shards (task lines K, K+N, …)")  # fmt: skip
    batch.add_argument("--engine", choices=("local", "ray"), default="local",
                       help="where tasks run (default: local)")  # fmt: skip
    batch.add_argument("--address", metavar="ADDRESS", help="Ray cluster address (--engine ray)")
    batch.add_argument("--ray-num-cpus", type=non_negative_float, metavar="N",
                       help="CPUs each task takes on its Ray node (default 1)")  # fmt: skip
    batch.add_argument("--ray-resources", type=ray_resources, metavar="JSON",
                       help='custom Ray resources of each task: \'{"gpu_box": 1}\'')  # fmt: skip
    batch.add_argument("--max-retries", type=non_negative_int, metavar="N",
                       help="runs again after a task's node died (default 3)")  # fmt: skip
    batch.add_argument("--ray-work-dir", metavar="DIR",
                       help="workspaces on the nodes (default $TMPDIR/agentd-batch)")  # fmt: skip
    batch.add_argument("--provider", help="provider of tasks that name none")
    batch.add_argument("--model", help="model of tasks that name none")
    batch.add_argument("--permission", choices=("auto", "ask", "read-only"),
                       help="tool approval of tasks that name none (default: auto; "
                       "ask: every request refused, nobody answers)")  # fmt: skip
    batch.add_argument("--env", action="append", metavar="NAME",
                       help="pass variable NAME to setup and check; repeatable")  # fmt: skip
    batch.add_argument("--check-timeout", type=positive_float, metavar="SECONDS",
                       help="time limit of a setup or check command (default 600)")  # fmt: skip
    batch.add_argument("--json", action="store_true", help="print a JSON line per task event")
    batch.add_argument("--markdown", metavar="FILE", help="report: Markdown to FILE")
    batch.add_argument("--html", metavar="FILE", help="report: HTML to FILE")
