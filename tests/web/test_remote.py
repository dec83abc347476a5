"""``--allow-remote`` for the web chat: refused without TLS unless ``--insecure-http``; under
TLS the cookie is ``Secure``; a loud warning; the banner names an address other machines reach.

The certificate is made by the ``openssl`` command for this machine's outward address.
"""

from __future__ import annotations

import shutil
import ssl
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from agentd.web.remote import reachable_host
from tests.harness import Home, scaled
from tests.web.conftest import WebDaemon, sign_in

ADDRESS = reachable_host("0.0.0.0")


@pytest.fixture
def home() -> Iterator[Home]:
    box = Home()
    yield box
    box.cleanup()


def serve(home: Home, *args: str) -> subprocess.CompletedProcess[str]:
    """``agentd serve --http …`` expected to refuse at once."""
    return subprocess.run(
        [sys.executable, "-m", "agentd", "serve", "--http", *args],
        env=home.env,
        capture_output=True,
        text=True,
        timeout=scaled(60),
        check=False,
    )


def certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for this machine's address and 127.0.0.1, and its key."""
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is not installed")
    cert, key = folder / "cert.pem", folder / "key.pem"
    names = f"subjectAltName=IP:{ADDRESS},IP:127.0.0.1,DNS:localhost"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"),
            *("-nodes", "-days", "2", "-subj", "/CN=agentd test", "-addext", names),
            *("-keyout", str(key), "-out", str(cert)),
        ],
        check=True,
        capture_output=True,
        timeout=scaled(60),
    )
    return cert, key


def test_a_remote_bind_without_tls_is_refused(home: Home) -> None:
    done = serve(home, "0.0.0.0:0", "--allow-remote")
    assert done.returncode == 1
    assert "without TLS" in done.stderr
    assert "--tls-cert" in done.stderr
    assert "--insecure-http" in done.stderr
    assert "Traceback" not in done.stderr


def test_tls_options_go_together_and_bad_files_are_named(home: Home) -> None:
    alone = serve(home, "127.0.0.1:0", "--tls-cert", str(home.root / "cert.pem"))
    assert alone.returncode == 2
    assert "--tls-cert and --tls-key go together" in alone.stderr
    missing = home.root / "missing.pem"
    bad = serve(home, "127.0.0.1:0", "--tls-cert", str(missing), "--tls-key", str(missing))
    assert bad.returncode == 1
    assert "cannot load the TLS certificate" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_insecure_http_serves_with_a_warning_and_a_reachable_address(home: Home) -> None:
    web = WebDaemon(home, "--allow-remote", "--insecure-http", http="0.0.0.0:0")
    try:
        said = web.log_path.read_text()
        assert f"WARNING: the web chat (http://{ADDRESS}:{web.port})" in said
        assert "accepts browsers from other machines" in said
        assert "WARNING: --insecure-http" in said
        url = urlsplit(web.link)
        assert url.hostname == ADDRESS
        assert url.hostname != "127.0.0.1"
        with web.signed_in() as client:  # through the banner's address, as a remote browser
            assert client.get("/api/hello").status_code == 200
            cookie = client.cookies.jar
            assert not any(c.secure for c in cookie)
    finally:
        web.close()


def test_tls_serves_https_with_secure_cookies(home: Home) -> None:
    cert, key = certificate(home.root)
    extra = ("--allow-remote", "--tls-cert", str(cert), "--tls-key", str(key))
    web = WebDaemon(home, *extra, http="0.0.0.0:0")
    try:
        said = web.log_path.read_text()
        assert "accepts browsers from other machines" in said
        assert "--insecure-http" not in said
        assert web.link.startswith(f"https://{ADDRESS}:")
        trust = ssl.create_default_context(cafile=str(cert))
        with httpx.Client(base_url=web.base, verify=trust, timeout=scaled(30)) as client:
            answer = client.get(web.link)
            assert answer.status_code == 200, answer.text
            assert "Secure" in answer.headers["set-cookie"]
            client.headers["X-Agentd-Key"] = sign_in(client, web.new_link())
            client.headers["Origin"] = web.base
            assert client.post("/api/session/list", json={}).status_code == 200
            plain = {"Origin": web.base.replace("https:", "http:")}
            assert client.post("/api/session/list", json={}, headers=plain).status_code == 403
        with pytest.raises(httpx.HTTPError):  # no cleartext on the TLS port
            httpx.get(web.base.replace("https:", "http:") + "/", timeout=scaled(10))
    finally:
        web.close()


def test_tls_on_loopback(home: Home) -> None:
    cert, key = certificate(home.root)
    web = WebDaemon(home, "--tls-cert", str(cert), "--tls-key", str(key))
    try:
        assert web.link.startswith("https://127.0.0.1:")
        assert "WARNING" not in web.log_path.read_text()
        trust = ssl.create_default_context(cafile=str(cert))
        with httpx.Client(base_url=web.base, verify=trust, timeout=scaled(30)) as client:
            key_value = sign_in(client, web.link)
            hello = client.get("/api/hello", headers={"X-Agentd-Key": key_value})
            assert hello.status_code == 200
    finally:
        web.close()
