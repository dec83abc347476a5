"""How an HTTP exchange with a provider fails, independent of the client that made it.

Both of the providers' HTTP clients raise only these: the plain one (:mod:`agentd.providers.http1`
and :mod:`agentd.providers.transport`) directly, the httpx one
(:mod:`agentd.providers.httpx_client`) by translating httpx's exceptions. The providers turn them
into a :class:`~agentd.providers.errors.ProviderFailure` in one place
(:func:`agentd.providers.errors.translating_http_errors`). The message of each is shown to users.
"""

from __future__ import annotations


class HttpFailure(Exception):
    """An HTTP request that did not get a whole response."""


class ConnectFailed(HttpFailure):
    """No connection: refused, unreachable, a name that does not resolve, a TLS handshake or
    certificate refused, or no connection within the connect timeout. Worth retrying."""


class TimedOut(HttpFailure):
    """Connected, but sending the request or receiving the response took longer than its
    timeout. Worth retrying."""


class ConnectionBroken(HttpFailure):
    """The connection failed mid-exchange: a read or write error, a server that closed it
    early, a malformed or truncated response. Worth retrying."""


class RequestRefused(HttpFailure):
    """The request cannot be sent as it is (retrying would not help): a header holding CR,
    LF or NUL. Nothing was written."""


class UnsupportedUrl(HttpFailure):
    """A URL that is malformed or has a scheme other than ``http`` and ``https``."""
