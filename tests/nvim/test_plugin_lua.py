"""The plugin's own layers inside real Neovim: lazy start-up, framing, JSON encoding."""

from __future__ import annotations

import json

from tests.nvim.harness import Editor

COMMANDS = [
    "Agent",
    "AgentCancel",
    "AgentChat",
    "AgentDiff",
    "AgentFix",
    "AgentKill",
    "AgentLog",
    "AgentModel",
    "AgentNew",
    "AgentProcesses",
    "AgentRewind",
    "AgentSend",
    "AgentSessions",
]


def test_startup_defines_commands_and_loads_nothing(editor: Editor) -> None:
    commands = editor.lua("return vim.tbl_keys(vim.api.nvim_get_commands({}))")
    assert sorted(c for c in commands if c.startswith("Agent")) == COMMANDS
    loaded = editor.lua(
        "local t = {} for k in pairs(package.loaded) do"
        " if k:match('^agentd') then t[#t + 1] = k end end; table.sort(t); return t"
    )
    assert loaded == ["agentd", "agentd.config"]  # setup() was called by the harness


CUT = """
local rpc = require('agentd.rpc')
local stream, bodies = ..., {}
for split = 1, #stream do
  local buf, got = '', {}
  for _, chunk in ipairs({stream:sub(1, split), stream:sub(split + 1)}) do
    buf = buf .. chunk
    local out, pos = rpc.cut_frames(buf, 1)
    buf = buf:sub(pos)
    vim.list_extend(got, out)
  end
  bodies[#bodies + 1] = got
end
return bodies
"""


def test_frames_are_cut_at_any_split_point(editor: Editor) -> None:
    first = json.dumps(
        {"jsonrpc": "2.0", "method": "x", "params": {"t": "héllo ✓"}}, ensure_ascii=False
    )
    second = '{"jsonrpc":"2.0","id":1,"result":null}'
    stream = (
        f"Content-Length: {len(first.encode())}\r\n\r\n{first}"
        f"content-length:{len(second)}\nContent-Type: application/json\n\n{second}"
    )
    results = editor.lua(CUT, stream)
    assert all(got == [first, second] for got in results)


def test_requests_send_objects_for_empty_params(editor: Editor) -> None:
    frame = editor.lua("return require('agentd.rpc').frame({params = vim.empty_dict(), id = 1})")
    head, body = frame.split("\r\n\r\n")
    assert head == f"Content-Length: {len(body)}"
    assert json.loads(body) == {"params": {}, "id": 1}


def test_bad_setup_options_are_reported(editor: Editor) -> None:
    editor.lua("require('agentd').setup({connection = 'tcp'})")
    assert editor.notes() == ['4 agentd: connection must be one of shared, stdio, not "tcp"']


def test_setup_keymaps_map_commands(editor: Editor) -> None:
    editor.lua("require('agentd').setup({keymaps = {chat = '<F5>'}})")
    editor.nvim.input("<F5>")
    assert editor.wait_for(lambda: editor.lua("return require('agentd.chat').windows()"))
