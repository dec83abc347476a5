"""Budgets of rewind (``session/rewind``, :mod:`agentd.session.changes`).

* ``record a changed file``: what recording adds to a write/edit call — the time the tool
  waits in the recorder's ``changed()`` (median of 40 files per size: 1 KB, 100 KB, just
  under 1 MB, each the first change of its file in the run, so its before-image is kept).
  Budget ≤ 1 ms. Also the recording thread's own time per file (hashing before and after,
  writing the before-image), which runs beside the run (mean over the 40).
* ``bash watch``: what a bash call spends in the change recorder's watch (the refresh of the
  tree's view before and after the command, and the recording of what changed), median of 200
  calls, in a tree of 1,000 and of 10,000 files (20 to a folder), the command's own time not
  counted: for a command that changed nothing (budgets ≤ 1 ms and ≤ 5 ms, with inotify; also
  its CPU time, which a loaded machine inflates less) and one that rewrote one file in place.
  The same by stats (no inotify: every file's ``lstat``, median of 5; not judged; a tree over
  5,000 entries is not watched that way, the bench raises the limit to measure it). And what
  the check that skips the watch for a read-only command costs.
* ``rewind 100 files``: a real ``agentd --stdio`` daemon, a run of the mock LLM that writes
  100 files of 10 KB (edits of existing files), then ``session/rewind`` over JSON-RPC: wall
  time of the call, all 100 restored. Median and best of 5, with the machine's load average
  (on a shared machine the timings grow with it). Budget ≤ 200 ms. Also the restore alone
  in this process, as CPU time (less inflated by the load).

Run: ``python -m tests.bench.bench_rewind`` (or ``python -m tests.bench`` for every area).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from agentd.protocol.session_file import FileChangesEntry
from agentd.session.changes import ChangeRecorder
from agentd.session.restore import restore_all
from agentd.session.rewind import plan
from agentd.store.contents import ContentStore
from agentd.tools.shellparse.readonly import reads_only
from tests.bench.smoke import size
from tests.harness import IsolatedHome, new_session, run, stdio_client
from tests.scenarios import tool_call

Row = tuple[str, str, str]
SIZES = {"1 KB": 1_000, "100 KB": 100_000, "1 MB": 1_000_000}
FILES = size(100, 5)
ROUNDS = size(5)


async def _record(
    recorder: ChangeRecorder, root: Path, size: int, count: int
) -> tuple[float, float]:
    """(median time a tool call waits for ``changed()``, mean worker time per file)."""
    contents = [os.urandom(size) for _ in range(count)]
    waits = []
    start_all = time.perf_counter()
    for n, before in enumerate(contents):
        start = time.perf_counter()
        await recorder.changed(root / f"f{size}-{n}", before, before[:-1] + b"!")
        waits.append(time.perf_counter() - start)
    assert len(recorder.take_pending(wait=True)) == count
    per_file = (time.perf_counter() - start_all) / count
    return statistics.median(waits), per_file


def _recording() -> list[Row]:
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="bench-rw-") as tmp:
        root = Path(tmp)
        recorder = ChangeRecorder(ContentStore(root / "s.files"), root)
        for label, size in SIZES.items():
            wait, worker = asyncio.run(_record(recorder, root, size, 40))
            rows.append(
                (
                    f"record a {label} file: added to the tool call",
                    f"{wait * 1000:.3f} ms",
                    "≤ 1 ms",
                )
            )
            rows.append(
                (
                    f"  recording thread per {label} file (hash, keep)",
                    f"{worker * 1000:.2f} ms",
                    "-",
                )
            )
        rows += _watch_rows(root)
    return rows


def _tree(work: Path, files: int) -> None:
    """``files`` files of 100 bytes, 20 to a folder, dated in the past like a checkout's."""
    past = time.time_ns() - 3_600 * 10**9
    for n in range(files):
        folder = work / f"d{n // 200}" / f"e{n // 20 % 10}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"f{n}.txt").write_bytes(b"x" * 100)
    for path in [work, *work.rglob("*")]:
        os.utime(path, ns=(past, past))


async def _per_call(
    recorder: ChangeRecorder, touch: Path | None, calls: int
) -> tuple[float, float]:
    """(median wall time, mean CPU time) a bash call spends in the recorder's watch: both
    refreshes and, when a file changed, its recording, the command in between (nothing, or one
    in-place edit of ``touch``) not counted."""
    async with recorder.watching():  # the first look at the tree, once per session
        pass
    timings, cpu = [], 0.0
    for n in range(calls):
        watch = recorder.watching()
        start, start_cpu = time.perf_counter(), time.process_time()
        await watch.__aenter__()
        entered, entered_cpu = time.perf_counter(), time.process_time()
        if touch is not None:
            touch.write_bytes(b"%099d" % n)
        body, body_cpu = time.perf_counter(), time.process_time()
        await watch.__aexit__(None, None, None)
        end, end_cpu = time.perf_counter(), time.process_time()
        timings.append(entered - start + end - body)
        cpu += entered_cpu - start_cpu + end_cpu - body_cpu
        recorder.take_pending(wait=True)
    return statistics.median(timings), cpu / calls


