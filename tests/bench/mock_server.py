"""A standalone ``agentd mock-llm`` process for the benches that need the model outside the
measured process, as a real provider is (its streaming pace then does not share the measured
event loop)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.harness import scaled, wait_until


class LocalServer:
    """``agentd mock-llm`` on a free port with ``scenarios`` (its log in ``folder``); the
    OpenAI-compatible provider ``local`` that reaches it is :attr:`provider_config`."""

    def __init__(self, env: dict[str, str], folder: Path, scenarios: Path) -> None:
        argv = [sys.executable, "-m", "agentd", "mock-llm", "--port", "0"]
        self.log = folder / "mock-llm.log"
        with self.log.open("wb") as log:  # a file, not a pipe nobody reads
            self.process = subprocess.Popen(
                [*argv, "--scenarios", str(scenarios)],
                env=env,
                stdin=subprocess.DEVNULL,
                stderr=log,
            )

        def url() -> str | None:
            if self.process.poll() is not None:
                raise RuntimeError(f"mock-llm exited: {self.log.read_text()}")
            match = re.search(r"(http://127\.0\.0\.1:\d+/v1)", self.log.read_text())
            return match.group(1) if match else None

        try:
            self.base_url = wait_until(url, 30, "mock-llm to print its URL")
        except BaseException:
            self.close()
            raise

    @property
    def provider_config(self) -> str:
        """The configuration table of the provider ``local`` (model ``mock-model``)."""
        return (
            f'[providers.local]\napi = "openai"\nbase_url = "{self.base_url}"\n'
            'models = ["mock-model"]\n'
        )

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(scaled(15))
