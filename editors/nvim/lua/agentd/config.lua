-- Options of require("agentd").setup(); defaults documented in doc/agentd.txt.
local M = {}

M.defaults = {
  -- "shared": the user's long-running daemon through `agentctl bridge` (started if needed);
  -- "stdio": a private `agentd serve --stdio` for this Neovim.
  connection = "shared",
  -- Override the whole command (a list), e.g. { "ssh", "host", "agentctl", "bridge" }.
  cmd = nil,
  agentctl = "agentctl",
  agentd = "agentd",
  -- Socket of the shared daemon (nil: the daemon's default path).
  socket = nil,
  -- Session settings sent with session/new (nil: the daemon's configuration decides).
  provider = nil,
  model = nil,
  permission_mode = nil, -- "auto" | "ask" | "read-only"
  chat = {
    position = "right", -- "right" | "left" | "bottom"
    width = 80,
    height = 20, -- when position = "bottom"
    input_height = 4,
    open_on_prompt = true,
    tool_output_lines = 40, -- lines of a tool's output kept in its fold
    keys = { submit = "<CR>", submit_insert = "<C-s>", cancel = "<C-c>", close = "q" },
  },
  -- Global keymaps; none by default, e.g. { chat = "<leader>ac", cancel = "<leader>ax" }.
  keymaps = {},
  -- Reload buffers the agent changed on disk (those without unsaved changes).
  reload_buffers = true,
  log_lines = 2000,
}

M.options = vim.deepcopy(M.defaults)

local valid = {
  connection = { shared = true, stdio = true },
  permission_mode = { auto = true, ask = true, ["read-only"] = true },
}

--- Merge user options over the defaults; returns the options or nil and an error message.
function M.apply(user)
  local merged = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), user or {})
  for key, allowed in pairs(valid) do
    local value = merged[key]
    if value ~= nil and not allowed[value] then
      local names = vim.tbl_keys(allowed)
      table.sort(names)
      return nil, string.format("%s must be one of %s, not %q", key, table.concat(names, ", "), tostring(value))
    end
  end
  M.options = merged
  return merged
end

--- The command that connects to the daemon, as a list.
function M.command()
  local o = M.options
  if o.cmd then
    return o.cmd
  end
  if o.connection == "stdio" then
    return { o.agentd, "serve", "--stdio" }
  end
  local cmd = { o.agentctl, "bridge" }
  if o.socket then
    cmd[#cmd + 1] = "--socket"
    cmd[#cmd + 1] = o.socket
  end
  return cmd
end

return M
