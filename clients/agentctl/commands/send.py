"""``agentctl send``: run one prompt headlessly and report it (terminal text, quiet or JSON).

Runs the session in the shared daemon when one answers, else in this process
(:mod:`agentctl.local`; ``--stdio``: always), or in a private daemon process
(``--daemon-process``) or the shared daemon started if need be (``--shared``); picks the
session (new, ``--session``, ``--continue``, ``--fork``), streams the run to the chosen output
and exits with the code of :mod:`agentctl.run.outcome`.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import TYPE_CHECKING, Any, NamedTuple

import msgspec

from agentctl.approval.ask import TerminalApprover
from agentctl.approval.questions import terminal_questioner
from agentctl.client import (
    AgentClient,
    DaemonUnavailable,
    PermissionHandler,
    QuestionHandler,
    connect,
    connect_running,
    spawn_stdio,
)
from agentctl.commands.session_choice import check_session_flags, select_session
from agentctl.common import (
    UsageError,
    exit_code_for_exception,
    read_text_option,
    resolve_cwd,
    resolve_session_ids,
    run_command,
    socket_option,
    stdin_is_tty,
    warn,
)
from agentctl.launch import private_log
from agentctl.options import SendOptions
from agentctl.prompt.images import load_images
from agentctl.prompt.piped import Prompt, read_prompt
from agentctl.prompt.provider_file import make_undumpable, read_provider_env_file
from agentctl.render.footer import FinalText
from agentctl.render.stream import TerminalRenderer
from agentctl.render.style import Style, wants_color
from agentctl.run import outcome
from agentctl.run.drive import StopSignal, drive_run, interrupt_handling
from agentctl.run.jsonout import JsonLines
from agentctl.run.outcome import RunSummary, error_result_line
from agentctl.run.report import RunReport, write_failure_summary, write_result_file
from agentd.errors import InvalidParams, RpcError
from agentd.protocol.content import ImageContent
from agentd.protocol.events import SessionEvent
from agentd.protocol.methods import (
    SessionDeleteParams,
    SessionInfo,
)
from agentd.protocol.provider_env import provider_variables

if TYPE_CHECKING:
    from agentctl.local import LocalClient


class Output(msgspec.Struct):
    """Where the run goes: ``text`` (a terminal: everything rendered on stdout), ``piped``
    (stdout is not a terminal: the final assistant text on stdout, progress on stderr),
    ``quiet`` (the final text only) or ``json`` (JSON lines)."""

    mode: str
    renderer: TerminalRenderer | None = None
    final: FinalText = msgspec.field(default_factory=FinalText)
    json: JsonLines | None = None
    report: RunReport | None = None
    session_id: str = ""

    def view(self, data: bytes, event: SessionEvent | None) -> None:
        """Hand one event to the chosen output (a subagent's events: to the renderer and
        the JSON lines only)."""
        own = event is None or event.session_id == self.session_id
        if self.report is not None and event is not None and own:
            self.report.observe(event.event)
        if self.json is not None:
            self.json.raw(data)
        elif event is not None:
            if self.renderer is not None:
                self.renderer.event(event.event, event.session_id)
            if own:
                self.final.event(event.event)

    def session(self, info: SessionInfo) -> None:
        """Take the run's session; announce it (JSON mode only)."""
        self.session_id = info.session_id
        if self.json is not None:
            self.json.session(info)

    def finish(self, summary: RunSummary) -> None:
        """The last words: footer, final text or the result line."""
        if self.json is not None:
            self.json.write(summary.result_line())
            return
        if self.renderer is not None:
            self.renderer.footer(summary)
            self.renderer.close()
        if self.mode in ("piped", "quiet"):
            text = self.final.text
            sys.stdout.write(text if text.endswith("\n") or not text else text + "\n")
            sys.stdout.flush()
        if self.mode == "quiet" and summary.exit_code != outcome.OK:
            _quiet_reason(summary)

    def failed(self, message: str, exit_code: int) -> None:
        """No run took place (JSON mode: a result line saying why)."""
        if self.json is not None:
            self.json.write(error_result_line(message, exit_code))


