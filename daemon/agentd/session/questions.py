"""Questions to the user: one session's :class:`Questioner`, the one mechanism behind the
``ask_user`` tool, MCP servers' ``elicitation/create`` and the daemon's own choices.

A question is announced with ``question_request`` and sent as ``session/askQuestion`` to
every subscriber that answers questions (:class:`~agentd.api.subscriber.QuestionAnswerer`
whose ``answers_questions()`` is true). The first fitting answer wins — from such a
subscriber or from :meth:`Questioner.answer` (``question/answer``: a web page, any client) —
and the other requests are withdrawn; every ``question_request`` is followed by exactly one
``question_resolved``.

Like an approval, a pending question belongs to the session: a client that goes away does
not end the wait, a client that subscribes meanwhile is asked too (:meth:`offer_pending`;
its replay also holds the ``question_request``), and a subagent's questions reach its
parent's clients (they watch the child's bus). Unlike an approval, nobody to ask is not a
refusal: the asker gets at once a reply without answers saying so (:data:`NO_USER`), so a
headless run never waits; otherwise the wait ends at the timeout (``[permissions]
question_timeout``) or when the run is cancelled.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import TYPE_CHECKING

import msgspec

from agentd.api.subscriber import QuestionAnswerer
from agentd.errors import ConnectionLost, PeerTimeout, RequestCancelled, RpcError
from agentd.log import get_logger
from agentd.protocol.questions import (
    CANCELLED,
    DECLINED,
    NO_USER,
    AskQuestionParams,
    Question,
    QuestionAnswer,
    QuestionRequest,
    QuestionResolved,
    QuestionSource,
    answers_fit,
)

if TYPE_CHECKING:
    from agentd.api.subscriber import Subscriber
    from agentd.session.bus import EventBus

log = get_logger("agentd.questions")

DEFAULT_TIMEOUT = 600.0
Outcome = tuple[list[QuestionAnswer] | None, str | None]


def answerers(bus: EventBus) -> list[QuestionAnswerer]:
    """The subscribers of ``bus`` that can show a question to a user now."""
    return [
        s
        for s in bus.subscribers.values()
        if isinstance(s, QuestionAnswerer) and not s.closed and s.answers_questions()
    ]


class Questioner:
    """Asks the users behind one session's clients (see the module docstring)."""

    def __init__(self, bus: EventBus, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.bus = bus
        self.timeout = timeout
        self._pending: dict[str, _Pending] = {}

    def pending(self) -> list[str]:
        """The ids of the questions waiting for an answer."""
        return list(self._pending)

    async def ask(
        self,
        questions: list[Question],
        *,
        source: QuestionSource = "tool",
        tool_call_id: str | None = None,
        server: str | None = None,
        url: str | None = None,
    ) -> QuestionResolved:
        """Ask ``questions``; the ``question_resolved`` event published for them (its
        ``answers`` None and ``reason`` set when there were none). Never raises but
        CancelledError (a cancelled run: resolved first, "the run was cancelled")."""
        params = AskQuestionParams(
            session_id=self.bus.session_id,
            question_id=f"q-{uuid.uuid4().hex[:12]}",
            questions=questions,
            source=source,
            tool_call_id=tool_call_id,
            server=server,
            url=url,
        )
        clients = answerers(self.bus)
        self.bus.publish(
            QuestionRequest(
                question_id=params.question_id, questions=questions, source=source,
                tool_call_id=tool_call_id, server=server, url=url,
            )
        )  # fmt: skip
        if not clients:
            return self._resolved(params.question_id, (None, NO_USER))
        try:
            outcome = await self._first_answer(params, clients)
        except asyncio.CancelledError:
            self._resolved(params.question_id, (None, CANCELLED))
            raise
        return self._resolved(params.question_id, outcome)

    def answer(self, question_id: str, answers: list[QuestionAnswer] | None) -> bool:
        """Answer a pending question (None: declined); False when none is pending under
        ``question_id`` or the answers do not fit its questions."""
        pending = self._pending.get(question_id)
        if pending is None:
            return False
        if answers is not None and answers_fit(pending.params.questions, answers) is not None:
            return False
        return pending.settle((answers, None if answers is not None else DECLINED))

    def offer_pending(self, subscriber: Subscriber) -> None:
        """Ask a client that just subscribed every question still pending."""
        if isinstance(subscriber, QuestionAnswerer):
            for pending in self._pending.values():
                pending.offer(subscriber, self.timeout)

    def _resolved(self, question_id: str, outcome: Outcome) -> QuestionResolved:
        answers, reason = outcome
        event = QuestionResolved(question_id=question_id, answers=answers, reason=reason)
        self.bus.publish(event)
        return event

    async def _first_answer(
        self, params: AskQuestionParams, clients: list[QuestionAnswerer]
    ) -> Outcome:
        pending = _Pending(params, asyncio.get_running_loop().create_future())
        self._pending[params.question_id] = pending
        for client in clients:
            pending.offer(client, self.timeout)
        try:
            async with asyncio.timeout(self.timeout):
                return await asyncio.shield(pending.outcome)
        except TimeoutError:
            return None, f"nobody answered within {self.timeout:g} s"
        finally:
            self._pending.pop(params.question_id, None)
            await pending.close()


class _Pending:
    """One pending question: the clients asked so far and the first answer."""

    def __init__(self, params: AskQuestionParams, outcome: asyncio.Future[Outcome]) -> None:
        self.params = params
        self.outcome = outcome
        self._asked: set[int] = set()
        self._waiting: set[int] = set()
        self._gone = 0
        self._tasks: set[asyncio.Task[None]] = set()

    def settle(self, outcome: Outcome) -> bool:
        """Take ``outcome`` unless an answer came first."""
        if self.outcome.done():
            return False
        self.outcome.set_result(outcome)
        return True

    def offer(self, client: QuestionAnswerer, timeout: float) -> None:
        """Ask ``client`` (once) if it can show questions now."""
        if client.key in self._asked or client.closed or not client.answers_questions():
            return
        self._asked.add(client.key)
        self._waiting.add(client.key)
        self._tasks.add(asyncio.ensure_future(self._relay(client, timeout)))

    async def _relay(self, client: QuestionAnswerer, timeout: float) -> None:
        """One client's answer. A client that went away leaves the question pending (for
        the others and those still to come); one that says it cannot show it (an error
        answer: a front-end none of whose users can be asked) is out, and when every client
        asked is out the question is settled at once as having nobody to answer; one whose
        answer does not fit settles it without answers, saying why."""
        try:
            result = await client.ask_question(self.params, timeout)
        except (ConnectionLost, PeerTimeout, RequestCancelled, OSError) as exc:
            log.info("question not answered", error=str(exc))
            self._gone += 1
            self._waiting.discard(client.key)
            return
        except (RpcError, msgspec.ValidationError) as exc:
            log.info("question not shown", error=str(exc))
            self._cannot_show(client.key)
            return
        self._waiting.discard(client.key)
        if result is None:
            self._cannot_show(client.key)
            return
        if result.answers is None:
            self.settle((None, DECLINED))
            return
        unfit = answers_fit(self.params.questions, result.answers)
        if unfit is not None:
            self.settle((None, f"the client's answer did not fit the questions ({unfit})"))
            return
        self.settle((result.answers, None))

    def _cannot_show(self, key: int) -> None:
        self._waiting.discard(key)
        if not self._waiting and not self._gone:
            self.settle((None, NO_USER))

    async def close(self) -> None:
        """Withdraw the question from the clients still asked."""
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
