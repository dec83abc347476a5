"""Budget of a question: it reaches an attached client ≤ 10 ms after the tool call starts.

A real socket daemon (the mock LLM) runs a scenario whose reply calls ``ask_user``. One
connection, agentctl's client library, watches the session and answers questions: the moment
the ``tool_execution_start`` of the call is read off the socket is the start, the moment its
``session/askQuestion`` request is read is the end (both measured in the client, so the
daemon's work and the socket between are inside). Twenty questions; median and worst.

Run: ``python -m tests.bench.bench_questions`` (or ``make bench`` for every area).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from typing import Any

from tests.bench.smoke import size

Row = tuple[str, str, str]
ROUNDS = size(20, 2)
QUESTION = {
    "question": "Which build tool?",
    "header": "Build",
    "options": [{"label": "make"}, {"label": "ninja"}],
}


def _scenario() -> dict[str, Any]:
    arguments = json.dumps({"questions": [QUESTION]})
    call = {"id": "ask_1", "type": "function",
            "function": {"name": "ask_user", "arguments": arguments}}  # fmt: skip
    return {
        "name": "bench-question",
        "trigger": "bench a question",
        "steps": [{"response": {"tool_calls": [call]}}, {"response": {"content": "ok"}}],
    }


async def _rounds(home: Any) -> list[float]:
    from agentd.protocol.questions import AskQuestionParams, AskQuestionResult, QuestionAnswer
    from tests.harness import new_session, socket_client

    started: list[float] = []
    delays: list[float] = []

    async def answer(params: AskQuestionParams) -> AskQuestionResult:
        delays.append((time.perf_counter() - started[-1]) * 1000)
        return AskQuestionResult(answers=[QuestionAnswer(selected=["make"])])

    async with socket_client(home, question_handler=answer) as client:
        sid = await new_session(client, home)

        def on_event(session_id: str | None, data: bytes) -> None:
            if b'"tool_execution_start"' in data:
                started.append(time.perf_counter())

        client.remote.listen(on_event)
        await client.call("session/subscribe", {"sessionId": sid})
        for _ in range(ROUNDS + 1):  # the first warms the session up
            await client.call("session/prompt", {"sessionId": sid, "text": "bench a question"})
    return delays[1:]


def main() -> list[Row]:
    from tests.harness import Home, stop

    home = Home()
    home.use_scenarios([_scenario()])
    process = home.start_socket_daemon()
    try:
        delays = asyncio.run(_rounds(home))
    finally:
        stop(process)
        home.cleanup()
    assert len(delays) == ROUNDS, delays
    return [
        (
            f"question at the client after its tool call starts (median of {ROUNDS})",
            f"{statistics.median(delays):.2f} ms (worst {max(delays):.2f} ms)",
            "≤ 10 ms",
        )
    ]


if __name__ == "__main__":
    for measure, value, budget in main():
        print(f"{measure:75} {value:>26} {budget}")