def _quiet_reason(summary: RunSummary) -> None:
    reason = summary.error or {
        outcome.MAX_TURNS: "max turns reached",
        outcome.TIMEOUT: "timed out",
        outcome.PERMISSION_REFUSED: "a permission was refused",
        outcome.BUDGET: "budget reached",
        outcome.INTERRUPTED: "interrupted",
        outcome.CANCELLED: "cancelled",
        outcome.BLOCKED: "blocked by a hook",
    }.get(summary.exit_code, summary.stop_reason)
    warn(f"{reason} (session {summary.session_id})")


def make_output(options: SendOptions, cwd: str) -> Output:
    """The output the flags and stdout ask for (see :class:`Output`)."""
    if options.json:
        return Output("json", json=JsonLines(sys.stdout.buffer))
    if options.quiet:
        return Output("quiet")
    if not stdout_is_tty():
        color = wants_color(sys.stderr)
        progress = TerminalRenderer(
            sys.stderr,
            style=Style(color),
            animate=color,
            cwd=cwd,
            show_text=False,
            verbose=options.verbose,
        )
        return Output("piped", renderer=progress)
    color = wants_color(sys.stdout)
    renderer = TerminalRenderer(
        sys.stdout,
        style=Style(color),
        animate=color,
        cwd=cwd,
        markdown=color,
        verbose=options.verbose,
    )
    return Output("text", renderer=renderer)


def stdout_is_tty() -> bool:
    """True when stdout is a terminal."""
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


def permission_handler(options: SendOptions, output: Output, cwd: str) -> PermissionHandler | None:
    """Ask at the terminal in ``ask`` mode (asked for, or the configuration's, which is ``ask``
    by default) when stdin is one; otherwise never answer.

    With no handler the daemon refuses every request it would have asked about (exit 5).
    """
    if options.permission not in (None, "ask") or not stdin_is_tty():
        return None
    pause = output.renderer.pause if output.renderer is not None else (lambda: None)
    return TerminalApprover(
        sys.stderr, Style(wants_color(sys.stderr)), before_asking=pause, cwd=cwd
    )


def send_main(options: SendOptions) -> int:
    """Entry point of ``agentctl send``."""
    try:
        check_session_flags(options)
        cwd = resolve_cwd(options.cwd)
        system_prompt = read_text_option(options.system_prompt, "--system-prompt")
        prompt = read_prompt(options.prompt, stdin_is_tty())
        _tell_attached(prompt, options)
        images = load_images(options.image)
        provider_env = _provider_env_file(options)
    except UsageError as exc:
        code = exit_code_for_exception(exc)
        _report_failure(options, " ".join(options.prompt or ()), str(exc), code)
        return code
    output = make_output(options, cwd)
    if options.result_file or options.summary_file:
        output.report = RunReport(prompt.shown)
    started = Started(prompt, system_prompt, provider_env, images)
    return run_command(lambda: _send(options, output, cwd, started))


def _tell_attached(prompt: Prompt, options: SendOptions) -> None:
    """Say on stderr what piped input went with the words (a cut one: even with --quiet)."""
    if prompt.note is None:
        return
    if prompt.note.endswith("cut"):
        warn(prompt.note)
    elif not (options.quiet or options.json):
        sys.stderr.write(f"agentctl: {prompt.note}\n")
        sys.stderr.flush()


def _provider_env_file(options: SendOptions) -> dict[str, str] | None:
    """``--provider-env-file``'s variables (None without the flag); once they are in this
    process's memory it is made non-dumpable (see :mod:`agentctl.prompt.provider_file`)."""
    path = options.provider_env_file
    if path is None:
        return None

    variables = read_provider_env_file(path)
    make_undumpable()
    return variables


class Started(NamedTuple):
    """What ``send`` read before connecting: the prompt, the system prompt (``@FILE`` read),
    ``--provider-env-file``'s variables and the ``--image`` files' content."""

    prompt: Prompt
    system_prompt: str | None
    provider_env: dict[str, str] | None
    images: list[ImageContent] | None


