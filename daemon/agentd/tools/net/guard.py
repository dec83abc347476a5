"""The SSRF guard of ``web_fetch``: which URLs and addresses a fetch may reach.

A URL must be ``http`` or ``https``, carry no user name or password, and hold no secret
(credential-shaped values and the daemon's own credential values, :mod:`agentd.redact`).
Its host is resolved once; the address chosen is the one connected to (the caller pins it,
so DNS rebinding between the check and the connection is impossible). Refused: loopback,
private (RFC 1918, ``fc00::/7``), link-local (``169.254/16``, ``fe80::/10``), CGNAT
(``100.64/10``), cloud metadata (``169.254.169.254``, ``fd00:ec2::254``), multicast,
reserved and unspecified addresses, and IPv4 hidden in IPv6 (mapped, 6to4, NAT64) is judged
as the IPv4 address. ``allow_hosts`` patterns (``127.0.0.1``, ``localhost``,
``*.internal.example``, an IP or a CIDR block) lift the guard for the hosts or addresses
they match. Every refusal is a :class:`~agentd.tools.base.ToolError` naming the rule.
"""

from __future__ import annotations

import asyncio
import fnmatch
import ipaddress
import socket
from collections.abc import Awaitable, Callable, Collection, Sequence
from urllib.parse import SplitResult, urlsplit

from agentd.redact import Redactor
from agentd.tools.base import ToolError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_METADATA = frozenset(
    {ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("fd00:ec2::254")}
)
_CGNAT = ipaddress.ip_network("100.64.0.0/10")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")

Resolver = Callable[[str, int], Awaitable[list[str]]]
"""Turns a host name and port into its addresses as text, best first (the system's resolver by
default: :func:`system_resolver`)."""


def check_url(url: str, secrets: Collection[str] = ()) -> SplitResult:
    """The split ``url`` when it may be fetched at all (scheme, no credentials, no secret)."""
    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018 - a bad port raises here
    except ValueError as error:
        raise ToolError(f"Invalid URL {url!r}: {error}.") from None
    if parts.scheme not in ("http", "https"):
        raise ToolError(
            f"Refused: only http and https URLs can be fetched (got {parts.scheme or 'none'!r})."
        )
    if not parts.hostname:
        raise ToolError(f"Invalid URL {url!r}: it has no host.")
    if parts.username is not None or parts.password is not None:
        raise ToolError(
            "Refused: the URL carries a user name or password; credentials are never sent."
        )
    if Redactor(secrets).text(url) != url:
        raise ToolError(
            "Refused: the URL contains what looks like a secret (a key, token or password, or "
            "a credential value of this environment); secrets are never sent."
        )
    return parts


def host_allowed(host: str, allow_hosts: Sequence[str]) -> bool:
    """Whether ``host`` (a name or an address) matches an ``allow_hosts`` pattern: a glob on
    names (``*.internal.example``), an address or a CIDR block."""
    host = host.lower().strip("[]").rstrip(".")
    address = _address(host)
    for pattern in allow_hosts:
        pattern = pattern.lower().strip().strip("[]").rstrip(".")
        if address is not None and "/" in pattern:
            try:
                if address in ipaddress.ip_network(pattern, strict=False):
                    return True
            except ValueError:
                pass
        if fnmatch.fnmatchcase(host, pattern):
            return True
    return False


def refusal(address: IPAddress) -> str | None:
    """Why ``address`` may not be connected to (the rule's name), or None when public."""
    address = _embedded_ipv4(address) or address
    if address in _METADATA:
        return "a cloud metadata address"
    if address.is_loopback:
        return "a loopback address"
    if address.is_link_local:
        return "a link-local address"
    if isinstance(address, ipaddress.IPv4Address) and address in _CGNAT:
        return "a carrier-grade NAT (100.64.0.0/10) address"
    if address.is_private:
        return "a private-network address"
    if address.is_unspecified or address.is_multicast or address.is_reserved:
        return "a reserved, multicast or unspecified address"
    if not address.is_global:
        return "a non-public address"
    return None


async def system_resolver(host: str, port: int) -> list[str]:
    """The addresses ``getaddrinfo`` gives for ``host`` (TCP), in its order."""
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as error:
        raise ToolError(f"Cannot resolve {host}: {error.strerror}.") from None
    return [str(info[4][0]) for info in infos]


async def resolve(
    host: str, port: int, allow_hosts: Sequence[str], resolver: Resolver = system_resolver
) -> str:
    """The address to connect to for ``host``: resolved once (by ``resolver``), checked,
    returned as text.

    The first address the resolver gives is the one used; when it is not public and neither
    the host name nor the address is allowed, :class:`ToolError` names the rule.
    """
    literal = _address(host.strip("[]"))
    addresses = [str(literal)] if literal is not None else await resolver(host, port)
    if not addresses:
        raise ToolError(f"Cannot resolve {host}: no address.")
    chosen = addresses[0]
    reason = refusal(ipaddress.ip_address(chosen.split("%", 1)[0]))
    if reason is not None and not (
        host_allowed(host, allow_hosts) or host_allowed(chosen, allow_hosts)
    ):
        shown = host if host == chosen else f"{host} ({chosen})"
        raise ToolError(
            f"Refused by the SSRF guard: {shown} is {reason}. Only public addresses are "
            "fetched unless `[tools.web_fetch] allow_hosts` in the configuration lists the host."
        )
    return chosen


def _address(text: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def _embedded_ipv4(address: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address inside an IPv6 one (mapped, 6to4, NAT64), if any."""
    if not isinstance(address, ipaddress.IPv6Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None
