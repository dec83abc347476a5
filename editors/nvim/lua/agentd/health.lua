-- :checkhealth agentd — Neovim version, executables, the daemon, the provider.
local M = {}

local TIMEOUT_MS = 10000

local function wait_call(method, params)
  local done, err, result = false, nil, nil
  require("agentd.client").call(method, params, function(e, r)
    done, err, result = true, e, r
  end)
  vim.wait(TIMEOUT_MS, function()
    return done
  end, 20)
  if not done then
    return { message = "no answer within " .. TIMEOUT_MS / 1000 .. " s" }, nil
  end
  return err, result
end

local function check_executables(h, config)
  local cmd = config.command()
  local found = vim.fn.executable(cmd[1]) == 1
  if found then
    h.ok(string.format("%s: %s", cmd[1], vim.fn.exepath(cmd[1])))
  else
    h.error(string.format("%q not found", cmd[1]), {
      "Install agentd (pip install agentd) or set `cmd`, `agentctl` or `agentd` in setup()",
    })
  end
  local other = config.options.connection == "stdio" and config.options.agentctl or config.options.agentd
  if vim.fn.executable(other) == 1 then
    h.ok(string.format("%s: %s", other, vim.fn.exepath(other)))
  else
    h.info(string.format("%s not found (only needed for the other connection mode)", other))
  end
  return found
end

local function check_provider(h, config)
  local err, models = wait_call("models/list", { cwd = vim.fn.getcwd() })
  if err then
    return h.error("models/list failed: " .. tostring(err.message))
  end
  local compat = require("agentd.compat")
  local provider = config.options.provider
    or (compat.present(models.defaultProvider) and models.defaultProvider or nil)
  if not provider then
    return h.warn("no provider configured", {
      "Set `provider` in setup(), or configure one in ~/.config/agentd/config.toml, a project's .agentd.toml or the environment (OPENAI_API_KEY, ANTHROPIC_API_KEY, ...)",
    })
  end
  local model = config.options.model or (compat.present(models.defaultModel) and models.defaultModel or "(provider default)")
  h.ok(string.format("provider: %s, model: %s (%d models offered)", provider, model, #models.models))
end

function M.check()
  local compat = require("agentd.compat")
  local config = require("agentd.config")
  local h = compat.health()
  h.start("agentd")
  if vim.fn.has("nvim-0.7") == 1 then
    h.ok("Neovim " .. compat.nvim_version())
  else
    h.error("Neovim " .. compat.nvim_version() .. " is too old: agentd.nvim needs 0.7 or newer")
  end
  h.info("connection: " .. config.options.connection .. " (" .. table.concat(config.command(), " ") .. ")")
  if not check_executables(h, config) then
    return
  end
  local err, status = wait_call("daemon/status", compat.empty_object())
  if err then
    return h.error("daemon not reachable: " .. tostring(err.message), { "See :AgentLog for the daemon's output" })
  end
  local text = "daemon reachable: agentd %s (pid %d, %s, up %.0f s, %d sessions loaded)"
  h.ok(string.format(text, status.version, status.pid, status.transport, status.uptimeS, #status.sessions))
  check_provider(h, config)
end

return M
