"""The bounded outbound queue of one connection and its single writer task.

Policy (documented in ``schemas/README.md``):

* :meth:`Outbox.put` never blocks. When nothing is queued and the transport's buffer is below
  its high-water mark, the frame is written directly: the first frame of an event-loop step
  at once (no added latency), the frames that follow it in the same step collected and handed
  to the transport together right after the step (one system call instead of one per frame).
  Otherwise the frame is queued and the writer task writes queued frames in batches, awaiting
  ``drain()`` after each.
* The queue's soft bound is ``max_frames`` frames or ``max_bytes`` bytes, counting the frames
  the writer has handed to the transport that the peer has not taken yet (a burst moved to the
  transport in one batch still counts until ``drain()`` returns). Reaching it starts a grace
  period of ``stall_timeout`` seconds; if the queue is still at or over the bound when the
  grace period ends, the connection is dropped. Frames keep being queued during the grace
  period; only ``2 * max_bytes`` bytes (queued or handed to the transport: the memory guard)
  drops it at once. A burst from a producer that has not yielded yet is therefore harmless
  when the writer catches up within the grace period.
* :meth:`Outbox.drained` lets a producer of many frames (a session's replay) pace itself:
  it returns once nothing is queued and the transport's buffer is at or below its high-water
  mark, so such a producer never fills the queue and the other frames of the connection and
  of the loop keep flowing.
* A write error (peer gone) also drops the connection. Dropping is reported through
  ``on_broken(reason)``; the owner closes the connection and logs why.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable

QUEUE_FRAMES = 10_000
"""Default soft bound on queued frames per connection."""
QUEUE_BYTES = 64 * 1024 * 1024
"""Default soft bound on queued bytes per connection."""
STALL_TIMEOUT = 10.0
"""Default grace period (seconds) for a connection whose queue is full."""


class Outbox:
    """Frames waiting to be written to one stream, with the stall policy above."""

    def __init__(
        self,
        writer: asyncio.StreamWriter,
        on_broken: Callable[[str], None],
        *,
        max_frames: int = QUEUE_FRAMES,
        max_bytes: int = QUEUE_BYTES,
        stall_timeout: float = STALL_TIMEOUT,
    ) -> None:
        self._writer = writer
        self._transport = writer.transport
        self._high_water = self._transport.get_write_buffer_limits()[1]
        self._on_broken = on_broken
        self._max_frames = max_frames
        self._max_bytes = max_bytes
        self._stall_timeout = stall_timeout
        self._frames: deque[bytes] = deque()
        self._bytes = 0
        self._direct: list[bytes] = []
        self._direct_bytes = 0
        self._flush_handle: asyncio.Handle | None = None
        self._wake = asyncio.Event()
        self._emptied = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._stall_timer: asyncio.TimerHandle | None = None
        self._unsent = 0
        """Frames of the batch in the transport whose ``drain()`` has not returned yet."""
        self._unsent_bytes = 0
        self._finishing = False
        self.broken = False
        self.bytes_out = 0
        """Bytes of every frame handed over for writing (``daemon/metrics``)."""

    @property
    def queued(self) -> int:
        """Number of frames waiting in the queue (not counting the transport's buffer)."""
        return len(self._frames)

    async def drained(self) -> None:
        """Until nothing is queued and the transport's buffer is at or below its high-water
        mark, or the outbox broke. Always yields to the event loop once (the frames collected
        in this step reach the transport first)."""
        await asyncio.sleep(0)
        while not self.broken and not self._transport.is_closing():
            if self._frames:
                self._emptied.clear()
                await self._emptied.wait()
            elif self._transport.get_write_buffer_size() <= self._high_water:
                return
            else:  # above the mark the transport is paused: drain() waits for it to resume
                try:
                    await self._writer.drain()
                except (ConnectionError, OSError):
                    return

    def put(self, frame: bytes) -> None:
        """Queue ``frame`` for writing. Never blocks; ignored once the outbox is broken."""
        if self.broken:
            return
        if self._transport.is_closing():
            self._break("connection lost")
            return
        self.bytes_out += len(frame)
        if (
            not self._frames
            and self._transport.get_write_buffer_size() + self._direct_bytes < self._high_water
        ):
            if self._flush_handle is None:
                self._writer.write(frame)
                self._flush_handle = asyncio.get_running_loop().call_soon(self._flush_direct)
            else:
                self._direct.append(frame)
                self._direct_bytes += len(frame)
            return
        self._frames.append(frame)
        self._bytes += len(frame)
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run())
        self._wake.set()
        pending = self._bytes + self._unsent_bytes
        if pending >= 2 * self._max_bytes:
            self._break(f"outbound queue overflow ({pending} bytes queued)")
        elif self._stall_timer is None and self._over_bound():
            loop = asyncio.get_running_loop()
            self._stall_timer = loop.call_later(self._stall_timeout, self._check_stall)

    def _flush_direct(self) -> None:
        """Hand the frames collected for direct writing to the transport, in one write."""
        self._flush_handle = None
        frames, self._direct, self._direct_bytes = self._direct, [], 0
        if frames and not self._transport.is_closing():
            self._writer.write(b"".join(frames) if len(frames) > 1 else frames[0])

    def _over_bound(self) -> bool:
        frames = len(self._frames) + self._unsent
        pending = self._bytes + self._unsent_bytes
        return frames >= self._max_frames or pending >= self._max_bytes

    def _check_stall(self) -> None:
        self._stall_timer = None
        if self._over_bound():
            self._break(
                f"client stopped reading: {len(self._frames) + self._unsent} frames still queued "
                f"after {self._stall_timeout:g} s"
            )

    def _clear_stall(self) -> None:
        if self._stall_timer is not None and not self._over_bound():
            self._stall_timer.cancel()
            self._stall_timer = None

    async def _run(self) -> None:
        try:
            while True:
                while not self._frames:
                    if self._finishing:
                        return
                    self._wake.clear()
                    await self._wake.wait()
                batch = list(self._frames)
                self._frames.clear()
                self._unsent, self._unsent_bytes = len(batch), self._bytes
                self._bytes = 0
                self._flush_direct()  # frames put before any queued one go first
                self._writer.writelines(batch)
                await self._writer.drain()
                self._unsent = self._unsent_bytes = 0
                self._clear_stall()
                if not self._frames:
                    self._emptied.set()
        except (ConnectionError, OSError) as exc:
            self._break(f"write failed: {exc}")

    def _break(self, reason: str) -> None:
        if self.broken:
            return
        self.abort()
        self._on_broken(reason)

    def abort(self) -> None:
        """Drop queued frames and abort the transport (no flush)."""
        self.broken = True
        self._emptied.set()
        self._frames.clear()
        self._bytes = 0
        self._direct, self._direct_bytes = [], 0
        if self._flush_handle is not None:
            self._flush_handle.cancel()
            self._flush_handle = None
        if self._stall_timer is not None:
            self._stall_timer.cancel()
            self._stall_timer = None
        if self._task is not None and self._task is not asyncio.current_task():
            self._task.cancel()
        try:
            self._transport.abort()
        except AttributeError:  # asyncio's pipe transport, aborted after it lost its pipe
            if not self._transport.is_closing():
                raise

    async def close(self, timeout: float) -> None:
        """Write what is queued (waiting at most ``timeout`` seconds), then close the stream.

        A peer that does not take the remaining bytes in time gets the transport aborted.
        """
        self._finishing = True
        self._wake.set()
        if not self.broken:
            self._flush_direct()
        try:
            async with asyncio.timeout(timeout):
                if self._task is not None:
                    await asyncio.wait({self._task})
                if not self.broken:
                    await self._writer.drain()
                    self._writer.close()
                    await self._writer.wait_closed()
        except TimeoutError:
            self.abort()
        except (ConnectionError, OSError):
            self.broken = True
        if self._stall_timer is not None:
            self._stall_timer.cancel()
            self._stall_timer = None
