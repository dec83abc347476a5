"""Socket squatting: another local user impersonates the shared daemon.

Without ``XDG_RUNTIME_DIR`` the socket lives in ``/tmp/agentd-$UID``, a name any local user can
take first. Here a second uid (``nobody``, so the tests need root) plays the attacker: it
creates the folder, listens on ``agentd.sock`` inside and answers ``initialize`` as agentd
would, recording every byte it receives. A client that trusted it would go on to send its
session request, provider keys included (``providerEnv``).

Two squats are tried against every client (``agentctl send``, ``agentctl bridge``, and the
library's ``connect_unix`` the ACP front-end uses):

``folder``
    the attacker's own folder (owned by ``nobody``, open to all): refused before connecting;
``peer``
    a private folder of the user in which the attacker's listening socket was placed (the
    folder check passes): refused after connecting, on ``SO_PEERCRED``, before a byte is sent.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator

import pytest

from agentd import paths
from agentd.rpc import connect_unix
from tests.harness import IsolatedHome, scaled
from tests.security.squat import KEY, NOBODY, Squat, shared_tmp

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="a second uid needs root")


@pytest.fixture
def box() -> Iterator[IsolatedHome]:
    home = IsolatedHome()
    try:
        yield home
    finally:
        home.cleanup()


@pytest.fixture(params=["folder", "peer"])
def squat(request: pytest.FixtureRequest, box: IsolatedHome) -> Iterator[tuple[str, Squat]]:
    """A fake daemon and the socket path the victim is given (see the module docstring)."""
    fake = Squat(shared_tmp(box.root))
    try:
        if request.param == "folder":
            yield "folder", fake
        else:
            private = box.root / "private"
            private.mkdir(mode=0o700)
            moved = private / "agentd.sock"
            fake.socket.rename(moved)  # the listener keeps serving under its new name
            fake.socket = moved
            yield "peer", fake
    finally:
        if fake.process.poll() is None:
            fake.process.kill()
            fake.process.wait()


def _victim_env(box: IsolatedHome) -> dict[str, str]:
    env = dict(box.env, OPENAI_API_KEY=KEY, ANTHROPIC_API_KEY=KEY)
    env.pop("XDG_RUNTIME_DIR")
    return env


def _assert_refused(kind: str, fake: Squat, stderr: str) -> None:
    assert "refusing to" in stderr, stderr
    if kind == "folder":
        assert f"belongs to uid {NOBODY}" in stderr
        assert fake.received(0) == []  # not even a connection
    else:
        assert f"runs as uid {NOBODY}" in stderr
        assert fake.received(1) == [""]  # connected, checked, closed: nothing sent


@needs_root
def test_agentctl_send_refuses_a_squatted_socket(
    box: IsolatedHome, squat: tuple[str, Squat]
) -> None:
    """``agentctl send`` with provider keys in its environment sends the fake nothing and
    starts no daemon of its own there."""
    kind, fake = squat
    result = subprocess.run(
        [sys.executable, "-m", "agentctl", "send", "--socket", str(fake.socket), "hello"],
        env=_victim_env(box),
        cwd=box.project,
        capture_output=True,
        text=True,
        timeout=scaled(60),
        check=False,
    )
    assert result.returncode != 0
    assert KEY not in result.stdout
    _assert_refused(kind, fake, result.stderr)


@needs_root
def test_the_bridge_refuses_a_squatted_socket(box: IsolatedHome, squat: tuple[str, Squat]) -> None:
    """``agentctl bridge`` (the editors' way in) exits 1 with the reason and relays nothing."""
    kind, fake = squat
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
    result = subprocess.run(
        [sys.executable, "-m", "agentctl", "bridge", "--socket", str(fake.socket)],
        env=_victim_env(box),
        input=json.dumps(request) + "\n",
        capture_output=True,
        text=True,
        timeout=scaled(60),
        check=False,
    )
    assert result.returncode == 1
    assert result.stdout == ""
    _assert_refused(kind, fake, result.stderr)


@needs_root
async def test_connect_unix_refuses_a_squatted_socket(squat: tuple[str, Squat]) -> None:
    """The library's ``connect_unix`` (the ACP front-end's ``--shared`` path) raises
    :class:`UnsafeSocketError` — a PermissionError, so it is never mistaken for "nobody
    listens" and no daemon is started in its place."""
    kind, fake = squat
    with pytest.raises(paths.UnsafeSocketError) as raised:
        await connect_unix(fake.socket)
    assert isinstance(raised.value, PermissionError)
    _assert_refused(kind, fake, str(raised.value))


def test_a_folder_others_can_write_is_refused_even_when_it_is_ours(
    box: IsolatedHome, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The user's own folder is refused when group or others may write to it (anyone could
    have put the socket there), with the command that fixes it; the default folder must be
    0700 exactly, as the daemon makes it."""
    folder = box.root / "custom"
    folder.mkdir(mode=0o700)
    sock_path = folder / "agentd.sock"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(sock_path))
        server.listen(1)
        paths.check_socket_folder(sock_path)
        folder.chmod(0o755)  # readable by others: nobody else can create anything in it
        paths.check_socket_folder(sock_path)
        for mode in (0o775, 0o757, 0o1777):
            folder.chmod(mode)
            with pytest.raises(paths.UnsafeSocketError, match=f"chmod 700 {folder}"):
                paths.check_socket_folder(sock_path)
        folder.chmod(0o700)
        with socket.socket(socket.AF_UNIX) as ours:
            ours.connect(str(sock_path))
            paths.check_socket_peer(ours, sock_path)  # our own listener passes
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(box.root))
    default = paths.default_socket_path()
    default.parent.mkdir(mode=0o750)
    with pytest.raises(paths.UnsafeSocketError, match="is open to other users \\(mode 0750\\)"):
        paths.check_socket_folder(default)
    default.parent.chmod(0o700)
    with pytest.raises(FileNotFoundError):  # private, nobody listens: a client may start one
        paths.check_socket_folder(default.parent / "missing" / "agentd.sock")
