"""``agentctl batch --engine ray`` on a real local Ray cluster (a head and two worker nodes on
this machine, distinct resources), all inside a private network namespace with only
loopback up (:mod:`tests.batch.netns`; Ray would advertise the machine's own address
otherwise). The tests share one cluster, in this order: the same batch gives the same
results as the local engine (spread over both nodes, a credential reaching the check);
Ctrl-C cancels running and queued tasks; the credential's value is nowhere in Ray's files;
a node killed mid-task → the task runs again on the other node and is recorded once; the
last node killed with no retries left → an error record; the cluster stops with no process
left.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.agentctl.harness import Sandbox
from tests.batch import netns
from tests.batch.ray_cluster import RayCluster, descendants
from tests.harness import REPO, scaled, wait_until
from tests.scenarios import tool_call

pytestmark = pytest.mark.e2e  # a real three-node Ray cluster in a private namespace (~1 min)

SCENARIOS = [
    {
        "name": "ray-edit",
        "trigger": "ray batch: write the answer",
        "steps": [
            {"response": {"content": "Writing.", "tool_calls": [
                tool_call("bash", {"command": "echo 42 > answer.txt"})]}},
            {"response": {"content": "Wrote it."}},
        ],
    },
    {
        "name": "ray-slow",
        "trigger": "ray batch: take your time",
        "steps": [{"delay_ms": 120_000, "response": {"content": "Late."}}],
    },
    {
        "name": "ray-look",
        "trigger": "ray batch: just look",
        "steps": [{"response": {"content": "Nothing to change."}}],
    },
]  # fmt: skip
EDIT = "ray batch: write the answer"
LOOK = "ray batch: just look"
SLOW = "ray batch: take your time"
PASSES = 'test "$(cat answer.txt)" = 42'
SECRET = "s3cr3t-value-7b1f0c9e"
SAME_FIELDS = ("status", "stop_reason", "exit_code", "check_exit_code", "turns", "files_changed")


class RayBox(Sandbox):
    """A sandbox with a committed repository, the scenarios, and the cluster's paths."""

    prefix = "ray-"

    def __init__(self) -> None:
        super().__init__()
        self.use_scenarios(SCENARIOS)
        self.repo = self.root / "repo"
        self.repo.mkdir()
        (self.repo / "README").write_text("a repository\n")
        for args in (
            ["init", "-q"],
            ["add", "."],
            ["-c", "user.name=t", "-c", "user.email=t@e.x", "commit", "-qm", "one"],
        ):
            subprocess.run(["git", "-C", str(self.repo), *args], check=True)  # fmt: skip
        paths = [str(REPO / "daemon"), str(REPO / "clients"), str(REPO)]
        self.env["PYTHONPATH"] = os.pathsep.join(paths)

    def task(self, task_id: str, prompt: str, **fields: Any) -> dict[str, Any]:
        return {"id": task_id, "prompt": prompt, "repo": str(self.repo), "ref": "HEAD",
                "provider": "mock", **fields}  # fmt: skip

    def write_tasks(self, name: str, tasks: list[dict[str, Any]]) -> Path:
        path = self.root / f"{name}.jsonl"
        path.write_text("".join(json.dumps(task) + "\n" for task in tasks))
        return path

    def ray_batch(self, tasks: Path, out: Path, *extra: str) -> list[str]:
        return [sys.executable, "-m", "agentctl", "batch", str(tasks), "--out", str(out),
                "--engine", "ray", "--address", "127.0.0.1:6379",
                "--ray-resources", '{"batch": 1}', "--ray-work-dir", str(self.root / "nodes"),
                *extra]  # fmt: skip


