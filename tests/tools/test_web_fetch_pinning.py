"""web_fetch connects to the address it checked: a name is looked up once per hop (a second,
rebound answer is never used), each redirect hop is looked up and checked again, and an https
fetch to the pinned address still names the host in TLS (SNI) and verifies its certificate.

The lookups go through a scripted resolver (a fake handed to ``fetch``), the connections to
real servers on loopback addresses: 127.0.0.0/8 is all loopback on Linux, so one server on
127.0.0.2 and one on 127.0.0.3 stand for "the address checked" and "the address a rebinding
DNS server would answer next".
"""

from __future__ import annotations

import shutil
import socket
import ssl
import subprocess
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path

import pytest

from agentd.tools.base import ToolError
from agentd.tools.net.fetch import fetch
from tests.harness import scaled
from tests.tools.webserver import _Server, web_server


class RebindingResolver:
    """Answers each lookup with the next address of ``answers`` (the last one repeats) and
    records the names it was asked for."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.asked: list[str] = []

    async def __call__(self, host: str, port: int) -> list[str]:
        self.asked.append(host)
        return [self.answers[min(len(self.asked), len(self.answers)) - 1]]


@contextmanager
def two_servers() -> Iterator[tuple[_Server, _Server]]:
    """Servers on 127.0.0.2 and 127.0.0.3 listening on the same port number."""
    for _ in range(20):
        with ExitStack() as stack:
            checked = stack.enter_context(web_server("127.0.0.2"))
            port = checked.server_address[1]
            try:
                rebound = stack.enter_context(web_server("127.0.0.3", port))
            except OSError:  # that port is taken on 127.0.0.3: try another
                continue
            yield checked, rebound
            return
    pytest.fail("no port free on both 127.0.0.2 and 127.0.0.3")


async def test_one_lookup_per_hop_and_the_checked_address_is_the_one_connected() -> None:
    """The resolver would answer 127.0.0.3 (not allowed) on a second lookup: there is none,
    and the request reaches 127.0.0.2 with the URL's own Host header."""
    resolver = RebindingResolver("127.0.0.2", "127.0.0.3")
    with two_servers() as (checked, rebound):
        port = checked.server_address[1]
        fetched = await fetch(
            f"http://rebind.test:{port}/page", allow_hosts=["127.0.0.2"], resolver=resolver
        )
    assert fetched.status == 200
    assert resolver.asked == ["rebind.test"]
    assert [(path, headers["Host"]) for path, headers in checked.seen] == [
        ("/page", f"rebind.test:{port}")
    ]
    assert rebound.seen == []


async def test_a_redirect_hop_is_looked_up_again_and_a_rebound_answer_is_refused() -> None:
    """The first hop goes to the allowed address; the redirect's lookup now answers the
    other loopback address, which the guard refuses before connecting."""
    resolver = RebindingResolver("127.0.0.2", "127.0.0.3")
    with two_servers() as (checked, rebound):
        port = checked.server_address[1]
        with pytest.raises(ToolError, match=r"rebind\.test \(127\.0\.0\.3\) is a loopback"):
            await fetch(
                f"http://rebind.test:{port}/hop/1", allow_hosts=["127.0.0.2"], resolver=resolver
            )
    assert resolver.asked == ["rebind.test", "rebind.test"]
    assert [path for path, _ in checked.seen] == ["/hop/1"]
    assert rebound.seen == []


@pytest.fixture(scope="module")
def localhost_certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for the name ``localhost`` and its key (``openssl`` is in
    ``.ci/system-packages``)."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed (.ci/system-packages installs it)")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "ec"),
            *("-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2"),
            *("-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost"),
            *("-keyout", str(key), "-out", str(cert)),
        ],
        check=True,
        capture_output=True,
        timeout=scaled(60),
    )
    return cert, key


@contextmanager
def tls_listener(cert: Path, key: Path) -> Iterator[tuple[int, list[str | None]]]:
    """A TLS server on 127.0.0.1 recording the server name (SNI) of each handshake."""
    names: list[str | None] = []
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    context.sni_callback = lambda _sock, name, _ctx: names.append(name)  # type: ignore[assignment,misc,func-returns-value]
    listener = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        with suppress(OSError):
            while True:
                conn, _ = listener.accept()
                with suppress(OSError), context.wrap_socket(conn, server_side=True) as tls:
                    tls.recv(1)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1], names
    finally:
        listener.close()


async def test_https_to_the_pinned_address_names_the_host_and_verifies_it(
    localhost_certificate: tuple[Path, Path],
) -> None:
    """The socket goes to the checked address, yet the TLS server name is ``localhost`` (not
    the address), and an untrusted certificate is refused, not accepted because the
    connection went by address."""
    cert, key = localhost_certificate
    with tls_listener(cert, key) as (port, names), pytest.raises(ToolError, match="VERIFY_FAIL"):
        await fetch(
            f"https://localhost:{port}/page",
            allow_hosts=["localhost"],
            resolver=RebindingResolver("127.0.0.1"),
        )
    assert names == ["localhost"]
