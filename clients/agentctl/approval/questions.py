"""Answering ``session/askQuestion`` at the terminal: the agent's questions to the user.

agentctl declares the ``questions`` capability only when stdin is a terminal (``send`` and
``chat``); piped, in CI or in a script nobody is asked and the daemon answers the tool at
once that no user can answer. Each question goes to stderr with its options numbered:

* one choice: the option's key (``1``…``6``) answers at once;
* several (``multi_select``): a key toggles that option, Space toggles the one under the
  cursor (moved with the arrow keys, ``j``/``k``), Enter confirms the ticked ones;
* ``o`` asks for a line of free text ("Other"); Esc (or end of input) declines every question
  of the request.

Keys are read one at a time without blocking the event loop; the terminal stays in cbreak
mode for the whole request (keys typed quickly are all kept; cooked again for the "Other"
line and afterwards). Everything shown is scrubbed of control and bidi characters
first, as approvals are.
"""

from __future__ import annotations

import contextlib
import os
import select
import sys
from collections.abc import Callable, Iterator
from typing import Any, TextIO

from agentctl.approval.ask import read_line
from agentctl.render.style import Style, wants_color
from agentd.protocol.controls import scrub
from agentd.protocol.questions import AskQuestionParams, AskQuestionResult, Question, QuestionAnswer

ESCAPE = "\x1b"
OTHER_KEY = "o"
SINGLE_HINT = "press {keys}, o to write your own answer, Esc to skip"
MULTI_HINT = "keys {keys} or Space toggle, ↑/↓ move, Enter confirms, o writes your own, Esc skips"
CLEAR_LINE = "\r\x1b[K"


class Declined(Exception):
    """The user pressed Esc (or input ended): no answers for this request."""


class TerminalQuestioner:
    """A question handler that asks the person at the terminal (see the module docstring).

    ``before_asking`` is called first (the renderer stops its spinner there)."""

    def __init__(
        self,
        err: TextIO,
        style: Style,
        *,
        before_asking: Callable[[], None] = lambda: None,
        input_fd: int = 0,
    ) -> None:
        self.err = err
        self.style = style
        self.before_asking = before_asking
        self.input_fd = input_fd
        self._keys = _Keys(input_fd)

    async def __call__(self, params: AskQuestionParams) -> AskQuestionResult:
        self.before_asking()
        shown = scrub(params, crlf=True)
        if shown.url:
            who, where = shown.server or "a tool", self.style.bold(shown.url)
            self.err.write(f"{self.style.yellow('!')} {who} asks you to open {where}\n")
        answers: list[QuestionAnswer] = []
        try:
            with _Keys(self.input_fd) as self._keys:
                for number, question in enumerate(shown.questions, 1):
                    self._show(question, number, len(shown.questions))
                    answers.append(await self._answer(question))
        except Declined:
            self.err.write(self.style.dim("  skipped\n"))
            return AskQuestionResult(answers=None)
        # the labels as the daemon sent them (scrubbing may have escaped some)
        return AskQuestionResult(answers=_original_labels(params, shown, answers))

    def _show(self, question: Question, number: int, total: int) -> None:
        style = self.style
        count = f" ({number}/{total})" if total > 1 else ""
        head = style.bold(question.header) + "  " if question.header else ""
        self.err.write(f"{style.yellow('?')} {head}{question.question}{style.dim(count)}\n")
        for key, option in enumerate(question.options, 1):
            about = f" — {style.dim(option.description)}" if option.description else ""
            self.err.write(f"  {style.bold(str(key))} {option.label}{about}\n")
        keys = f"1-{len(question.options)}"
        hint = MULTI_HINT if question.multi_select else SINGLE_HINT
        self.err.write(style.dim("  " + hint.format(keys=keys)) + "\n")
        self.err.flush()

    async def _answer(self, question: Question) -> QuestionAnswer:
        if question.multi_select:
            return await self._pick_several(question)
        while True:
            key = await self._key()
            if key == OTHER_KEY:
                return await self._other()
            chosen = _option_index(key, question)
            if chosen is not None:
                label = question.options[chosen].label
                self.err.write(f"  {self.style.green('›')} {label}\n")
                return QuestionAnswer(selected=[label])

    async def _pick_several(self, question: Question) -> QuestionAnswer:
        ticked: set[int] = set()
        cursor = 0
        while True:
            self._draw_ticks(question, ticked, cursor)
            key = await self._key()
            index = _option_index(key, question)
            if index is not None:
                ticked ^= {index}
                cursor = index
            elif key == " ":
                ticked ^= {cursor}
            elif key in ("j", "\x1b[B"):
                cursor = (cursor + 1) % len(question.options)
            elif key in ("k", "\x1b[A"):
                cursor = (cursor - 1) % len(question.options)
            elif key == OTHER_KEY:
                self.err.write("\n")
                typed = await self._other()
                return QuestionAnswer(selected=_labels(question, ticked), other=typed.other)
            elif key in ("\n", "\r", "") and ticked:
                self.err.write("\n")
                return QuestionAnswer(selected=_labels(question, ticked))

    def _draw_ticks(self, question: Question, ticked: set[int], cursor: int) -> None:
        cells = []
        for index, option in enumerate(question.options):
            mark = "[x]" if index in ticked else "[ ]"
            pointer = "›" if index == cursor else " "
            cells.append(f"{pointer}{mark} {option.label[:24]}")
        self.err.write(CLEAR_LINE + "  " + "  ".join(cells))
        self.err.flush()

    async def _key(self) -> str:
        """One key (an arrow key as its whole escape sequence); Declined on Esc or EOF."""
        key = await read_line(self.input_fd, size=1) if self._keys.raw else await self._line()
        if key is None:
            raise Declined
        if key == ESCAPE and os.isatty(self.input_fd):
            rest = await _pending_bytes(self.input_fd)
            if not rest:
                raise Declined
            key += rest
        elif key == ESCAPE:
            raise Declined
        return key

    async def _other(self) -> QuestionAnswer:
        self.err.write(f"  {self.style.yellow('›')} your answer: ")
        self.err.flush()
        with self._keys.cooked():
            line = await read_line(self.input_fd)
        if line is None or not line.strip():
            raise Declined
        return QuestionAnswer(other=line.strip())

    async def _line(self) -> str | None:
        """Not a terminal: a line stands for a key (its first character; empty: Enter)."""
        line = await read_line(self.input_fd)
        return None if line is None else line[:1]


