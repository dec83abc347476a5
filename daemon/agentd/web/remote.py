"""Serving the web chat beyond this machine (``--allow-remote``): TLS, reachable address, warnings.

The page runs commands as the user, so a non-loopback bind needs ``--allow-remote`` and either
TLS (``--tls-cert``/``--tls-key``: the cookie then carries ``Secure``) or an explicit
``--insecure-http``; the daemon then prints a warning. The link it prints names an address
other machines can reach, not ``127.0.0.1``.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import ssl

WILDCARDS = ("0.0.0.0", "::", "")


class RemoteRefused(Exception):
    """The bind is not allowed as asked (the message says what to pass)."""


@dataclass(frozen=True)
class TlsFiles:
    """A PEM certificate chain and its private key."""

    cert: Path
    key: Path


def check_bind(host: str, *, loopback: bool, allow_remote: bool, tls: bool, insecure: bool) -> None:
    """RemoteRefused for a non-loopback ``host`` without ``allow_remote``, or without TLS
    unless ``insecure``."""
    if loopback:
        return
    if not allow_remote:
        raise RemoteRefused(
            f"refusing to serve HTTP on {host}: not a loopback address "
            "(pass --allow-remote to accept remote browsers)"
        )
    if not tls and not insecure:
        raise RemoteRefused(
            f"refusing to serve the web chat on {host} without TLS: pass --tls-cert and "
            "--tls-key (or --insecure-http to send links and cookies in cleartext)"
        )


def server_context(files: TlsFiles) -> ssl.SSLContext:
    """A TLS 1.2+ server context for ``files``; RemoteRefused when they cannot be loaded."""
    import ssl

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(files.cert, files.key)
    except (OSError, ssl.SSLError) as exc:
        raise RemoteRefused(f"cannot load the TLS certificate or key: {exc}") from None
    return context


def reachable_host(host: str) -> str:
    """The address a link should name: ``host`` itself, or for a wildcard bind this machine's
    outward address (the source address of a route to a public one; no packet is sent), else
    its host name."""
    if host not in WILDCARDS:
        return host
    family, probe = (
        (socket.AF_INET6, "2001:db8::1") if host == "::" else (socket.AF_INET, "192.0.2.1")
    )
    for family_, target in ((family, probe), (socket.AF_INET, "192.0.2.1")):
        try:
            with socket.socket(family_, socket.SOCK_DGRAM) as probe_socket:
                probe_socket.connect((target, 9))
                address = str(probe_socket.getsockname()[0])
        except OSError:
            continue
        if not address.startswith("127.") and address not in ("::1", "0.0.0.0", "::"):
            return address
    return socket.gethostname()


def warnings(origin: str, *, tls: bool) -> list[str]:
    """The lines printed at start for a front-end other machines can reach."""
    lines = [
        f"WARNING: the web chat ({origin}) accepts browsers from other machines "
        "(--allow-remote). It runs commands as you: anyone holding one of its links or a "
        "signed-in page controls this account."
    ]
    if not tls:
        lines.append(
            "WARNING: --insecure-http: links, cookies and every request cross the network "
            "in cleartext. Use --tls-cert/--tls-key."
        )
    return lines