async def _send(options: SendOptions, output: Output, cwd: str, started: Started) -> int:
    prompt, system_prompt, provider_env, images = started
    try:
        pause = output.renderer.pause if output.renderer is not None else (lambda: None)
        client = await open_send_client(
            options,
            permission_handler=permission_handler(options, output, cwd),
            cwd=cwd,
            question_handler=terminal_questioner(pause),
        )
        if provider_env:  # over this process's own provider variables, as connect() sends
            client.provider_env = {**provider_variables(os.environ), **provider_env}
        async with client:
            options = await resolve_session_ids(client, options)
            info = await select_session(client, options, cwd, system_prompt)
            output.session(info)
            summary = await _run_or_drop(client, info, prompt.text, options, output, images)
    except BrokenPipeError:
        raise
    except (UsageError, RpcError, DaemonUnavailable, OSError) as exc:
        code = exit_code_for_exception(exc)
        message = exc.message if isinstance(exc, RpcError) else str(exc)
        output.failed(message, code)
        _report_failure(options, prompt.shown, message, code)
        return code
    summary.session_file = info.path
    output.finish(summary)
    if output.report is not None:
        output.report.write(summary, options.result_file, options.summary_file)
    return summary.exit_code


async def open_send_client(
    options: SendOptions,
    *,
    permission_handler: PermissionHandler | None,
    cwd: str,
    question_handler: QuestionHandler | None,
) -> AgentClient | LocalClient:
    """Where the run goes: a private daemon process (``--daemon-process``), the shared daemon
    started if need be (``--shared``, or ``AGENTCTL_SHARED=1``), this process
    (``--stdio``); by default the shared daemon when one answers on the socket, else this
    process (:mod:`agentctl.local`), nothing started."""
    asks, questions = permission_handler, question_handler
    if options.daemon_process:
        return await spawn_stdio(
            cwd=cwd, log_path=private_log(), permission_handler=asks, question_handler=questions
        )
    socket = socket_option(options)
    if options.shared or (os.environ.get(SHARED_ENV) == "1" and not options.stdio):
        return await connect(
            socket, autostart=True, permission_handler=asks, question_handler=questions
        )
    if not options.stdio:
        running = await connect_running(socket, permission_handler=asks, question_handler=questions)
        if running is not None:
            return running
    from agentctl.local import LocalClient

    return LocalClient.open(
        log_path=private_log(), permission_handler=asks, question_handler=questions
    )


SHARED_ENV = "AGENTCTL_SHARED"
"""``AGENTCTL_SHARED=1``: a plain ``send`` uses the shared daemon, starting it when none runs
(as ``--shared``)."""


def _report_failure(options: SendOptions, prompt: str, message: str, code: int) -> None:
    """The result line and step summary of a run that could not start."""
    if options.result_file:
        write_result_file(options.result_file, error_result_line(message, code))
    if options.summary_file:
        write_failure_summary(options.summary_file, prompt, message, code)


async def _run_or_drop(
    client: AgentClient | LocalClient,
    info: SessionInfo,
    prompt: str,
    options: SendOptions,
    output: Output,
    images: list[ImageContent] | None,
) -> RunSummary:
    """:func:`_run`; a prompt refused before anything was recorded (an unknown
    ``/command``: InvalidParams) in a session this command created (new, or a fork) deletes
    that session, so it leaves nothing behind."""
    try:
        return await _run(client, info, prompt, options, output, images)
    except InvalidParams:
        if not (options.session or options.continue_):
            unused = SessionDeleteParams(session_id=info.session_id, force=True)
            with contextlib.suppress(RpcError, OSError):
                await client.sessions.delete(unused)
        raise


async def _run(
    client: AgentClient | LocalClient,
    info: SessionInfo,
    prompt: str,
    options: SendOptions,
    output: Output,
    images: list[ImageContent] | None,
) -> RunSummary:
    stop = StopSignal()

    def on_first_interrupt() -> None:
        if output.renderer is not None:
            output.renderer.pause()
        if not options.json:
            sys.stderr.write("cancelling… (Ctrl-C again to quit now)\n")
            sys.stderr.flush()

    view: Any = output.view
    with interrupt_handling(stop, on_first_interrupt):
        return await drive_run(
            client,
            info.session_id,
            prompt,
            view,
            timeout=options.timeout,
            stop=stop,
            max_turns=options.max_turns,
            budget=_budget(options),
            images=images,
        )


def _budget(options: SendOptions) -> dict[str, Any] | None:
    """The ``--max-cost`` / ``--max-tokens`` caps given, as prompt keyword arguments."""
    caps = {"max_cost": options.max_cost, "max_tokens": options.max_tokens}
    given = {name: value for name, value in caps.items() if value is not None}
    return given or None
