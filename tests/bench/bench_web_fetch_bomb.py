"""What a decompression bomb costs ``web_fetch``: a ``Content-Encoding: gzip, gzip`` body of
about 2 KiB that is 1 GiB decoded, served on loopback by :mod:`tests.tools.webserver`, fetched
with :func:`agentd.tools.net.fetch.fetch` (the 5 MB budget, the decoding in a worker thread)
while a 10 ms ticker runs on the same event loop.

After one ordinary fetch (what the first fetch imports and sets up is not counted):

* ``refused after``: wall time from the request to the refusal ("larger than 5 MB once
  decoded");
* ``longest loop stall``: the longest gap between two ticks beyond their 10 ms (what every
  other client of the daemon would wait at most); budget: well under the 15 s the bomb froze
  the daemon for when httpx decoded it on the loop;
* ``peak memory``: how far the process's peak resident set (``VmHWM``, reset through
  ``/proc/self/clear_refs``) rose during the fetch (budget: a few times the 5 MB budget, not
  the bomb's 1 GiB).

Run: ``python -m tests.bench.bench_web_fetch_bomb`` (or ``python -m tests.bench`` for all).
"""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

Row = tuple[str, str, str]
TICK = 0.01


def _peak_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


async def _measure(url: str) -> tuple[float, float, float, str]:
    """(seconds to the outcome, the longest stall, the peak memory rise in MiB, the outcome)
    of fetching ``url`` after one fetch of the server's small JSON document."""
    import httpx  # noqa: F401  (the daemon's providers have imported it long before)

    from agentd.tools.base import ToolError
    from agentd.tools.net.fetch import fetch

    stalls: list[float] = []

    async def ticker() -> None:
        last = time.monotonic()
        while True:
            await asyncio.sleep(TICK)
            now = time.monotonic()
            stalls.append(now - last - TICK)
            last = now

    with ThreadPoolExecutor(1) as executor:  # a first fetch: imports and TLS set-up done
        await fetch(url.replace("/bomb", "/json"), allow_hosts=["127.0.0.1"], executor=executor)
    ticking = asyncio.create_task(ticker())
    await asyncio.sleep(0.05)
    Path("/proc/self/clear_refs").write_text("5")
    before = _peak_kib()
    started = time.monotonic()
    outcome = "fetched (no refusal)"
    with ThreadPoolExecutor(1) as executor:
        try:
            await fetch(url, allow_hosts=["127.0.0.1"], executor=executor)
        except ToolError as error:
            outcome = str(error)
    elapsed = time.monotonic() - started
    ticking.cancel()
    return elapsed, max(stalls, default=0.0), (_peak_kib() - before) / 1024, outcome


def main() -> list[Row]:
    from tests.e2e.test_web_fetch_bomb import bomb
    from tests.tools.webserver import web_server

    body = bomb()
    with web_server() as server:
        server.encoded["/bomb"] = ("gzip, gzip", body)
        url = f"http://127.0.0.1:{server.server_address[1]}/bomb"
        elapsed, stall, peak, outcome = asyncio.run(_measure(url))
        _, idle_stall, _, _ = asyncio.run(_measure(url.replace("/bomb", "/json")))
    refused = "once decoded" in outcome
    return [
        (
            "a small JSON fetch (reference): longest event-loop stall",
            f"{idle_stall * 1000:.1f} ms",
            "—",
        ),
        (
            f"gzip bomb ({len(body)} B sent, 1 GiB decoded): refused after",
            f"{elapsed * 1000:.0f} ms",
            "refused" if refused else outcome[:40],
        ),
        ("gzip bomb: longest event-loop stall", f"{stall * 1000:.1f} ms", "≪ 15 s"),
        ("gzip bomb: peak memory rise", f"{peak:.1f} MiB", "≤ 50 MiB"),
    ]


if __name__ == "__main__":
    for row in main():
        print(" | ".join(row))
