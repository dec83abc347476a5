"""A real headless Neovim (pynvim) whose built-in LSP client runs ``agentd lsp``, configured
with the snippets of ``editors/lsp/README.md`` and no agentd plugin."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import pynvim

from tests.harness import Home, wait_until
from tests.lsp_editors.harness import editor_env, snippet

_PRELUDE = """
_G.agentd_test_notes = {}
vim.notify = function(msg, level)
  table.insert(_G.agentd_test_notes, {msg = msg, level = level or vim.log.levels.INFO})
end
"""

_CLIENT = """
local buf = ...
local clients = vim.lsp.get_clients and vim.lsp.get_clients({bufnr = buf})
  or vim.lsp.buf_get_clients(buf)
for _, client in pairs(clients) do
  if client.name == "agentd" and client.initialized then
    return client.id
  end
end
return vim.NIL
"""


class LspNvim:
    """One ``nvim --embed --headless --clean`` in ``home.project`` with the README snippets
    ``snippets`` run in order (the environment is ``home.env``: ``agentd`` is this venv's)."""

    def __init__(self, binary: str, home: Home, snippets: list[str]) -> None:
        self.home = home
        self.closed = False
        env = editor_env(home)
        argv = ["env", "-i", *(f"{k}={v}" for k, v in env.items()), binary]
        self.nvim = pynvim.attach("child", argv=[*argv, "--embed", "--headless", "--clean"])
        self.nvim.command(f"cd {home.project}")
        self.nvim.exec_lua(_PRELUDE)
        for name in snippets:
            self.nvim.exec_lua(snippet(name))

    def lua(self, code: str, *args: Any) -> Any:
        return self.nvim.exec_lua(code, *args)

    def open(self, name: str) -> pynvim.api.Buffer:
        """``:edit name`` (relative to the project) and wait until agentd's client is
        attached to the buffer and initialized; returns the buffer."""
        self.nvim.command(f"edit {name}")
        buffer = self.nvim.current.buffer
        self.wait_for(lambda: self.client_id(buffer) is not None, "agentd attached", 60)
        return buffer

    def client_id(self, buffer: pynvim.api.Buffer) -> int | None:
        """The id of the initialized agentd client attached to ``buffer``, if any."""
        found = self.lua(_CLIENT, buffer.handle)
        return int(found) if found is not None else None

    def notes(self) -> list[str]:
        """The messages passed to ``vim.notify`` so far."""
        return [str(note["msg"]) for note in self.lua("return _G.agentd_test_notes")]

    def wait_note(self, prefix: str, timeout: float = 60) -> str:
        """Wait for a notification starting with ``prefix``; returns it."""

        def found() -> str | None:
            return next((n for n in self.notes() if n.startswith(prefix)), None)

        return str(self.wait_for(found, f"a notification {prefix!r}", timeout))

    def wait_for(self, predicate: Any, what: str, timeout: float = 30) -> Any:
        """Poll ``predicate`` (deadline scaled); on timeout fail with the notifications,
        :messages and the end of the LSP log."""
        try:
            return wait_until(predicate, timeout, what, interval=0.05)
        except TimeoutError as error:
            raise AssertionError(f"{error}\n--- {self.diagnostics()}") from None

    def diagnostics(self) -> str:
        """What to show when a wait fails: notes, :messages, the daemon's stderr log."""
        messages = str(self.nvim.command_output("messages"))
        path = Path(str(self.lua("return vim.lsp.get_log_path()")))
        log = path.read_text(errors="replace")[-4000:] if path.exists() else "(no log)"
        return f"notes: {self.notes()}\n--- :messages:\n{messages}\n--- lsp log:\n{log}"

    def in_prompt(self) -> bool:
        """Whether Neovim waits in a prompt (``inputlist``: blocked on 0.7, reading a command
        line on 0.12)."""
        mode = self.nvim.api.get_mode()
        return bool(mode["blocking"] or mode["mode"].startswith(("c", "r")))

    def modified(self, buffer: pynvim.api.Buffer) -> bool:
        return bool(self.lua("return vim.bo[...].modified", buffer.handle))

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        with contextlib.suppress(Exception):  # nvim exits before answering
            self.nvim.command("qa!")
        with contextlib.suppress(Exception):
            self.nvim.close()
