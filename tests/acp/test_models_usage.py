"""Model selection through the ``model`` config option, and ``usage_update`` after a run.

A second provider ``local`` (OpenAI format, known context window) is the mock LLM served by a
real ``agentd mock-llm`` process on a free port, configured in the user's config file.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator

import pytest

import acp
from tests.acp.conftest import SCENARIOS, Box, Editor, spawn
from tests.harness import scaled

pytestmark = pytest.mark.e2e


@pytest.fixture
def mock_llm(box: Box) -> Iterator[str]:
    """The base URL of a standalone mock LLM."""
    argv = [
        sys.executable,
        "-m",
        "agentd",
        "mock-llm",
        "--port",
        "0",
        "--scenarios",
        str(SCENARIOS),
    ]
    process = subprocess.Popen(argv, env=box.env, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        match = re.search(r"(http://\S+)", line)
        assert match, line
        yield match.group(1)
    finally:
        process.terminate()
        process.wait(scaled(10))
        if process.stderr is not None:
            process.stderr.close()


async def test_model_option_switches_and_usage_is_reported(box: Box, mock_llm: str) -> None:
    box.write_config(
        "[providers.local]\n"
        'api = "openai"\n'
        f'base_url = "{mock_llm}"\n'
        'models = ["small", "large"]\n'
        "context_window = 32000\n"
    )
    editor = Editor()
    async with spawn(box, editor) as (conn, _):
        session = await conn.new_session(cwd=str(box.project))
        model = {o.id: o for o in session.config_options}["model"]
        values = [option.value for option in model.options]
        assert model.current_value == "mock/mock-model"
        assert {"local/small", "local/large"} <= set(values)
        changed = await conn.set_config_option(
            session_id=session.session_id, config_id="model", value="local/large"
        )
        assert {o.id: o.current_value for o in changed.config_options}["model"] == "local/large"
        reply = await conn.prompt(
            session_id=session.session_id, prompt=[acp.text_block("run the tests")]
        )
        assert reply.stop_reason == "end_turn"
        assert "All 3 tests pass." in editor.text()
        (usage,) = editor.of("usage_update")
        assert usage.size == 32000
        assert usage.used > 0
        assert usage.cost is not None
        assert usage.cost.currency == "USD"
        with pytest.raises(acp.RequestError) as unknown:
            await conn.set_config_option(
                session_id=session.session_id, config_id="model", value="nowhere/none"
            )
        assert "nowhere" in str(unknown.value)
    kinds = [k for k in editor.kinds() if k != "available_commands_update"]  # sent on its own
    assert kinds[-1] == "usage_update", "usage comes last, before the answer"
