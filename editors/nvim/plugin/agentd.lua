-- Defines the :Agent* commands and nothing else; every module loads on first use.
if vim.g.loaded_agentd or vim.fn.has("nvim-0.7") == 0 then
  return
end
vim.g.loaded_agentd = true

local function command(name, handler, opts)
  vim.api.nvim_create_user_command(name, function(args)
    require("agentd.commands")[handler](args)
  end, opts)
end

command("Agent", "agent", { nargs = "*", desc = "agentd: send a prompt" })
command("AgentChat", "chat", { nargs = 0, desc = "agentd: toggle the chat split" })
command("AgentSend", "send", { nargs = "*", range = true, desc = "agentd: send the selected lines" })
command("AgentFix", "fix", { nargs = "*", desc = "agentd: fix the buffer's diagnostics" })
command("AgentCancel", "cancel", { nargs = 0, desc = "agentd: stop the run" })
command("AgentNew", "new", { nargs = 0, desc = "agentd: start a new session" })
command("AgentSessions", "sessions", { nargs = 0, bang = true, desc = "agentd: stored sessions" })
command("AgentModel", "model", { nargs = 0, desc = "agentd: switch the model" })
command("AgentLog", "log", { nargs = 0, desc = "agentd: the connection log" })
command("AgentDiff", "diff", { nargs = 0, bang = true, desc = "agentd: what the agent changed" })
command("AgentProcesses", "processes", { nargs = 0, desc = "agentd: the session's background processes" })
command("AgentKill", "kill", { nargs = 1, desc = "agentd: kill a background process (p1…)" })
command("AgentRewind", "rewind", { nargs = "?", bang = true, desc = "agentd: back to before a prompt, files too" })

vim.api.nvim_create_autocmd("VimLeavePre", {
  group = vim.api.nvim_create_augroup("agentd", { clear = true }),
  callback = function()
    local client = package.loaded["agentd.client"]
    if client then
      client.stop()
    end
  end,
})
