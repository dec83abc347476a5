"""``process_output``, ``process_kill`` and ``process_list``: the session's background
processes (started by ``bash`` with ``background: true``) as the model reads and ends them.

None of them changes a file, so none asks for approval; each acts only on the processes of
its own session (:class:`~agentd.tools.process.table.ProcessTable`, the ``processes`` port).
"""

from __future__ import annotations

import re
import time
from typing import Annotated, ClassVar

import msgspec

from agentd.protocol.events import Location, ToolKind
from agentd.protocol.processes import ProcessDetails, ProcessListDetails
from agentd.tools.base import ToolContext, ToolError, ToolResult
from agentd.tools.files.truncate import Limits, truncate_tail
from agentd.tools.process.background import BackgroundProcess
from agentd.tools.process.table import ProcessRefused, ProcessTable

MAX_WAIT_MS = 600_000
"""The longest ``wait_ms`` (10 minutes)."""
MAX_FILTER_CHARS = 500


def _table(ctx: ToolContext) -> ProcessTable:
    if ctx.processes is None:
        raise ToolError("This session has no background processes.")
    return ctx.processes


def _process(ctx: ToolContext, ident: str) -> BackgroundProcess:
    try:
        return _table(ctx).get(ident)
    except ProcessRefused as refused:
        raise ToolError(str(refused)) from None


class ProcessOutputParams(msgspec.Struct, forbid_unknown_fields=True):
    id: Annotated[str, msgspec.Meta(description="The process id bash returned, e.g. p1.")]
    wait_ms: Annotated[
        Annotated[int, msgspec.Meta(ge=0, le=MAX_WAIT_MS)] | None,
        msgspec.Meta(description="Wait up to this many ms for new (matching) output or the end."),
    ] = None
    filter: Annotated[
        Annotated[str, msgspec.Meta(max_length=MAX_FILTER_CHARS)] | None,
        msgspec.Meta(description="A Python regex: keep only the lines it matches."),
    ] = None
    tail: Annotated[
        Annotated[int, msgspec.Meta(ge=1)] | None,
        msgspec.Meta(description="Keep only the last N lines."),
    ] = None


class ProcessOutputTool:
    name: ClassVar[str] = "process_output"
    description: ClassVar[str] = (
        "Read the output of a background process (started by bash with background: true) "
        "since the last read, stdout and stderr interleaved, and its state (`running`, "
        "`exited N`, `killed`). `wait_ms` waits for new output (matching `filter`, when "
        "given) or the end; `filter` keeps the lines a regex matches; `tail` the last N "
        "lines. At most {max_lines} lines or {max_kb} KB per read; the whole output is in "
        "the process's spill file."
    )
    Params: ClassVar[type[ProcessOutputParams]] = ProcessOutputParams
    kind: ClassVar[ToolKind] = "read"
    mutating: ClassVar[bool] = False

    def locations(self, params: ProcessOutputParams, ctx: ToolContext) -> list[Location]:
        return []

    async def run(self, params: ProcessOutputParams, ctx: ToolContext) -> ToolResult:
        process = _process(ctx, params.id)
        pattern = _compile(params.filter)
        if params.wait_ms:
            await _wait(process, pattern, params.wait_ms / 1000)
        text, skipped = process.take(pattern)
        if params.tail is not None:
            text = "".join(text.splitlines(True)[-params.tail :])
        limits = Limits.from_settings(ctx.settings)
        cut = truncate_tail(text, limits)
        skipped += len(text.encode("utf-8", "replace")) - len(cut.text.encode("utf-8", "replace"))
        parts = [cut.text.removesuffix("\n") or "(no new output)"]
        if skipped > 0:
            where = process.spill.path or "no file (it could not be written)"
            parts.append(f"[{skipped} bytes of output not shown; the whole output is in {where}.]")
        parts.append(_status(process))
        if not process.running:
            process.exit_seen = True
        return ToolResult(
            "\n".join(parts), ProcessDetails(process=process.info(), skipped_bytes=skipped)
        )


class ProcessKillParams(msgspec.Struct, forbid_unknown_fields=True):
    id: Annotated[str, msgspec.Meta(description="The process id, e.g. p1.")]


class ProcessKillTool:
    name: ClassVar[str] = "process_kill"
    description: ClassVar[str] = (
        "Stop a background process of this session: SIGTERM to its process group and "
        "everything it started, SIGKILL after a grace period. Returns when it has ended."
    )
    Params: ClassVar[type[ProcessKillParams]] = ProcessKillParams
    kind: ClassVar[ToolKind] = "execute"
    mutating: ClassVar[bool] = False

    def locations(self, params: ProcessKillParams, ctx: ToolContext) -> list[Location]:
        return []

    async def run(self, params: ProcessKillParams, ctx: ToolContext) -> ToolResult:
        process = _process(ctx, params.id)
        was_running = process.running
        await process.kill(ctx.settings.bash_kill_grace)
        process.exit_seen = True
        lead = "Stopped" if was_running else "Already ended:"
        return ToolResult(f"{lead} {_status(process)}", ProcessDetails(process=process.info()))


class ProcessListParams(msgspec.Struct, forbid_unknown_fields=True):
    pass


class ProcessListTool:
    name: ClassVar[str] = "process_list"
    description: ClassVar[str] = (
        "List this session's background processes: id, state, runtime, output size and command."
    )
    Params: ClassVar[type[ProcessListParams]] = ProcessListParams
    kind: ClassVar[ToolKind] = "read"
    mutating: ClassVar[bool] = False

    def locations(self, params: ProcessListParams, ctx: ToolContext) -> list[Location]:
        return []

    async def run(self, params: ProcessListParams, ctx: ToolContext) -> ToolResult:
        table = _table(ctx)
        processes = list(table.processes.values())
        for process in processes:
            if not process.running:
                process.exit_seen = True
        lines = [_row(process) for process in processes]
        text = "\n".join(lines) if lines else "No background processes in this session."
        return ToolResult(text, ProcessListDetails(processes=table.infos()))


def _compile(source: str | None) -> re.Pattern[str] | None:
    if source is None or source == "":
        return None
    try:
        return re.compile(source)
    except re.error as error:
        raise ToolError(f"The filter is not a valid regex: {error}.") from None


async def _wait(
    process: BackgroundProcess, pattern: re.Pattern[str] | None, seconds: float
) -> None:
    deadline = time.monotonic() + seconds
    while process.running and not process.has_unread(pattern):
        left = deadline - time.monotonic()
        if left <= 0:
            return
        await process.changed(left)


def _status(process: BackgroundProcess) -> str:
    info = process.info()
    return (
        f"[{process.id}: {process.state_text()}, {info.runtime_ms / 1000:.1f} s, "
        f"{info.output_bytes} bytes of output]"
    )


def _row(process: BackgroundProcess) -> str:
    info = process.info()
    command = " ".join(process.command.split())
    about = f" ({process.description})" if process.description else ""
    return (
        f"{process.id}\t{process.state_text()}\t{info.runtime_ms / 1000:.1f} s\t"
        f"{info.output_bytes} B\t{command}{about}"
    )