def _watch_rows(base: Path) -> list[Row]:
    """The bash tree watch per call, with inotify and by stats (module docstring)."""
    rows: list[Row] = []
    calls = size(200, 3)
    for files, budget in ((size(1_000, 20), "≤ 1 ms"), (size(10_000, 40), "≤ 5 ms")):
        work = base / f"tree{files}"
        _tree(work, files)
        edited = work / "d0" / "e0" / "f0.txt"
        for inotify, mode in ((True, "inotify"), (False, "stats")):
            recorder = ChangeRecorder(ContentStore(base / f"w{files}{mode}"), work, inotify=inotify)
            if not inotify and files > 5_000:
                recorder.max_tree_entries = files + 1_000  # watched by stats only when asked
            runs = calls if inotify else 5
            nothing, nothing_cpu = asyncio.run(_per_call(recorder, None, runs))
            one, _ = asyncio.run(_per_call(recorder, edited, runs))
            rows.append((f"bash watch, {files:,} files, nothing changed ({mode})",
                         f"{nothing * 1000:.3f} ms", budget if inotify else "-"))  # fmt: skip
            rows.append((f"  CPU time per call ({mode})", f"{nothing_cpu * 1000:.3f} ms", "-"))
            rows.append((f"  one file changed ({mode})", f"{one * 1000:.3f} ms", "-"))
    rows.append(_skip_row())
    return rows


def _skip_row() -> Row:
    """What deciding that a command only reads costs (its parse is the permission check's,
    cached)."""
    reads_only("git log --oneline -5 | head -3")
    runs = size(2_000, 5)
    start = time.perf_counter()
    for _ in range(runs):
        reads_only("git log --oneline -5 | head -3")
    cost = (time.perf_counter() - start) / runs * 1000
    return ("read-only command, no watch: the check", f"{cost:.4f} ms", "-")


def _scenario() -> dict[str, object]:
    calls = [
        tool_call("edit", {"path": f"f{n:03}.txt", "old_string": "A", "new_string": "B"}, f"c{n}")
        for n in range(FILES)
    ]
    return {
        "name": "bench-rewind",
        "trigger": "bench rewind edits",
        "steps": [
            {"response": {"content": "", "tool_calls": calls}},
            {"response": {"content": "Edited."}},
        ],
    }


async def _rewind_once(home: IsolatedHome) -> float:
    for n in range(FILES):
        (home.project / f"f{n:03}.txt").write_text("A" + "x" * 10_000)
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        result, _ = await run(client, sid, "bench rewind edits", timeout=120)
        assert result["stopReason"] == "end_turn", result
        start = time.perf_counter()
        answer = await client.call("session/rewind", {"sessionId": sid})
        elapsed = time.perf_counter() - start
    assert len(answer["restored"]) == FILES, answer
    return elapsed


def _rewind() -> list[Row]:
    timings = []
    for _ in range(ROUNDS):
        home = IsolatedHome()
        try:
            home.use_scenarios([_scenario()])
            timings.append(asyncio.run(_rewind_once(home)))
        finally:
            home.cleanup()
            shutil.rmtree(home.root, ignore_errors=True)
    median, best = statistics.median(timings) * 1000, min(timings) * 1000
    return [
        (
            f"session/rewind of {FILES} edited files (JSON-RPC), median",
            f"{median:.0f} ms",
            "≤ 200 ms",
        ),
        (f"  best of {ROUNDS}", f"{best:.0f} ms", "-"),
        _load(),
    ]


def _load() -> Row:
    """The machine's load while measuring (these timings scale with it)."""
    one_minute = os.getloadavg()[0]
    return (f"  load average (on {os.cpu_count()} CPUs)", f"{one_minute:.1f}", "-")


def _restore_cpu() -> Row:
    """The restore of 100 edited files in this process (plan and restore, as the daemon's
    worker thread runs them): CPU time, which a loaded machine inflates far less than wall
    time. Median of 5."""
    timings = []
    for _ in range(ROUNDS):
        with tempfile.TemporaryDirectory(prefix="bench-rs-") as tmp:
            work = Path(tmp) / "w"
            work.mkdir()
            recorder = ChangeRecorder(ContentStore(Path(tmp) / "s.files"), work)
            changes = []
            for n in range(FILES):
                path, before = work / f"f{n:03}.txt", b"A" + b"x" * 10_000
                path.write_bytes(b"B" + before[1:])
                changes.append(recorder.record(str(path), before, b"B" + before[1:]))
            plans = plan([FileChangesEntry(changes=changes)])
            start = time.process_time()
            outcome = restore_all(plans, recorder.store, work, force=False)
            timings.append(time.process_time() - start)
            assert len(outcome.restored) == FILES, outcome
    cpu = statistics.median(timings) * 1000
    return (f"  restore of {FILES} files in-process, CPU time", f"{cpu:.0f} ms", "-")


def main() -> list[Row]:
    """Measure every rewind budget; returns (measure, value, budget) rows."""
    return [*_recording(), *_rewind(), _restore_cpu()]


if __name__ == "__main__":
    rows = main()
    width = max(len(row[0]) for row in rows)
    for measure, value, budget in rows:
        print(f"{measure:<{width}}  {value:>12}  {budget}")
