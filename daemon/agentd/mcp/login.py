"""Signing in to an OAuth-protected MCP server (``mcp/login``, ``agentctl mcp login NAME``).

:func:`run_login` connects to the server with the whole authorization flow
(:func:`agentd.mcp.oauth.login_auth`); when the flow reaches the browser step, the
authorization URL goes to ``on_url`` (the caller prints or opens it), and the authorization
server's redirect comes back to a :class:`LoopbackReceiver` on ``127.0.0.1`` (RFC 8252),
which answers the browser with a short page and hands the code (with its state, checked by
the SDK) to the flow. The tokens are stored; the server's tools are listed to prove them.

The receiver listens on the port of the redirect registered before for the URL when that port
is free (so the registration stays usable), else on a new port (and the client registers
again). It accepts one ``GET /callback`` with ``code`` (or ``error``); anything else gets a 404.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
from collections.abc import Awaitable, Callable
from urllib.parse import parse_qs, urlsplit

from agentd.mcp.credentials import CredentialStore, PreRegistered
from agentd.mcp.oauth import callback_uri, login_auth, registered_redirect

CALLBACK_PATH = "/callback"
MAX_REQUEST_BYTES = 16 * 1024
PAGE = (
    "<!doctype html><meta charset=utf-8><title>agentd</title>"
    "<body style='font-family:sans-serif'><h1>{title}</h1><p>{text}</p></body>"
)


class LoginFailed(Exception):
    """The login did not end with a token; the text says why."""


class LoopbackReceiver:
    """The redirect's listener on 127.0.0.1 (see the module docstring)."""

    def __init__(self) -> None:
        self.result: asyncio.Future[tuple[str, str | None]] = (
            asyncio.get_running_loop().create_future()
        )
        self._server: asyncio.Server | None = None
        self.port = 0

    @property
    def redirect_uri(self) -> str:
        return callback_uri(self.port)

    async def start(self, preferred: int = 0, fixed: bool = False) -> None:
        """Listen on ``preferred`` if it is free, else (unless ``fixed``) on a port the
        system picks."""
        for port in dict.fromkeys((preferred, 0) if not fixed else (preferred,)):
            try:
                self._server = await asyncio.start_server(self._serve, "127.0.0.1", port)
            except OSError:
                continue
            self.port = self._server.sockets[0].getsockname()[1]
            return
        raise LoginFailed(f"cannot listen on 127.0.0.1:{preferred or 'any port'} for the redirect")

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()

    async def code(self, timeout: float) -> tuple[str, str | None]:
        """The code and state of the redirect (LoginFailed for an error or a timeout)."""
        try:
            return await asyncio.wait_for(asyncio.shield(self.result), timeout)
        except TimeoutError:
            raise LoginFailed(f"no authorization came back within {timeout:g} s") from None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
            status, title, text = self._take(head[:MAX_REQUEST_BYTES].decode("latin-1"))
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError):
            writer.close()
            return
        body = PAGE.format(title=html.escape(title), text=html.escape(text)).encode()
        writer.write(
            f"HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n"
            "Cache-Control: no-store\r\n\r\n".encode()
            + body
        )
        with contextlib.suppress(OSError):
            await writer.drain()
        writer.close()

    def _take(self, head: str) -> tuple[str, str, str]:
        """The answer to one request; a callback settles :attr:`result`."""
        method, _, rest = head.partition(" ")
        target = urlsplit(rest.partition(" ")[0])
        if method != "GET" or target.path != CALLBACK_PATH or self.result.done():
            return "404 Not Found", "Not found", "This address only takes one sign-in."
        query = {key: values[0] for key, values in parse_qs(target.query).items()}
        if "code" not in query:
            why = query.get("error_description") or query.get("error") or "no code was sent"
            self.result.set_exception(LoginFailed(f"the authorization server said: {why}"))
            return "400 Bad Request", "Sign-in failed", why
        self.result.set_result((query["code"], query.get("state")))
        return "200 OK", "Signed in", "agentd has the authorization; you can close this tab."


async def run_login(
    url: str,
    headers: dict[str, str],
    store: CredentialStore,
    on_url: Callable[[str], Awaitable[None]],
    timeout: float,
    client: PreRegistered | None = None,
) -> list[str]:
    """Sign in to the server at ``url`` (see the module docstring); the names of its tools.
    A server that lets agentd in without asking (a valid stored token, or no authorization
    at all) never calls ``on_url``. A pre-registered ``client`` with a callback port gets
    exactly that port. LoginFailed when it does not end with a connection."""
    from mcp.shared.auth import AuthorizationCodeResult

    from agentd.mcp.http import HttpTransport

    receiver = LoopbackReceiver()
    if client is not None and client.callback_port:
        await receiver.start(client.callback_port, fixed=True)
    else:
        registered = None if client else registered_redirect(store, url)
        await receiver.start(urlsplit(registered).port or 0 if registered else 0)

    async def wait_code() -> AuthorizationCodeResult:
        code, state = await receiver.code(timeout)
        return AuthorizationCodeResult(code=code, state=state)

    auth = login_auth(url, store, receiver.redirect_uri, on_url, wait_code, client)
    transport = HttpTransport(url, headers, _Quiet(), auth=auth, store=store)
    try:
        async with contextlib.AsyncExitStack() as stack:
            await transport.open(stack)
            page = await transport.list_tools(None)
    except LoginFailed:
        raise
    except BaseException as exc:
        if not isinstance(exc, Exception):
            raise
        raise LoginFailed(_reason(exc)) from None
    finally:
        await receiver.close()
    return [str(tool.get("name")) for tool in page.get("tools", []) if isinstance(tool, dict)]


def _reason(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, LoginFailed):
        return str(exc)
    text = str(exc) or type(exc).__name__
    return text.splitlines()[0][:500]


class _Quiet:
    """A listener for a login's short connection (nothing to report)."""

    def notified(self, method: str) -> None:
        pass

    def progressed(self, params: object) -> None:
        pass

    def lost(self, reason: str) -> None:
        pass