def results(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


class Cluster:
    """What the tests share: the box, the namespace and the cluster in it."""

    def __init__(self, box: RayBox, network: netns.PrivateNetwork, ray: RayCluster) -> None:
        self.box, self.network, self.ray = box, network, ray
        self.secret_passed = False
        """Whether a Ray batch's check has seen :data:`SECRET` (the credential test's premise)."""

    def node_of(self, pid: int) -> str | None:
        """The cluster node whose raylet ``pid`` runs under."""
        for name in self.ray.nodes:
            raylet = self.ray.raylet(name)
            if raylet is not None and pid in descendants(raylet):
                return name
        return None


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    if importlib.util.find_spec("ray") is None:
        pytest.skip("Ray is not installed: pip install 'agentd[ray]' (the dev install has it)")
    reason = netns.unavailable()
    if reason is not None:
        pytest.skip(f"Ray tests need a private network namespace: {reason}")
    box = RayBox()
    network = netns.PrivateNetwork()
    ray = RayCluster(network, box.root, box.env)
    try:
        ray.start_head(resources={"head": 1})
        for name in ("n2", "n3"):  # one after the other: side by side overloads two cores
            ray.add_node(name, 1, {name: 1, "batch": 1})
        assert set(ray.nodes) == {"head", "n2", "n3"}, "a worker node did not start"
        yield Cluster(box, network, ray)
    finally:
        network.close()
        box.cleanup()


def test_ray_is_imported_only_for_engine_ray() -> None:
    code = (
        "import sys; import agentctl.cli, agentctl.batch.cli, agentctl.batch.local, "
        "agentctl.batch.runner, agentctl.batch.ray_node, agentctl.batch.ray_channel; "
        "from agentctl.parser import build_parser; from agentctl.options import typed_options; "
        "typed_options(build_parser().parse_args(['batch', 't.jsonl', '--out', 'o'])); "
        "print(sorted(m for m in sys.modules if m == 'ray' or m.startswith('ray.')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_same_results_as_the_local_engine(cluster: Cluster) -> None:
    box = cluster.box
    secret_check = f'{PASSES} && test "$RAY_TEST_SECRET" = {SECRET}'
    tasks = box.write_tasks("same", [
        box.task("edit-1", EDIT, check=PASSES),
        box.task("edit-2", EDIT, check=secret_check, env=["RAY_TEST_SECRET"]),
        box.task("fail-1", EDIT, check="test -f missing.txt"),
        box.task("look-1", LOOK),
        box.task("look-2", LOOK, check="true"),
        box.task("edit-3", EDIT, check=PASSES),
    ])  # fmt: skip
    env = {**box.env, "RAY_TEST_SECRET": SECRET}
    local = subprocess.run(
        [sys.executable, "-m", "agentctl", "batch", str(tasks), "--out", str(box.root / "local"),
         "--concurrency", "2"],
        env=env, cwd=box.project, capture_output=True, text=True, timeout=scaled(120),
    )  # fmt: skip
    assert local.returncode == 1, local.stderr
    remote = cluster.network.run(
        box.ray_batch(tasks, box.root / "remote", "--concurrency", "2", "--json"),
        timeout=180,
        env=env,
        cwd=box.project,
    )
    assert remote.returncode == 1, remote.stderr + remote.stdout
    by_id = {line["id"]: line for line in results(box.root / "local")}
    remote_lines = results(box.root / "remote")
    assert len(remote_lines) == 6
    for line in remote_lines:
        twin = by_id[line["id"]]
        assert {k: line[k] for k in SAME_FIELDS} == {k: twin[k] for k in SAME_FIELDS}, line
        assert line["artifacts"] == twin["artifacts"]
        assert (line["engine"], twin["engine"]) == ("ray", "local")
        for relative in line["artifacts"].values():
            assert (box.root / "remote" / relative).is_file(), relative
        diff = (box.root / "remote" / line["id"] / "diff.patch").read_bytes()
        assert diff == (box.root / "local" / line["id"] / "diff.patch").read_bytes()
    assert by_id["edit-2"]["status"] == "passed"  # the secret reached the check locally …
    remote_by_id = {line["id"]: line for line in remote_lines}
    assert remote_by_id["edit-2"]["status"] == "passed"  # … and on a Ray node
    cluster.secret_passed = True
    nodes = {line["node"] for line in remote_lines}
    assert nodes == {cluster.ray.node_id("n2"), cluster.ray.node_id("n3")}  # spread over both
    events = [json.loads(text) for text in remote.stdout.splitlines() if text.startswith("{")]
    assert events, remote.stdout
    report = subprocess.run(
        [sys.executable, "-m", "agentctl", "batch", "report", str(box.root / "remote")],
        env=box.env, capture_output=True, text=True, timeout=scaled(60), check=False,
    )  # fmt: skip
    assert "6" in report.stdout, report.stdout + report.stderr


def test_ctrl_c_cancels_running_and_queued_ray_tasks(cluster: Cluster) -> None:
    box = cluster.box
    tasks = box.write_tasks("stop", [box.task(f"slow-{n}", SLOW) for n in range(3)])
    out = box.root / "stopped"
    driver = cluster.network.popen(
        box.ray_batch(tasks, out, "--concurrency", "3", "--json"),
        env=box.env,
        cwd=box.project,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert driver.stdout is not None
    try:
        started = 0
        while started < 2:  # the two "batch" slots run two; the third waits in Ray's queue
            line = driver.stdout.readline()
            assert line, driver.stderr.read() if driver.stderr else ""
            started += line.startswith('{"type":"task_start"')

        def the_driver() -> int | None:
            found = [p for p, c in cluster.network.processes().items() if "agentctl batch" in c]
            return found[0] if found else None

        os.kill(wait_until(the_driver, 10, "the driver process"), signal.SIGINT)
        stdout, stderr = driver.communicate(timeout=scaled(120))
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.communicate()
    assert driver.returncode == 130, stderr + stdout
    lines = {line["id"]: line for line in results(out)}
    assert sorted(lines) == ["slow-0", "slow-1", "slow-2"], lines
    assert {line["status"] for line in lines.values()} == {"cancelled"}
    assert {line["error"] for line in lines.values()} == {"interrupted"}
    ran = [line for line in lines.values() if line["session_id"]]
    assert len(ran) == 2, lines  # the queued one never reached a node
    for line in ran:
        assert (out / line["artifacts"]["session"]).is_file()


def test_the_credential_is_in_none_of_rays_files(cluster: Cluster) -> None:
    if not cluster.secret_passed:  # run alone: a batch whose check needs the credential first
        box = cluster.box
        check = f'test "$RAY_TEST_SECRET" = {SECRET}'
        tasks = box.write_tasks(
            "secret", [box.task("s", LOOK, check=check, env=["RAY_TEST_SECRET"])]
        )
        done = cluster.network.run(
            box.ray_batch(tasks, box.root / "secret"), timeout=180,
            env={**box.env, "RAY_TEST_SECRET": SECRET}, cwd=box.project,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
    text = cluster.ray.log_text()
    assert len(text) > 1000  # Ray did write its logs there
    assert SECRET.encode() not in text


def kill_mid_task(
    cluster: Cluster, name: str, sleep: str, *extra: str
) -> tuple[str, subprocess.CompletedProcess[str]]:
    """Run task ``name`` whose first attempt sleeps in its setup (``sleep`` seconds), kill
    the node it runs on then, and wait for the batch; the killed node's name and the run."""
    box = cluster.box
    marker = box.root / f"{name}-first-attempt"
    setup = f"if [ ! -e {marker} ]; then touch {marker}; exec sleep {sleep}; fi"
    tasks = box.write_tasks(name, [box.task(name, EDIT, setup=setup, check=PASSES)])
    driver = cluster.network.popen(
        box.ray_batch(tasks, box.root / name, *extra),
        env=box.env, cwd=box.project, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:

        def sleeping() -> int | None:
            found = [p for p, c in cluster.network.processes().items() if c == f"sleep {sleep}"]
            return found[0] if found else None

        victim = cluster.node_of(wait_until(sleeping, 90, "the first attempt's setup"))
        assert victim in ("n2", "n3"), victim
        cluster.ray.kill_node(victim)
        stdout, stderr = driver.communicate(timeout=scaled(150))
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.communicate()
    return victim, subprocess.CompletedProcess(driver.args, driver.returncode, stdout, stderr)


def test_a_node_killed_mid_task_runs_it_elsewhere_recorded_once(cluster: Cluster) -> None:
    victim, done = kill_mid_task(cluster, "lost", "61", "--max-retries", "2")
    survivor = "n3" if victim == "n2" else "n2"
    assert done.returncode == 0, done.stderr + done.stdout
    out = cluster.box.root / "lost"
    lines = results(out)
    assert len(lines) == 1, lines
    line = lines[0]
    assert (line["id"], line["status"], line["attempt"]) == ("lost", "passed", 1)
    assert line["node"] == cluster.ray.node_id(survivor)
    assert "+42" in (out / "lost" / "diff.patch").read_text()
    assert "task lost: lost node" in done.stderr, done.stderr
    assert "run 2 times" in done.stderr, done.stderr


def test_a_lost_node_with_no_retries_left_is_an_error_record(cluster: Cluster) -> None:
    _, done = kill_mid_task(cluster, "gone", "62", "--max-retries", "0")
    assert done.returncode == 1, done.stderr + done.stdout
    lines = results(cluster.box.root / "gone")
    assert len(lines) == 1, lines
    line = lines[0]
    assert (line["status"], line["stop_reason"], line["exit_code"]) == ("error", "error", 1)
    assert line["error"].startswith("ray: "), line
    assert line["engine"] == "ray"


def test_the_cluster_stops_with_no_process_left(cluster: Cluster) -> None:
    assert cluster.network.processes()  # the cluster runs …
    cluster.ray.stop()
    assert cluster.network.processes() == {}  # … and nothing of it is left
