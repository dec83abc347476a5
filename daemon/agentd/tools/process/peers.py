"""Recognising a tool process at the other end of one of the daemon's own connections.

The sandbox keeps commands off the daemon's socket and ports; this is the defence behind it.
A process the daemon started for a session (a bash call, a hook, an MCP server's child) must
not drive the daemon: it could open an unsandboxed session, or answer approvals. So a peer
is refused when :func:`tool_reason` finds that it, or one of its ancestors, carries a tool-run
marker (:data:`~agentd.tools.process.proctree.MARKER_VAR`) or is the daemon itself.

A Unix-socket peer's pid comes from ``SO_PEERCRED``. A TCP peer on loopback is found by
:func:`tcp_peer_pids`: its socket in ``/proc/net/tcp`` / ``tcp6`` (the connection's two
ends), then the processes holding that socket (``/proc/PID/fd``). Both read ``/proc`` and
block: call them off the event loop.

What escapes: a process that left the marker behind (``env -i``) *and* whose parent chain no
longer leads to a marked process or to the daemon (double-forked to init) — the seccomp
filter and the namespaces stop such a process first.
"""

from __future__ import annotations

import ipaddress
import os
import sys

from agentd.tools.process.proctree import MARKER_VAR, PROC

MAX_HOPS = 64


def tool_reason(pid: int) -> str | None:
    """Why ``pid`` counts as a tool process (None: it does not, or it is gone)."""
    needle = f"{MARKER_VAR}=".encode()
    daemon = os.getpid()
    current = pid
    for _ in range(MAX_HOPS):
        if current <= 1:
            return None
        if current == daemon:
            return None if current == pid else "it was started by the daemon"
        if _has_marker(current, needle):
            return "it runs inside a tool call of a session"
        parent = _parent(current)
        if parent is None:
            return None
        current = parent
    return None


def _has_marker(pid: int, needle: bytes) -> bool:
    try:
        data = (PROC / str(pid) / "environ").read_bytes()
    except OSError:
        return False
    return any(item.startswith(needle) for item in data.split(b"\0"))


def _parent(pid: int) -> int | None:
    try:
        stat = (PROC / str(pid) / "stat").read_bytes()
        return int(stat.rsplit(b")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def tcp_peer_pids(peer: tuple[str, int], local: tuple[str, int]) -> set[int]:
    """The pids holding the local TCP socket whose address is ``peer`` and that is
    connected to ``local`` (this daemon's end). Empty when it cannot be found."""
    inodes = _socket_inodes(peer, local)
    if not inodes:
        return set()
    wanted = {f"socket:[{inode}]" for inode in inodes}
    found: set[int] = set()
    try:
        names = [entry.name for entry in os.scandir(PROC) if entry.name.isdigit()]
    except OSError:
        return found
    for name in names:
        folder = PROC / name / "fd"
        try:
            fds = [entry.name for entry in os.scandir(folder)]
        except OSError:
            continue
        for fd in fds:
            try:
                if str((folder / fd).readlink()) in wanted:
                    found.add(int(name))
                    break
            except OSError:
                continue
    found.discard(os.getpid())
    return found


def _socket_inodes(peer: tuple[str, int], local: tuple[str, int]) -> set[str]:
    mine = (_address_key(peer[0]), peer[1])
    theirs = (_address_key(local[0]), local[1])
    inodes: set[str] = set()
    for table in ("tcp", "tcp6"):
        try:
            lines = (PROC / "net" / table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) > 9 and _entry(fields[1]) == mine and _entry(fields[2]) == theirs:
                inodes.add(fields[9])
    return inodes


def _address_key(text: str) -> bytes:
    """An address as its 16 bytes (IPv4 as IPv4-mapped IPv6), to compare both tables."""
    address = ipaddress.ip_address(text.split("%")[0])
    if isinstance(address, ipaddress.IPv4Address):
        return ipaddress.IPv6Address(b"\0" * 10 + b"\xff\xff" + address.packed).packed
    mapped = address.ipv4_mapped
    return _address_key(str(mapped)) if mapped is not None else address.packed


def _entry(field: str) -> tuple[bytes, int] | None:
    """``ADDRESS:PORT`` of ``/proc/net/tcp*`` (hex, each 32-bit word in host order)."""
    try:
        hex_address, hex_port = field.split(":")
        raw = bytes.fromhex(hex_address)
        if sys.byteorder == "little":
            raw = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
        text = str(ipaddress.ip_address(raw))
        return _address_key(text), int(hex_port, 16)
    except ValueError:
        return None
