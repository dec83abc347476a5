"""A real local Ray cluster for a test, inside a :class:`~tests.batch.netns.PrivateNetwork`.

:class:`RayCluster` starts a head (``ray start --head``) and further nodes (``ray start
--address``) on this machine, each with its own custom resources (so a test can steer or
spread tasks), every port given explicitly, a temp folder under the test's folder, no
dashboard, a small object store and no usage statistics (``docs/batch.md`` and
``../shared`` facts: Ray must be told every port when two nodes share a machine). The
nodes run the interpreter of this test run, so their workers import this checkout's
``agentd`` and ``agentctl`` (``PYTHONPATH`` from ``env``).

:meth:`RayCluster.kill_node` SIGKILLs one node's whole process tree (a machine that
died); :meth:`RayCluster.stop` runs ``ray stop --force`` inside the namespace (its ``/proc``
shows only the namespace's processes, so nothing outside is touched) and waits until no
process is left there. Node start-up and failure detection get generous scaled deadlines.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import sys
from pathlib import Path

from tests.batch.netns import PrivateNetwork
from tests.harness import wait_until

HEAD_PORT = 6379
FAST_FAILURE_DETECTION = {
    "RAY_health_check_initial_delay_ms": "1000",
    "RAY_health_check_period_ms": "1000",
    "RAY_health_check_timeout_ms": "5000",
    "RAY_health_check_failure_threshold": "3",
}
"""The head's system settings: a killed node (its port refuses at once) is declared dead
after three checks a second apart (Ray's defaults take about half a minute), while a live
node slowed down by a loaded machine has five seconds to answer each."""


SLOW_START = "The current node timed out during startup"
"""What ``ray start`` says when the raylet did not register within its fixed 30 s."""
REGISTERED = (
    "import sys, ray._private.services as s\n"
    "try:\n    s.get_node(sys.argv[1], sys.argv[2])\n"
    "except RuntimeError:\n    sys.exit(1)\n"
)
"""Exit 0 once the GCS at ``argv[1]`` knows node ``argv[2]``."""


def ray_tool() -> list[str]:
    """The ``ray`` command of this interpreter's environment."""
    return [sys.executable, "-c", "from ray.scripts.scripts import main; main()"]


class RayCluster:
    """A head and named worker nodes, all on loopback inside ``network``."""

    def __init__(self, network: PrivateNetwork, root: Path, env: dict[str, str]) -> None:
        self.network = network
        self.root = root
        self.temp = root / "ray"
        self.env = {**env, "RAY_USAGE_STATS_ENABLED": "0", **FAST_FAILURE_DETECTION}
        self.address = f"127.0.0.1:{HEAD_PORT}"
        self.nodes: dict[str, int] = {}
        """Node name → its node manager port (which finds its raylet)."""

    def _ports(self, index: int) -> list[str]:
        base = 20000 + 1000 * index
        return [
            "--node-ip-address", "127.0.0.1",
            "--node-manager-port", str(base + 1),
            "--object-manager-port", str(base + 2),
            "--dashboard-agent-listen-port", str(base + 3),
            "--dashboard-agent-grpc-port", str(base + 4),
            "--metrics-export-port", str(base + 5),
            "--runtime-env-agent-port", str(base + 6),
            "--min-worker-port", str(base + 100),
            "--max-worker-port", str(base + 199),
        ]  # fmt: skip

    def _start(
        self, name: str, argv: list[str], num_cpus: float, resources: dict[str, float]
    ) -> None:
        index = len(self.nodes)
        self.nodes[name] = 20000 + 1000 * index + 1
        done = self.network.run(
            [*ray_tool(), "start", *argv, *self._ports(index),
             "--num-cpus", f"{num_cpus:g}", "--resources", json.dumps(resources),
             "--object-store-memory", str(80 * 1024 * 1024), "--disable-usage-stats"],
            timeout=120, env=self.env, cwd=self.root,
        )  # fmt: skip
        if done.returncode != 0 and not (SLOW_START in done.stderr and self._registers(name)):
            raise RuntimeError(f"ray start ({name}) failed:\n{done.stdout}\n{done.stderr}")

    def _registers(self, name: str) -> bool:
        """Whether node ``name``'s raylet, which ``ray start`` gave up waiting for (it waits
        30 s, fixed), registers with the head after all (on a loaded machine it does)."""
        try:
            node_id = self.node_id(name)
        except (TimeoutError, AssertionError):
            return False
        probe = [sys.executable, "-c", REGISTERED, f"127.0.0.1:{HEAD_PORT}", node_id]

        def registered() -> bool:
            return self.network.run(probe, timeout=60, env=self.env).returncode == 0

        try:
            wait_until(registered, 60, f"node {name} to register", interval=1)
        except TimeoutError:
            return False
        return True

    def start_head(self, num_cpus: float = 1, resources: dict[str, float] | None = None) -> None:
        """``ray start --head`` (named ``head``)."""
        self._start(
            "head",
            ["--head", "--port", str(HEAD_PORT), "--temp-dir", str(self.temp),
             "--include-dashboard=false"],
            num_cpus, resources or {"head": 1},
        )  # fmt: skip

    def add_node(
        self, name: str, num_cpus: float = 1, resources: dict[str, float] | None = None
    ) -> None:
        """``ray start --address HEAD`` as node ``name`` (resources default: ``{name: 1}``)."""
        self._start(name, ["--address", self.address], num_cpus, resources or {name: 1})

    def raylet(self, name: str) -> int | None:
        """The host pid of node ``name``'s raylet (None once it is gone)."""
        port = self.nodes[name]
        for pid, command in self.network.processes().items():
            if "raylet" in command.split(" ")[0] and f"--node_manager_port={port}" in command:
                return pid
        return None

    def node_id(self, name: str) -> str:
        """Node ``name``'s Ray node id (hex), from its raylet's command line."""
        pid = wait_until(lambda: self.raylet(name), 30, f"the raylet of {name}")
        command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        found = re.search(r"--node_id=([0-9a-f]+)", command)
        assert found, command
        return found[1]

    def kill_node(self, name: str) -> None:
        """SIGKILL node ``name``'s raylet and every process under it (its workers, their
        daemons and commands), as if the machine died."""
        raylet = self.raylet(name)
        assert raylet is not None, f"node {name} is not running"
        for pid in [raylet, *descendants(raylet)]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

    def stop(self) -> None:
        """``ray stop --force`` in the namespace, then wait until no process is left there."""
        self.network.run([*ray_tool(), "stop", "--force"], timeout=120, env=self.env)
        wait_until(lambda: not self.network.processes(), 60, "every process of the cluster to end")

    def log_text(self) -> bytes:
        """Everything Ray wrote under its temp folder (logs, session files), concatenated."""
        chunks = []
        for path in sorted(self.temp.rglob("*")):
            if path.is_file() and not path.is_symlink():
                try:
                    chunks.append(path.read_bytes())
                except OSError:
                    continue
        return b"\n".join(chunks)


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (children first found through ``/proc/*/stat``)."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        parents.setdefault(parent, []).append(int(entry.name))
    found: list[int] = []
    todo = [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found
