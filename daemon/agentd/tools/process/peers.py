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
    data = _read(f"/proc/{pid}/environ", 1 << 20)
    return data is not None and any(item.startswith(needle) for item in data.split(b"\0"))


def _parent(pid: int) -> int | None:
    stat = _read(f"/proc/{pid}/stat", 4096)
    try:
        return int(stat.rsplit(b")", 1)[1].split()[1]) if stat else None
    except (IndexError, ValueError):
        return None


def _read(path: str, limit: int) -> bytes | None:
    """Up to ``limit`` bytes of a ``/proc`` file (plain system calls: this runs for every
    process on the machine, per connection)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        chunks, size = [], 0
        while size < limit:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def tcp_tool_peer(peer: tuple[str, int], local: tuple[str, int]) -> str | None:
    """Why the local process at the ``peer`` end of a TCP connection to ``local`` (this
    daemon's end) is a tool process; None when it is not, or cannot be found. Only the tool
    processes' descriptors are looked through (every process's would take far longer): the
    daemon's descendants and the processes carrying a marker."""
    inodes = _socket_inodes(peer, local)
    if not inodes:
        return None
    wanted = {f"socket:[{inode}]" for inode in inodes}
    for pid, reason in _tool_pids().items():
        if _holds(pid, wanted):
            return reason
    return None


def _tool_pids() -> dict[int, str]:
    """Every running tool process (pid: why), from one scan of ``/proc``."""
    daemon = os.getpid()
    needle = f"{MARKER_VAR}=".encode()
    parents: dict[int, int] = {}
    for pid in _pids():
        parent = _parent(pid)
        if parent is not None:
            parents[pid] = parent
    found = {
        pid: "it runs inside a tool call of a session"
        for pid in parents
        if _has_marker(pid, needle)
    }
    for pid in parents:
        current, hops = parents.get(pid), 0
        while current is not None and current > 1 and hops < MAX_HOPS:
            if current == daemon:
                found.setdefault(pid, "it was started by the daemon")
                break
            current, hops = parents.get(current), hops + 1
    found.pop(daemon, None)
    return found


def _pids() -> list[int]:
    try:
        return [int(name) for name in os.listdir("/proc") if name.isdigit()]  # noqa: PTH208
    except OSError:
        return []


def _holds(pid: int, wanted: set[str]) -> bool:
    folder = f"{PROC}/{pid}/fd/"
    try:
        fds = os.listdir(folder)  # noqa: PTH208
    except OSError:
        return False
    for fd in fds:
        try:
            if os.readlink(folder + fd) in wanted:  # noqa: PTH115 (a str path: thousands of them)
                return True
        except OSError:
            continue
    return False


def _socket_inodes(peer: tuple[str, int], local: tuple[str, int]) -> set[str]:
    """The inodes of the sockets ``peer`` -> ``local`` in ``/proc/net/tcp`` and ``tcp6``
    (the lines are matched as text: each end as the kernel prints it)."""
    inodes: set[str] = set()
    for table, width in (("tcp", 4), ("tcp6", 16)):
        mine, theirs = _proc_form(*peer, width), _proc_form(*local, width)
        if mine is None or theirs is None:
            continue
        try:
            with (PROC / "net" / table).open() as lines:
                next(lines, None)
                for line in lines:
                    fields = line.split()
                    if len(fields) > 9 and fields[1] == mine and fields[2] == theirs:
                        inodes.add(fields[9])
        except OSError:
            continue
    return inodes


def _proc_form(host: str, port: int, width: int) -> str | None:
    """``host:port`` as ``/proc/net/tcp`` (``width`` 4) or ``tcp6`` (16) prints it: the
    address in hex, each 32-bit word in host byte order, then the port; None when the address
    cannot appear in that table."""
    address = ipaddress.ip_address(host.split("%")[0])
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if width == 4 and not isinstance(address, ipaddress.IPv4Address):
        return None
    if width == 16 and isinstance(address, ipaddress.IPv4Address):
        address = ipaddress.IPv6Address(b"\0" * 10 + b"\xff\xff" + address.packed)
    raw = address.packed
    if sys.byteorder == "little":
        raw = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
    return f"{raw.hex().upper()}:{port:04X}"
