-- agentd.nvim: the agentd coding agent in Neovim. See :h agentd.
--
-- Requiring this module loads nothing else; the connection, the chat and the pickers load
-- when first used.
local M = {}

local global_keys = {
  chat = "AgentChat",
  cancel = "AgentCancel",
  sessions = "AgentSessions",
  model = "AgentModel",
  fix = "AgentFix",
  diff = "AgentDiff",
  log = "AgentLog",
}

--- Configure the plugin (every option is optional; see :h agentd-setup).
function M.setup(opts)
  local options, err = require("agentd.config").apply(opts)
  if not options then
    vim.notify("agentd: " .. err, vim.log.levels.ERROR, { title = "agentd" })
    return
  end
  for name, lhs in pairs(options.keymaps or {}) do
    local command = global_keys[name]
    if command then
      vim.keymap.set("n", lhs, "<Cmd>" .. command .. "<CR>", { desc = "agentd: " .. name })
    elseif name == "send" then
      vim.keymap.set("x", lhs, ":AgentSend<CR>", { desc = "agentd: send the selection" })
    end
  end
end

--- Send a prompt to the current session (a new one on first use).
function M.prompt(text)
  require("agentd.commands").send_text(text)
end

--- The current session's id, or nil.
function M.session_id()
  local client = package.loaded["agentd.client"]
  return client and client.session and client.session.sessionId or nil
end

--- A short state for statuslines ("agentd: idle mock/mock-model").
function M.status()
  local client = package.loaded["agentd.client"]
  return client and client.status() or "agentd: not connected"
end

return M
