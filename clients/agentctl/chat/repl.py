"""``agentctl chat``: an interactive session in the terminal.

Each line is a prompt; lines starting with ``/`` are commands: the chat's own (``/help``,
``/clear``…) first, any other ``/name`` is a custom command the daemon expands (an unknown one
is an error listing the session's commands). Tab completes ``/`` names. Lines starting with
``!`` run a shell command directly, without the model. Line editing and history come from
readline (history in the agentd state directory). Ctrl-C cancels a running turn and, when
idle, leaves; so does Ctrl-D or ``/exit``.

The connection stays open across turns on one event loop (``asyncio.Runner``); the loop only
runs during a turn or a command, while ``input()`` waits on the main thread between them.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys

from agentctl.approval.ask import TerminalApprover
from agentctl.chat import context as chat_context
from agentctl.chat.completion import BUILT_INS, SlashCompleter, custom_help
from agentctl.chat.history import load_history, save_history
from agentctl.chat.shell import format_context, run_shell
from agentctl.client import AgentClient, DaemonUnavailable
from agentctl.commands.session_choice import select_session
from agentctl.common import (
    UsageError,
    exit_code_for_exception,
    open_client,
    read_text_option,
    resolve_cwd,
    resolve_session_id,
    resolve_session_ids,
)
from agentctl.options import ChatOptions
from agentctl.prompt.images import load_image
from agentctl.render.listing import format_session_table
from agentctl.render.stream import TerminalRenderer
from agentctl.render.style import Style, wants_color
from agentctl.run import outcome
from agentctl.run.drive import StopSignal, drive_run, interrupt_handling
from agentd.errors import InvalidParams, RpcError
from agentd.protocol.commands import SessionCommandsParams
from agentd.protocol.content import ImageContent
from agentd.protocol.events import SessionEvent
from agentd.protocol.methods import (
    ModelsListParams,
    SessionDeleteParams,
    SessionInfo,
    SessionListParams,
    SessionLoadParams,
    SessionNewParams,
    SessionNoteParams,
    SetModelParams,
)

HELP = """commands:
  /help                 this text
  /clear                start a new session
  /sessions [ID]        sessions of this directory; with an id (or prefix), switch to it
  /model [NAME]         list the models, or switch (/model PROVIDER NAME: provider too)
  /image FILE           attach an image (PNG, JPEG, GIF, WebP) to your next message
  /rewind [N]           go back to before the last prompt (or the N-th last), files
                        included; that prompt comes back on the input line to edit
                        (conflicts stop it; /rewind [N] --force rewinds anyway)
  /compact [TEXT]       summarise the older messages now (TEXT: what the summary keeps)
  /exit                 leave (also Ctrl-D, or Ctrl-C when idle)
  !COMMAND              run COMMAND in the shell; it and its output are recorded in the
                        session, and the model reads them with your next message
  /NAME [ARGS]          a custom command (Tab completes / names)"""


def prompt_text(style: Style) -> str:
    """The input prompt; colour codes are wrapped in \\x01/\\x02 so readline can measure it."""
    if not style.enabled:
        return "› "
    return "\x01\x1b[1;36m\x02›\x01\x1b[0m\x02 "


class Repl:
    """The read-eval-print loop of one chat (one connection, one current session)."""

    def __init__(
        self,
        runner: asyncio.Runner,
        client: AgentClient,
        options: ChatOptions,
        cwd: str,
        system_prompt: str | None,
    ) -> None:
        self.runner = runner
        self.client = client
        self.options = options
        self.cwd = cwd
        self.system_prompt = system_prompt
        self.unused: str | None = None
        """The id of a session this chat created in which nothing was said yet (deleted on
        leaving or switching, so an empty chat leaves no session behind)."""
        self.style = Style(wants_color(sys.stdout))
        self.renderer = TerminalRenderer(
            sys.stdout,
            style=self.style,
            animate=self.style.enabled,
            cwd=cwd,
            markdown=self.style.enabled,
            verbose=options.verbose,
        )
        self.session: SessionInfo | None = None
        self.prefill = ""
        """Text for the next input line (the prompt a ``/rewind`` went back over)."""
        self.images: list[ImageContent] = []
        self.completer = SlashCompleter()
        self.completer.install()

    def say(self, text: str) -> None:
        """Print one line."""
        self.renderer.line(text)

    def loop(self) -> int:
        """Read lines until the user leaves; return the exit code."""
        self.options = self.runner.run(resolve_session_ids(self.client, self.options))
        self.session = self.runner.run(
            select_session(self.client, self.options, self.cwd, self.system_prompt)
        )
        if not (self.options.session or self.options.continue_):
            self.unused = self.session.session_id
        self._banner()
        while True:
            self._refresh_commands()
            try:
                line = self._input()
            except (EOFError, KeyboardInterrupt):
                sys.stdout.write("\n")
                self._drop_unused()
                return outcome.OK
            text = line.strip()
            if not text:
                continue
            try:
                if not self._handle(text):
                    self._drop_unused()
                    return outcome.OK
            except (RpcError, UsageError) as exc:
                self.say(self.style.red(f"✗ {getattr(exc, 'message', exc)}"))
            if self.client.closed:
                self.say(self.style.red("✗ the daemon closed the connection"))
                return outcome.AGENT_ERROR

    def _input(self) -> str:
        """One input line; a pending :attr:`prefill` is put on it first (readline)."""
        prefill, self.prefill = self.prefill, ""
        try:
            import readline
        except ImportError:
            prefill = ""
        if not prefill:
            return input(prompt_text(self.style))

        readline.set_startup_hook(lambda: readline.insert_text(prefill))
        try:
            return input(prompt_text(self.style))
        finally:
            readline.set_startup_hook()

    def _banner(self) -> None:
        info = self.session
        assert info is not None
        self.say(
            self.style.dim(
                f"session {info.session_id} · {info.provider}/{info.model} · {self.cwd}\n"
                "/help for commands, Ctrl-D to leave"
            )
        )

    def _handle(self, text: str) -> bool:
        """Act on one line; False means leave."""
        if text.startswith("!"):
            self._shell(text[1:].strip())
        elif text.startswith("/"):
            return self._command(text)
        else:
            self._turn(text)
        return True

    def _refresh_commands(self) -> None:
        """Read the session's custom commands for completion (kept as they were on failure)."""
        if self.session is None or self.client.closed:
            return
        params = SessionCommandsParams(session_id=self.session.session_id)
        with contextlib.suppress(RpcError, OSError):
            self.completer.custom = self.runner.run(self.client.sessions.commands(params)).commands

    def _command(self, text: str) -> bool:
        name, _, rest = text.partition(" ")
        words = rest.split()
        if name not in BUILT_INS:  # a custom command: the daemon expands it
            self._turn(text)
            return True
        if name in ("/exit", "/quit"):
            return False
        if name == "/help":
            self.say("\n".join(filter(None, [HELP, custom_help(self.completer.custom)])))
        elif name == "/clear":
            self._drop_unused()
            self.session = self.runner.run(self._new_session())
            self.unused = self.session.session_id
            self._banner()
        elif name == "/sessions" and len(words) == 1:
            self._switch_session(words[0])
        elif name == "/sessions":
            listing = SessionListParams(cwd=self.cwd, limit=10)
            page = self.runner.run(self.client.sessions.list(listing))
            self.say(format_session_table(page.sessions, self.style) or "no sessions yet")
            self.say(self.style.dim("/sessions ID switches to one (a prefix of the id will do)"))
        elif name == "/model" and not words:
            self._list_models()
        elif name == "/model" and len(words) <= 2:
            self._switch_model(words)
        elif name == "/image" and rest.strip():
            self._attach(rest.strip())
        elif name == "/rewind":
            self._rewind(words)
        elif name == "/compact":
            self._compact(rest.strip())
        else:
            self.say(self.style.red(f"incomplete command {text!r}; /help lists them"))
        return True

    async def _new_session(self) -> SessionInfo:
        current = self.session
        assert current is not None
        params = SessionNewParams(
            cwd=self.cwd,
            provider=current.provider,
            model=current.model,
            system_prompt=self.system_prompt,
            permission_mode=current.permission_mode,
            sandbox=getattr(self.options, "sandbox", None),
            max_turns=self.options.max_turns,
            base_url=self.options.base_url,
        )
        return await self.client.sessions.create(params)

    def _drop_unused(self) -> None:
        """Delete the session this chat created if nothing was said in it."""
        if self.unused is not None and not self.client.closed:
            with contextlib.suppress(RpcError, OSError):
                self.runner.run(
                    self.client.sessions.delete(SessionDeleteParams(session_id=self.unused))
                )
        self.unused = None

    def _switch_session(self, text: str) -> None:
        session_id = self.runner.run(resolve_session_id(self.client, text))
        params = SessionLoadParams(session_id=session_id)
        loaded = self.runner.run(self.client.sessions.load(params))
        self._drop_unused()
        self.session = loaded.session
        self._banner()

    def _list_models(self) -> None:
        assert self.session is not None
        current = (self.session.provider, self.session.model)
        listing = self.runner.run(self.client.sessions.models(ModelsListParams(cwd=self.cwd)))
        for item in listing.models:
            mark = "●" if (item.provider, item.model) == current else " "
            self.say(f"{mark} {item.provider} {item.model}")
        self.say(self.style.dim("/model NAME or /model PROVIDER NAME switches"))

    def _switch_model(self, words: list[str]) -> None:
        assert self.session is not None
        provider, model = (words[0], words[1]) if len(words) == 2 else (None, words[0])
        params = SetModelParams(session_id=self.session.session_id, model=model, provider=provider)
        self.session = self.runner.run(self.client.sessions.set_model(params))
        self.say(self.style.dim(f"model: {self.session.provider}/{self.session.model}"))

    def _rewind(self, words: list[str]) -> None:
        assert self.session is not None
        turns, force = chat_context.rewind_args(words)
        session_id = self.session.session_id
        result = self.runner.run(chat_context.rewind(self.client, session_id, turns, force=force))
        report, self.prefill = chat_context.rewind_report(result, session_id, self.cwd)
        self.say(self.style.dim(report))

    def _compact(self, instructions: str) -> None:
        assert self.session is not None
        self.say(self.style.dim("compacting…"))
        session_id = self.session.session_id
        result = self.runner.run(chat_context.compact(self.client, session_id, instructions))
        self.say(self.style.dim(chat_context.compact_report(result)))

    def _shell(self, command: str) -> None:
        """Run ``!command`` here, then record it and its output in the session (session/note)."""
        assert self.session is not None
        if not command:
            self.say(self.style.red("usage: !COMMAND"))
            return
        result = run_shell(command, self.cwd, sys.stdout)
        self.unused = None
        params = SessionNoteParams(session_id=self.session.session_id, text=format_context(result))
        self.runner.run(self.client.sessions.note(params))
        note = f"exit {result.exit_code}" if result.exit_code is not None else "interrupted"
        self.say(self.style.dim(f"({note}; recorded in the session for the model)"))

    def _attach(self, path: str) -> None:
        """Keep the image at ``path`` for the next message (UsageError when it cannot go)."""
        image = load_image(path)
        self.images.append(image)
        size = len(image.data) * 3 // 4 // 1024
        count = len(self.images)
        self.say(
            self.style.dim(
                f"⊕ {path} ({image.mime_type}, {size} KB) goes with your next message"
                + (f" ({count} images)" if count > 1 else "")
            )
        )

    def _turn(self, text: str) -> None:
        assert self.session is not None
        unused, self.unused = self.unused, None
        images, self.images = self.images, []
        try:
            summary = self.runner.run(self._run(self.session.session_id, text, images))
        except InvalidParams:  # refused before anything was recorded (an unknown /command)
            self.unused, self.images = unused, images + self.images
            raise
        self.renderer.footer(summary)

    async def _run(
        self, session_id: str, prompt: str, images: list[ImageContent] | None = None
    ) -> outcome.RunSummary:
        stop = StopSignal()

        def view(data: bytes, event: SessionEvent | None) -> None:
            if event is not None:
                self.renderer.event(event.event, event.session_id)

        with interrupt_handling(stop, self.renderer.pause):
            return await drive_run(
                self.client,
                session_id,
                prompt,
                view,
                stop=stop,
                max_turns=self.options.max_turns,
                images=images,
            )


