"""One background process of a session: its output, its state, its end.

A :class:`BackgroundProcess` is a ``bash -c`` shell started by a ``bash`` call with
``background: true`` (through :func:`agentd.tools.process.shell.start_shell`: the same
process group, marker, registry entry and death signal as a foreground call, so it is found
and killed the same ways). Its merged stdout and stderr are read on the event loop and go

- to a spill file from the first byte (at most ``spill_max_bytes``, written and redacted by
  the spill writer's thread), the record of everything it printed;
- to a bounded *unread* buffer that ``process_output`` takes (at most ``2 * keep`` bytes; past
  that the oldest unread bytes are dropped and counted in ``skipped``);
- to a bounded tail (the last :data:`TAIL_BYTES`) for exit notes and clients;
- to ``on_output``, throttled (:class:`~agentd.tools.process.output.UpdateThrottle`).

So memory stays bounded whatever the process prints; while too much output waits for the
spill file (a slow disk) reading stops and the process blocks on its pipe. When the shell
ends, what it left running in its group or under its marker is ended too (TERM, then KILL),
its registry entry is dropped and ``on_exit`` is called once.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import re
import signal
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import BinaryIO

from agentd.protocol.processes import ProcessInfo, ProcessState
from agentd.tools.process.output import UpdateThrottle
from agentd.tools.process.proctree import signal_tree, tree_alive
from agentd.tools.process.shell import release, terminate_tree
from agentd.tools.process.spawn import Child
from agentd.tools.process.spill import SpillWriter

TAIL_BYTES = 4096
"""Output kept for the tail shown to clients and in exit notes."""
SHOWN_TAIL_CHARS = 2048
"""The most of the tail a :class:`ProcessInfo` carries."""
EVENT_CHARS = 4096
"""The most output one ``process_output`` event carries (clients show a tail; the spill file
and ``process_output`` reads have the rest)."""
DRAIN_SECONDS = 0.2
"""How long the output pipe may stay open after the shell ended (children holding it)."""
PAUSE_BACKLOG = 256 * 1024
"""Reading stops while more than this waits for the spill file (20 processes: ~5 MiB)."""
RESUME_BACKLOG = 64 * 1024


class _Reader(asyncio.Protocol):
    def __init__(self, process: BackgroundProcess) -> None:
        self.process = process

    def data_received(self, data: bytes) -> None:
        self.process.feed(data)

    def connection_lost(self, exc: Exception | None) -> None:
        self.process.pipe_closed()


Started = tuple[Child, BinaryIO, int, Path | None]


class BackgroundProcess:
    """A started background shell (see the module docstring). All methods on the loop."""

    def __init__(
        self,
        ident: str,
        command: str,
        started: Started,
        *,
        marker: str,
        spill: SpillWriter,
        keep: int,
        on_output: Callable[[str, str], None],
        update_interval: float,
        description: str | None = None,
        tool_call_id: str = "",
    ) -> None:
        self.id = ident
        self.command = command
        self.description = description
        self.tool_call_id = tool_call_id
        self.child, self._pipe, self._cwd_fd, self._entry = started
        self.pid = self.child.pid
        self.marker = marker
        self.spill = spill
        self.started_at = time.time()
        self._started_mono = time.monotonic()
        self._ended_mono: float | None = None
        self.ended_at: float | None = None
        self.state: ProcessState = "running"
        self.exit_code: int | None = None
        self.signal: str | None = None
        self.killed = False
        self.total_bytes = 0
        self.skipped = 0
        """Unread bytes dropped since the last read (the unread buffer was full)."""
        self.exit_seen = False
        """The model was told of the end (a read, a list or an exit note)."""
        self._keep = keep
        self._unread = bytearray()
        self._tail = bytearray()
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._throttle = UpdateThrottle(
            lambda text: on_output(self.id, text), update_interval, EVENT_CHARS
        )
        self._changed = asyncio.Event()
        self._transport: asyncio.ReadTransport | None = None
        self._pipe_done = asyncio.get_running_loop().create_future()
        self._paused = False
        self.ended = asyncio.Event()

    async def attach(self) -> None:
        """Start reading the output pipe."""
        loop = asyncio.get_running_loop()
        self._transport, _ = await loop.connect_read_pipe(lambda: _Reader(self), self._pipe)

    # --- output ------------------------------------------------------------------------------

    def feed(self, data: bytes) -> None:
        self.total_bytes += len(data)
        self.spill.write(data)
        self._unread += data
        if len(self._unread) > 2 * self._keep:
            cut = len(self._unread) - self._keep
            del self._unread[:cut]
            self.skipped += cut
        self._tail += data
        if len(self._tail) > 2 * TAIL_BYTES:
            del self._tail[: len(self._tail) - TAIL_BYTES]
        self._throttle.push(self._decoder.decode(data))
        self._changed.set()
        self._pace()

    def _pace(self) -> None:
        transport = self._transport
        if transport is None or self._paused or self.spill.backlog <= PAUSE_BACKLOG:
            return
        transport.pause_reading()
        self._paused = True
        asyncio.get_running_loop().call_later(0.01, self._resume)

    def _resume(self) -> None:
        transport = self._transport
        if transport is None or transport.is_closing():
            return
        if self.spill.backlog > RESUME_BACKLOG:
            asyncio.get_running_loop().call_later(0.01, self._resume)
            return
        self._paused = False
        transport.resume_reading()

    def pipe_closed(self) -> None:
        if not self._pipe_done.done():
            self._pipe_done.set_result(None)

    def take(self, pattern: re.Pattern[str] | None) -> tuple[str, int]:
        """The unread output (taken), only the lines matching ``pattern`` when given (a
        partial last line then waits for its end while the process runs); and how many
        bytes were dropped unread before it."""
        data = bytes(self._unread)
        if pattern is not None and self.state == "running":
            end = data.rfind(b"\n") + 1
            data = data[:end]
        del self._unread[: len(data)]
        skipped, self.skipped = self.skipped, 0
        text = data.decode("utf-8", "replace")
        if pattern is not None:
            text = "".join(line for line in text.splitlines(True) if pattern.search(line))
        return text, skipped

    def has_unread(self, pattern: re.Pattern[str] | None) -> bool:
        """Whether :meth:`take` would return something now (without taking it)."""
        if pattern is None:
            return bool(self._unread)
        data = bytes(self._unread)
        if self.state == "running":
            data = data[: data.rfind(b"\n") + 1]
        return any(pattern.search(line) for line in data.decode("utf-8", "replace").splitlines())

    async def changed(self, timeout: float) -> None:
        """Until new output or the end, at most ``timeout`` seconds."""
        self._changed.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._changed.wait(), timeout)

    def tail(self, chars: int = SHOWN_TAIL_CHARS) -> str:
        """The last output, at most ``chars`` characters, from a line start when it can."""
        text = bytes(self._tail).decode("utf-8", "replace")
        if len(text) <= chars:
            return text
        cut = text[-chars:]
        newline = cut.find("\n")
        return cut[newline + 1 :] if 0 <= newline < len(cut) - 1 else cut

    # --- state -------------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self.state == "running"

    def state_text(self) -> str:
        """``running``, ``exited N`` or ``killed`` (with the signal when known)."""
        if self.state == "exited":
            return f"exited {self.exit_code}"
        if self.state == "killed":
            return f"killed ({self.signal})" if self.signal else "killed"
        return "running"

    def info(self) -> ProcessInfo:
        end = self._ended_mono if self._ended_mono is not None else time.monotonic()
        return ProcessInfo(
            id=self.id,
            command=self.command,
            description=self.description,
            pid=self.pid,
            state=self.state,
            exit_code=self.exit_code,
            signal=self.signal,
            started_at=round(self.started_at, 3),
            ended_at=None if self.ended_at is None else round(self.ended_at, 3),
            runtime_ms=round((end - self._started_mono) * 1000, 1),
            output_bytes=self.total_bytes,
            spill_path=str(self.spill.path) if self.spill.path else None,
            tail=self.tail(),
            tool_call_id=self.tool_call_id,
        )

    async def kill(self, grace: float) -> None:
        """SIGTERM the group and every process carrying the marker, SIGKILL after ``grace``;
        returns when the process has ended (its :attr:`ended` is set)."""
        if self.running:
            self.killed = True
            await terminate_tree(self.child, grace, self.marker)
        await self.ended.wait()

    async def watch(self, finish: Callable[[], Awaitable[None]]) -> None:
        """Wait for the shell, end what it left, release everything (the spill file is
        complete once the process no longer runs), then ``finish`` (the caller's: rewind
        snapshot, exit event). The process's task; cancelled: SIGKILL."""
        try:
            code = await self.child.wait()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._pipe_done), DRAIN_SECONDS)
            if tree_alive(self.pid, self.marker):
                await terminate_tree(self.child, 0.5, self.marker)
        except asyncio.CancelledError:
            signal_tree(self.pid, self.marker, signal.SIGKILL)
            code = await asyncio.shield(self.child.wait())
            self.killed = True
            await asyncio.shield(self._end(code))
            raise
        await self._end(code)
        await finish()

    async def _end(self, code: int) -> None:
        if self._transport is not None:
            self._transport.close()
        self._pipe.close()
        with contextlib.suppress(OSError):
            os.close(self._cwd_fd)
        self._throttle.push(self._decoder.decode(b"", True))
        self._throttle.close()
        self._ended_mono, self.ended_at = time.monotonic(), time.time()
        await asyncio.to_thread(self._release)
        if code >= 0 and not self.killed:
            self.state, self.exit_code = "exited", code
        else:
            self.state = "killed"
            self.signal = _signal_name(code) if code < 0 else None
            self.exit_code = code if code >= 0 else None
        self._changed.set()
        self.ended.set()

    def _release(self) -> None:
        """In a worker thread: the registry entry dropped, the spill file closed."""
        release(self._entry)
        self.spill.close()


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


__all__ = ["BackgroundProcess", "Started"]
