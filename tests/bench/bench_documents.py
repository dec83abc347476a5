"""Budgets of the document tools: ``read`` of a 10 MB notebook ≤ 200 ms; of a 500-page text
PDF's first 20 pages ≤ 500 ms; RSS growth ≤ 50 MiB, handed back after.

* ``notebook``: the real tool (``run_tool``) reading a generated 10 MB notebook (2,000 code
  cells with stream and ``text/plain`` outputs, every 20th with a PNG), after one warm-up
  read; CPU time of this process and wall time, median of 5.
* ``pdf``: the real tool reading the first 20 pages of a generated 500-page text PDF. The
  parse runs in a child process, so the value is the wall time and the CPU time of this
  process plus its children (``RUSAGE_CHILDREN``), median of 5; the child's start (an
  interpreter and pypdf's import, ~200 ms of CPU) is part of every call.
* Memory, in a fresh child process (``--memory``): resident set (``/proc/self/statm``) before
  the first read, after 5 notebook reads and 5 PDF reads (the growth, the budget), and the
  peak above the start during them (``VmHWM``).

* ``skills``: 200 installed skills (each a folder with a SKILL.md of a 400-character
  description and a body): what discovering them adds to a session's start (median of 5, CPU
  and wall), what they add to the system prompt (the ``skill`` tool's line) and the size of the
  listing the ``skill`` tool's description carries.

On a loaded machine wall times run several times over CPU times; the CPU column is the one
that says what the code costs.

Run: ``python -m tests.bench.bench_documents`` (or ``python -m tests.bench`` for all).
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from agentd.tools import build_tools, run_tool
from agentd.tools.base import ToolContext
from tests.documents.notebooks import PNG, cell, notebook_bytes
from tests.documents.pdfs import pdf_bytes

Row = tuple[str, str, str]
MIB = 1024 * 1024


def big_notebook(target: int = 10 * MIB) -> bytes:
    """A notebook of about ``target`` bytes."""
    png = base64.b64encode(PNG * 200).decode("ascii")
    cells = []
    size = index = 0
    while size < target:
        text = [f"line {k} of cell {index}: " + "x" * 60 + "\n" for k in range(40)]
        outputs: list[dict[str, object]] = [
            {"name": "stdout", "output_type": "stream", "text": text},
            {
                "data": {"text/plain": [f"result {index}"]},
                "execution_count": index,
                "metadata": {},
                "output_type": "execute_result",
            },
        ]
        if index % 20 == 0:
            image = {"image/png": png, "text/plain": ["<Figure>"]}
            outputs.append({"data": image, "metadata": {}, "output_type": "display_data"})
        source = f"for k in range(40):\n    print(k, {index})\n"
        cells.append(cell("code", source, f"c{index}", count=index, outputs=outputs))
        size += sum(len(line) for line in text) + len(png) * (index % 20 == 0) + 200
        index += 1
    return notebook_bytes(cells)


def big_pdf() -> bytes:
    return pdf_bytes([[f"page {n} line {k} lorem ipsum dolor sit" for k in range(40)]
                      for n in range(1, 501)])  # fmt: skip


def _rss() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / MIB


def _peak() -> float:
    with open("/proc/self/status") as status:
        line = next(x for x in status if x.startswith("VmHWM:"))
    return int(line.split()[1]) / 1024


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


async def _timed(ctx: ToolContext, runs: int, **args: object) -> tuple[float, float]:
    tool = build_tools(["read"])["read"]
    await run_tool(tool, dict(args), ctx)  # warm-up
    walls, cpus = [], []
    for _ in range(runs):
        wall, cpu = time.perf_counter(), _cpu()
        result = await run_tool(tool, dict(args), ctx)
        walls.append(time.perf_counter() - wall)
        cpus.append(_cpu() - cpu)
        assert not result.is_error, result.output
    return statistics.median(walls) * 1000, statistics.median(cpus) * 1000


async def measure_times(folder: Path) -> list[Row]:
    ctx = ToolContext(cwd=folder)
    (folder / "big.ipynb").write_bytes(big_notebook())
    (folder / "big.pdf").write_bytes(big_pdf())
    size = (folder / "big.ipynb").stat().st_size / MIB
    nb_wall, nb_cpu = await _timed(ctx, 5, path="big.ipynb")
    pdf_wall, pdf_cpu = await _timed(ctx, 5, path="big.pdf", pages="1-20")
    return [
        (f"read of a {size:.1f} MB notebook (CPU / wall)", f"{nb_cpu:.0f} / {nb_wall:.0f} ms",
         "≤ 200 ms"),
        ("read of a 500-page PDF, pages 1-20 (CPU incl. child / wall)",
         f"{pdf_cpu:.0f} / {pdf_wall:.0f} ms", "≤ 500 ms"),
    ]  # fmt: skip


async def measure_memory(folder: str) -> dict[str, float]:
    ctx = ToolContext(cwd=Path(folder))
    tool = build_tools(["read"])["read"]
    start = _rss()
    for _ in range(5):
        await run_tool(tool, {"path": "big.ipynb"}, ctx)
        await run_tool(tool, {"path": "big.pdf", "pages": "1-20"}, ctx)
    return {"start": start, "after": _rss(), "peak": _peak()}


def measure_skills(folder: Path) -> list[Row]:
    from agentd.agent.prompt import build_system_prompt
    from agentd.config.skills import discover
    from agentd.tools import build_tools, toolset
    from agentd.tools.defaults import ToolSettings

    env = {"HOME": str(folder), "XDG_CONFIG_HOME": str(folder / "config")}
    root = folder / "config" / "agentd" / "skills"
    for number in range(200):
        skill = root / f"skill-{number:03d}"
        skill.mkdir(parents=True)
        about = f"Does task number {number} well. " * 14
        (skill / "SKILL.md").write_text(
            f"---\nname: skill-{number:03d}\ndescription: {about}\n---\n" + "Step.\n" * 200
        )
    walls, cpus = [], []
    for _ in range(5):
        wall, cpu = time.perf_counter(), time.process_time()
        skills, _ = discover(folder, env)
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    assert len(skills) == 200
    plain = toolset(build_tools(), ToolSettings())
    settings = ToolSettings(skills=skills)
    tools = build_tools()
    tools.update(build_tools(["skill"]))
    with_skills = toolset(tools, settings)
    before = build_system_prompt(folder, plain.specs)
    after = build_system_prompt(folder, with_skills.specs)
    skill_spec = next(spec for spec in with_skills.specs if spec.name == "skill")
    return [
        ("200 skills: added to session start (CPU / wall)",
         f"{statistics.median(cpus) * 1000:.1f} / {statistics.median(walls) * 1000:.1f} ms",
         "≤ 20 ms"),
        ("200 skills: added to the system prompt",
         f"{len(after.encode()) - len(before.encode())} B", "≤ 4 KB"),
        ("200 skills: the skill tool's description (the listing)",
         f"{len(skill_spec.description.encode())} B", "≤ 4 KB"),
    ]  # fmt: skip


def main() -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="agentd-bench-docs-") as folder:
        rows = asyncio.run(measure_times(Path(folder)))
        rows += measure_skills(Path(folder) / "skills")
        out = subprocess.run(
            [sys.executable, "-m", "tests.bench.bench_documents", "--memory", folder],
            capture_output=True, text=True, check=True, timeout=600,
        )  # fmt: skip
    memory = json.loads(out.stdout.splitlines()[-1])
    rows.append(("RSS growth after 5 notebook + 5 PDF reads",
                 f"{memory['after'] - memory['start']:.1f} MiB", "≤ 50 MiB"))  # fmt: skip
    rows.append(("RSS peak above start during them", f"{memory['peak'] - memory['start']:.1f} MiB",
                 "(returned after)"))  # fmt: skip
    return rows


if __name__ == "__main__":
    if sys.argv[1:2] == ["--memory"]:
        print(json.dumps(asyncio.run(measure_memory(sys.argv[2]))))
    else:
        for row in main():
            print(" | ".join(row))
