"""A batch is one trace: ``agentctl batch`` passes each task's ``traceparent`` to
``session/prompt``, so every run's ``invoke_agent`` span lands in the batch's trace
(``batch_trace_id``) under the span its result line names (``span_id``), at the test's
OTLP/HTTP receiver."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.batch.harness import LOOK, BatchBox
from tests.harness import scaled, wait_until
from tests.telemetry.receiver import Receiver
from tests.telemetry.test_export import FAST_EXPORT

pytestmark = pytest.mark.e2e


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    found = Receiver()
    yield found
    found.close()


def test_each_task_run_hangs_under_its_span_in_the_batch_trace(receiver: Receiver) -> None:
    with BatchBox() as box:
        box.user_config(f'[telemetry]\notlp_endpoint = "{receiver.endpoint}"\n')
        box.env.update(FAST_EXPORT)
        box.write_tasks([box.task("one", LOOK), box.task("two", LOOK)])
        done = box.batch()
        assert done.returncode == 0, done.stderr
        batch_trace = json.loads((box.out / "batch.json").read_text())["batch_trace_id"]
        parents = {line["span_id"] for line in box.results()}
        assert {line["trace_id"] for line in box.results()} == {batch_trace}
        runs = wait_until(
            lambda: (
                len(found := [s for s in receiver.spans() if s.name == "invoke_agent agentd"]) >= 2
                and found
            ),
            scaled(30),
            "two run spans",
        )
    assert {run.trace_id.hex() for run in runs} == {batch_trace}
    assert {run.parent_span_id.hex() for run in runs} == parents