def chat_main(options: ChatOptions) -> int:
    """Entry point of ``agentctl chat``."""
    try:
        cwd = resolve_cwd(options.cwd)
        system_prompt = read_text_option(options.system_prompt, "--system-prompt")
        if options.session and options.continue_:
            raise UsageError("--session and --continue cannot be combined")
    except UsageError as exc:
        return exit_code_for_exception(exc)
    history = load_history()
    try:
        with asyncio.Runner() as runner:
            return _chat(runner, options, cwd, system_prompt)
    finally:
        save_history(history)


def _chat(runner: asyncio.Runner, options: ChatOptions, cwd: str, system_prompt: str | None) -> int:
    style = Style(wants_color(sys.stderr))
    asks = options.permission in (None, "ask")  # None: the configuration's mode, ask by default
    approver = TerminalApprover(sys.stderr, style, cwd=cwd) if asks else None
    try:
        client = runner.run(open_client(options, permission_handler=approver, cwd=cwd))
    except (RpcError, DaemonUnavailable, OSError) as exc:
        return exit_code_for_exception(exc)
    try:
        repl = Repl(runner, client, options, cwd, system_prompt)
        if approver is not None:
            approver.before_asking = repl.renderer.pause
        return repl.loop()
    except (RpcError, UsageError, DaemonUnavailable, OSError) as exc:
        return exit_code_for_exception(exc)
    finally:
        runner.run(client.close())
