"""Headless CI budgets: ``agentctl send --stdio --json`` on the mock in a fresh environment
(no daemon running, empty XDG directories) against the interpreter floor, and the GitHub
Action step's own overhead beyond that ``agentctl`` call."""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.bench.smoke import size
from tests.harness import isolated_env, scaled

ROOT = Path(__file__).resolve().parents[2]
RUNS = size(7)
PROMPT = "how are you"


def _fresh_env(root: Path) -> dict[str, str]:
    env = isolated_env(root)
    return {k: v for k, v in env.items() if not k.startswith("INPUT_")}


def _timed(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    started = time.perf_counter()
    subprocess.run(argv, env=env, cwd=cwd, capture_output=True, check=True, timeout=scaled(120))
    return (time.perf_counter() - started) * 1000


def _median_fresh(argv: list[str], extra_env: dict[str, str] | None = None) -> float:
    samples = []
    for _ in range(RUNS):
        with tempfile.TemporaryDirectory(prefix="bench-ci-") as tmp:
            root = Path(tmp)
            env = {**_fresh_env(root), **(extra_env or {})}
            if extra_env is not None:
                env["RUNNER_TEMP"] = str(root)
                env["GITHUB_OUTPUT"] = str(root / "output")
                env["GITHUB_STEP_SUMMARY"] = str(root / "summary.md")
                env["INPUT_WORKING_DIRECTORY"] = str(root)
            samples.append(_timed(argv, env, root))
    return statistics.median(samples)


def main() -> list[tuple[str, str, str]]:
    bin_dir = Path(sys.executable).parent
    floor = _median_fresh([sys.executable, "-c", "import asyncio, msgspec"])
    send = [str(bin_dir / "agentctl"), "send", "--stdio", "--json", "--provider", "mock"]
    one_turn = _median_fresh([*send, PROMPT])
    step_env = {
        "AGENTD_VENV": str(bin_dir.parent),
        "INPUT_PROMPT": PROMPT,
        "INPUT_PROVIDER": "mock",
        "INPUT_FAIL_ON_ERROR": "true",
    }
    step = _median_fresh(["bash", str(ROOT / "clients/github-action/run.sh")], step_env)
    # the agentctl call the step makes (text output, a result file), timed on its own
    step_call = [str(bin_dir / "agentctl"), "send", "--stdio", "--provider", "mock"]
    step_send = _median_fresh([*step_call, "--result-file", "r.json", PROMPT])
    return [
        ("fresh env: python -c 'import asyncio, msgspec' (floor)", f"{floor:.0f} ms", "—"),
        (
            "fresh env: agentctl send --stdio --json, one turn on the mock",
            f"{one_turn:.0f} ms ({one_turn / floor:.1f}× floor)",
            "≤ 3× floor",
        ),
        (
            "GitHub Action step overhead beyond its agentctl call",
            f"{step - step_send:.0f} ms",
            "≤ 1000 ms",
        ),
    ]


if __name__ == "__main__":
    for row in main():
        print(" | ".join(row))
