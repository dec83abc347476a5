"""A private network namespace (only loopback up) for a test's Ray cluster.

Ray advertises the machine's own non-loopback address even when told ``127.0.0.1``, and the
tests may only talk to loopback; inside a fresh network namespace loopback is the only
interface, so every Ray process there reports and uses ``127.0.0.1``.

:class:`PrivateNetwork` starts ``unshare --net --pid --mount --fork --mount-proc`` (root)
with a small init process that brings ``lo`` up and reaps orphans; :meth:`PrivateNetwork.popen`
and :meth:`PrivateNetwork.run` start commands inside it with ``nsenter``. The namespace has
its own process ids too, so :meth:`PrivateNetwork.processes` lists exactly what runs in it
(the tests' "no process left" check) and :meth:`PrivateNetwork.close` ends them all: when
the init process dies, the kernel kills every process of the namespace. Ports inside never
clash with another test's.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.harness import scaled, wait_until

INIT = r"""
import os, subprocess, sys, time
subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
print("ready", flush=True)
while True:
    try:
        os.wait()
    except ChildProcessError:
        time.sleep(0.2)
"""
"""The namespace's process 1: loopback up, then reap every orphan (Ray's daemons end up
its children when ``ray start`` exits)."""


def unavailable() -> str | None:
    """Why a private network namespace cannot be made here, or None when it can."""
    if sys.platform != "linux":
        return "private network namespaces need Linux"
    for tool in ("unshare", "nsenter", "ip"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (util-linux / iproute2)"
    probe = subprocess.run(
        ["unshare", "--net", "--pid", "--mount", "--fork", "--mount-proc", "--",
         "ip", "link", "set", "lo", "up"],
        capture_output=True, text=True, timeout=scaled(30), check=False,
    )  # fmt: skip
    if probe.returncode != 0:
        return f"cannot make a private network namespace: {probe.stderr.strip()[:200]}"
    return None


class PrivateNetwork:
    """One namespace for one test (module); a context manager."""

    def __init__(self) -> None:
        self._unshare = subprocess.Popen(
            ["unshare", "--net", "--pid", "--mount", "--fork", "--mount-proc", "--kill-child",
             "--", sys.executable, "-c", INIT],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            start_new_session=True,
        )  # fmt: skip
        assert self._unshare.stdout is not None
        line = self._unshare.stdout.readline()
        if line.strip() != b"ready":
            error = self._unshare.stderr.read() if self._unshare.stderr else b""
            self._unshare.kill()
            raise RuntimeError(f"the namespace did not start: {error.decode()[:300]}")
        self.init_pid = wait_until(self._init, 10, "the namespace's init process")
        self.pid_ns = os.readlink(f"/proc/{self.init_pid}/ns/pid")

    def _init(self) -> int | None:
        path = Path(f"/proc/{self._unshare.pid}/task/{self._unshare.pid}/children")
        children = path.read_text().split() if path.exists() else []
        return int(children[0]) if children else None

    def command(self, argv: list[str]) -> list[str]:
        """``argv`` run inside the namespace (its network, process ids and ``/proc``)."""
        target = str(self.init_pid)
        return ["nsenter", "--target", target, "--net", "--pid", "--mount", "--", *argv]

    def popen(self, argv: list[str], **kwargs: Any) -> subprocess.Popen[Any]:
        """Start ``argv`` inside the namespace (``subprocess.Popen`` keywords)."""
        return subprocess.Popen(self.command(argv), **kwargs)

    def run(
        self, argv: list[str], timeout: float = 60, **kwargs: Any
    ) -> subprocess.CompletedProcess[str]:
        """Run ``argv`` inside the namespace to its end (text output captured)."""
        kwargs.setdefault("capture_output", True)
        return subprocess.run(
            self.command(argv), text=True, timeout=scaled(timeout), check=False, **kwargs
        )

    def processes(self) -> dict[int, str]:
        """Every process of the namespace but its init (host pid → command line)."""
        found: dict[int, str] = {}
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) == self.init_pid:
                continue
            try:
                if os.readlink(entry / "ns" / "pid") != self.pid_ns:
                    continue
                command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:  # gone meanwhile
                continue
            if command:  # zombies (reaped at once by init) have none
                found[int(entry.name)] = command.strip()
        return found

    def close(self) -> None:
        """End every process of the namespace (SIGKILL to its init) and the namespace."""
        if self._unshare.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.init_pid, signal.SIGKILL)
            try:
                self._unshare.wait(timeout=scaled(15))
            except subprocess.TimeoutExpired:
                self._unshare.kill()
                self._unshare.wait()
        for stream in (self._unshare.stdout, self._unshare.stderr):
            if stream is not None:
                stream.close()

    def __enter__(self) -> PrivateNetwork:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