class _Keys:
    """Cbreak mode on a terminal ``fd`` while held (``raw``); nothing on a pipe."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.raw = os.isatty(fd)
        self._saved: list[Any] | None = None

    def __enter__(self) -> _Keys:
        if self.raw:
            import termios
            import tty

            self._saved = termios.tcgetattr(self.fd)
            tty.setcbreak(self.fd, termios.TCSANOW)
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._saved is not None:
            import termios

            termios.tcsetattr(self.fd, termios.TCSADRAIN, self._saved)

    @contextlib.contextmanager
    def cooked(self) -> Iterator[None]:
        """The terminal's own line editing for one typed line."""
        if self._saved is None:
            yield
            return
        import termios
        import tty

        termios.tcsetattr(self.fd, termios.TCSANOW, self._saved)
        try:
            yield
        finally:
            tty.setcbreak(self.fd, termios.TCSANOW)


async def _pending_bytes(fd: int) -> str:
    """What follows an Esc already typed (an arrow key's ``[A``), without waiting."""
    readable, _, _ = select.select([fd], [], [], 0.02)
    if not readable:
        return ""
    return os.read(fd, 8).decode("utf-8", "replace")


def _option_index(key: str, question: Question) -> int | None:
    if key.isdigit() and 1 <= int(key) <= len(question.options):
        return int(key) - 1
    return None


def _labels(question: Question, ticked: set[int]) -> list[str]:
    return [question.options[index].label for index in sorted(ticked)]


def _original_labels(
    params: AskQuestionParams, shown: AskQuestionParams, answers: list[QuestionAnswer]
) -> list[QuestionAnswer]:
    """``answers`` with each scrubbed label replaced by the label the daemon sent."""
    fixed = []
    for original, seen, answer in zip(params.questions, shown.questions, answers, strict=True):
        back = {s.label: o.label for s, o in zip(seen.options, original.options, strict=True)}
        fixed.append(
            QuestionAnswer(selected=[back[label] for label in answer.selected], other=answer.other)
        )
    return fixed


def terminal_questioner(
    before_asking: Callable[[], None] = lambda: None,
) -> TerminalQuestioner | None:
    """The question handler of ``send`` and ``chat``: the terminal's when stdin is one, else
    None (the capability is not declared: nobody is asked)."""
    try:
        interactive = os.isatty(0)
    except OSError:
        interactive = False
    if not interactive:
        return None
    return TerminalQuestioner(
        sys.stderr, Style(wants_color(sys.stderr)), before_asking=before_asking
    )
