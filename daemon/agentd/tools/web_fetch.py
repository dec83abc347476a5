"""The ``web_fetch`` tool: one web page (or text/JSON document) as Markdown for the model.

GET over httpx through the SSRF guard (:mod:`agentd.tools.net.guard`, every redirect hop
checked on the address actually connected, :mod:`agentd.tools.net.fetch`), at most 5
redirects, 15 s, 5 MB; HTML becomes Markdown, text and JSON pass through, binary is refused
(:mod:`agentd.tools.net.convert`). A result past the output limits keeps its start and the
whole text goes to a spill file the model can ``read``. ``prompt`` (what the model wants from
the page) is shown above the content, and when the page is cut, the passages of the cut part
that match it are kept too (:mod:`agentd.tools.net.passages`: word overlap, no second model).

Memory: pages are decoded and converted in one thread (one malloc arena), and after a large
page the memory its conversion freed is handed back to the system
(:mod:`agentd.tools.net.heap`), so the daemon does not keep the converter's peak working set.
That thread ends with the sessions (:func:`close_converter`, through
:func:`agentd.tools.close_workers`).

Permissions: it does not change files, but it reaches the network (``network`` below), and a
URL can carry whatever the session has read: ``ask`` and ``read-only`` sessions ask (refused
when no client can answer), unless a rule ``web_fetch(domain:HOST)`` allows the host.
"""

from __future__ import annotations

import asyncio
import os
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Annotated, ClassVar

import msgspec

from agentd.protocol.events import Location, ToolKind
from agentd.protocol.tool_details import WebFetchDetails
from agentd.tools.base import ToolContext, ToolResult
from agentd.tools.files.truncate import Limits, notice, truncate_head
from agentd.tools.net.passages import matching_passages
from agentd.tools.process.spill import fallback_dir, open_spill

FETCH_TIMEOUT = 15.0
FETCH_MAX_BYTES = 5 * 1024 * 1024


class WebFetchParams(msgspec.Struct, forbid_unknown_fields=True):
    url: Annotated[str, msgspec.Meta(description="The http(s) URL to fetch.")]
    prompt: Annotated[
        str | None,
        msgspec.Meta(
            description=(
                "What you want from the page: shown with its content, and on a page too long "
                "to return whole, the passages matching it are kept from the part cut off."
            )
        ),
    ] = None


class WebFetchTool:
    name: ClassVar[str] = "web_fetch"
    description: ClassVar[str] = (
        "Fetch a public web page or document by URL (http/https, GET) and read it: HTML comes "
        "back as Markdown (headings, lists, links, code, tables), text and JSON as they are; "
        "binary files are refused. At most 5 redirects, 15 s and 5 MB; the result is cut at "
        "{max_lines} lines or {max_kb} KB with the full text saved to a file you can read. "
        "Local and private-network addresses are refused, and nothing secret may be in the URL."
    )
    Params: ClassVar[type[WebFetchParams]] = WebFetchParams
    kind: ClassVar[ToolKind] = "read"
    mutating: ClassVar[bool] = False
    network: ClassVar[bool] = True
    """Reaches outside the machine: asks in ``ask`` and ``read-only`` although it does not
    mutate."""

    def locations(self, params: WebFetchParams, ctx: ToolContext) -> list[Location]:
        return []

    async def run(self, params: WebFetchParams, ctx: ToolContext) -> ToolResult:
        from agentd.tools.net.convert import media_type, to_text
        from agentd.tools.net.fetch import fetch
        from agentd.tools.net.heap import TRIM_FROM_BYTES, release_free_memory

        started = time.monotonic()
        secrets = [v for name in ctx.settings.secret_env if (v := os.environ.get(name))]
        fetched = await fetch(
            params.url,
            allow_hosts=ctx.settings.web_fetch_allow_hosts,
            secrets=secrets,
            timeout=FETCH_TIMEOUT,
            max_bytes=FETCH_MAX_BYTES,
            executor=_converter(),
        )
        loop = asyncio.get_running_loop()
        text, kind = await loop.run_in_executor(
            _converter(), to_text, fetched.body, fetched.content_type
        )
        head = f"{fetched.url} (HTTP {fetched.status}, {kind})\n"
        if params.prompt:
            head += f"Looking for: {params.prompt}\n"
        body, spill_path = await _limited(text, ctx, params.prompt)
        details = WebFetchDetails(
            url=fetched.url,
            status=fetched.status,
            content_type=media_type(fetched.content_type),
            format="markdown" if kind == "markdown" else "text",
            bytes=len(fetched.body),
            redirects=fetched.redirects,
            duration_ms=round((time.monotonic() - started) * 1000, 1),
            truncated=body is not text,
            spill_path=spill_path,
        )
        result = ToolResult(head + "\n" + body, details, is_error=fetched.status >= 400)
        del fetched, text, body  # the page's copies, freed before the trim below
        if details.bytes >= TRIM_FROM_BYTES:
            await loop.run_in_executor(_converter(), release_free_memory)
        return result


def _converter() -> ThreadPoolExecutor:
    """The one thread that converts pages, writes their spill files and trims the heap: off
    the event loop, and one thread's malloc arena (a thread per call would give each its
    own arena, and the daemon's memory would grow with every page)."""
    global _CONVERTER
    if _CONVERTER is None:
        _CONVERTER = ThreadPoolExecutor(1, thread_name_prefix="agentd-web-fetch")
    return _CONVERTER


_CONVERTER: ThreadPoolExecutor | None = None


def close_converter() -> None:
    """End the converter thread (it finishes the job it is on, without waiting here); the
    next fetch starts a new one. Its worker is not a daemon thread, so a process that exits
    waits for it: every owner of sessions calls this when it closes them."""
    global _CONVERTER
    converter, _CONVERTER = _CONVERTER, None
    if converter is not None:
        converter.shutdown(wait=False, cancel_futures=True)


async def _limited(text: str, ctx: ToolContext, prompt: str | None) -> tuple[str, str | None]:
    """``text`` within the result limits (``text`` itself when it fits); past them its start
    (three quarters of the limits when a ``prompt`` may pick passages from the rest for the
    last quarter), and the whole in a spill file whose path comes second (None: none
    written)."""
    limits = Limits.from_settings(ctx.settings)
    cut = truncate_head(text, limits)
    if not cut.truncated:
        return text, None
    passages: list[str] = []
    if prompt:
        head_limits = Limits(limits.max_lines * 3 // 4, limits.max_bytes * 3 // 4)
        cut = truncate_head(text, head_limits)
        passages = matching_passages(text[len(cut.text) :], prompt, limits.max_bytes // 4)
    message = notice(cut, kept="first", limits=limits)
    path = await asyncio.get_running_loop().run_in_executor(_converter(), _spill, text, ctx)
    if path is not None:
        message += f" The whole page is in {path}: read it with an offset to see the rest."
    found = ""
    if passages:
        found = "\n\n[Passages matching the prompt from the rest of the page:]\n\n"
        found += "\n\n".join(passages)
    return f"{cut.text}{found}\n\n[{message}]", path


def _spill(text: str, ctx: ToolContext) -> str | None:
    """Write ``text`` (redacted) to a new spill file of the session; its path, or None."""
    directory = ctx.spill_dir or fallback_dir() / (ctx.session_id or "default")
    data = (ctx.redact(text) if ctx.redact else text).encode("utf-8", "replace")
    try:
        handle, path = open_spill(directory, ctx.settings.bash_spill_keep)
        with handle:
            handle.write(data)
    except OSError:
        return None
    return str(path)
