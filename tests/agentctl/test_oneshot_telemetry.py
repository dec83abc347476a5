"""A one-shot ``agentctl send --stdio`` (the session in agentctl's own process) exports its
run's spans before it exits, like a daemon does at shutdown."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.agentctl.harness import Sandbox
from tests.harness import scaled, wait_until
from tests.telemetry.receiver import Receiver
from tests.telemetry.test_export import FAST_EXPORT

pytestmark = pytest.mark.e2e


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    found = Receiver()
    yield found
    found.close()


def test_the_in_process_run_is_exported(sandbox: Sandbox, receiver: Receiver) -> None:
    sandbox.user_config(f'[telemetry]\notlp_endpoint = "{receiver.endpoint}"\n')
    sandbox.env.update(FAST_EXPORT)
    done = sandbox.run("send", "--stdio", "--provider", "mock", "hello")
    assert done.returncode == 0, done.stderr
    runs = wait_until(
        lambda: [s for s in receiver.spans() if s.name == "invoke_agent agentd"],
        scaled(10),
        "the run span",
    )
    assert len(runs) == 1
