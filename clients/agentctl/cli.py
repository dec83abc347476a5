"""``agentctl``: the shell client of agentd (entry point :func:`main`).

Start-up is kept cheap: ``--version`` and ``bridge`` are answered before argparse is even
imported, and each command imports its own module (and msgspec, asyncio) only when it runs.
A private ``--stdio`` daemon is started before any of that (:mod:`agentctl.prestart`), so
that its start-up overlaps with the client's.
Exit codes are listed in :mod:`agentctl.run.outcome`.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    import argparse

USAGE_ERROR = 2


def run() -> NoReturn:
    """The ``agentctl`` command: :func:`main`, then a fast exit.

    Once :func:`main` returns, the output is written and a private daemon has exited; the
    interpreter's teardown (module and object cleanup) would only delay the shell prompt, so
    the process waits for its non-daemon threads, flushes its streams and ends at once. A
    closed stdout at that point ends it with 141, as ``main`` does for one closed earlier.
    """
    code = main()
    threading = sys.modules.get("threading")
    if threading is not None:  # what the interpreter would wait for: non-daemon threads
        for thread in threading.enumerate():
            if thread is not threading.current_thread() and not thread.daemon:
                thread.join()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BrokenPipeError:
            from agentctl.run.outcome import OUTPUT_CLOSED

            code = code or OUTPUT_CLOSED
        except (OSError, ValueError):
            pass
    os._exit(code)


def main(argv: list[str] | None = None) -> int:
    """Run one ``agentctl`` command; return its exit code."""
    args = sys.argv[1:] if argv is None else argv
    if args[:1] in (["--version"], ["-V"]):
        from agentd import __version__

        sys.stdout.write(f"agentctl {__version__}\n")
        return 0
    if args[:1] == ["bridge"]:
        from agentctl.commands.bridge import bridge_main

        return bridge_main(args[1:])
    from agentctl.prestart import start_early

    start_early(args)
    from agentctl.parser import build_parser

    parser = build_parser(args)
    try:
        options = parser.parse_args(args)
    except SystemExit as exc:  # argparse: usage errors (2) and --help (0)
        return exc.code if isinstance(exc.code, int) else USAGE_ERROR
    return dispatch(options)


def dispatch(namespace: argparse.Namespace) -> int:
    """Run the command module chosen on the command line, given its typed options
    (:func:`agentctl.options.typed_options`, the one place they are built)."""
    from agentctl import options as typed

    options = typed.typed_options(namespace)
    match options:
        case typed.SendOptions():
            from agentctl.commands.send import send_main

            return send_main(options)
        case typed.ChatOptions():
            from agentctl.chat.repl import chat_main

            return chat_main(options)
        case typed.AttachOptions():
            from agentctl.commands.attach import attach_main

            return attach_main(options)
        case typed.DaemonOptions():
            from agentctl.commands.daemon import daemon_main

            return daemon_main(options)
        case typed.BridgeOptions():
            from agentctl.commands.bridge import bridge_main

            return bridge_main(list(options.bridge_args))
        case typed.TrustOptions():
            from agentctl.commands.trust import trust_main

            return trust_main(options)
        case typed.McpOptions():
            from agentctl.commands.mcp import mcp_main

            return mcp_main(options)
        case typed.SkillsOptions():
            from agentctl.commands.skills import skills_main

            return skills_main(options)
        case typed.LspOptions():
            from agentctl.commands.lsp import lsp_main

            return lsp_main(options)
        case typed.WebOptions():
            from agentctl.commands.web import web_main

            return web_main(options)
        case typed.RewindOptions():
            from agentctl.commands.rewind import rewind_main

            return rewind_main(options)
        case typed.RpcOptions():
            from agentctl.commands.rpc import rpc_main

            return rpc_main(options)
        case typed.BatchOptions():
            from agentctl.batch.cli import batch_main

            return batch_main(options)
        case typed.PsOptions() | typed.KillOptions():
            from agentctl.commands.processes import processes_main

            return processes_main(options)
    from agentctl.commands.sessions import command_main

    return command_main(options)


if __name__ == "__main__":
    sys.exit(main())
