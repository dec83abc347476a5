-- A bounded in-memory log (connection, daemon stderr, errors) shown by :AgentLog.
local M = { lines = {} }

local function limit()
  local ok, config = pcall(require, "agentd.config")
  return ok and config.options.log_lines or 2000
end

--- Append one or more lines (text split on newlines), each stamped with the time.
function M.add(kind, text)
  local stamp = os.date("%H:%M:%S")
  for _, line in ipairs(vim.split(tostring(text), "\n", { plain = true })) do
    if line ~= "" then
      M.lines[#M.lines + 1] = string.format("%s %-6s %s", stamp, kind, line)
    end
  end
  local excess = #M.lines - limit()
  if excess > 0 then
    M.lines = vim.list_slice(M.lines, excess + 1)
  end
end

--- Open (or refresh) the log in a scratch buffer.
function M.show()
  local buf = vim.fn.bufnr("agentd://log")
  if buf == -1 then
    buf = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(buf, "agentd://log")
    vim.bo[buf].filetype = "agentdlog"
  end
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, M.lines)
  vim.bo[buf].modifiable = false
  if vim.fn.bufwinid(buf) == -1 then
    vim.cmd("botright split")
    vim.api.nvim_win_set_buf(0, buf)
  end
  vim.api.nvim_win_set_cursor(vim.fn.bufwinid(buf), { math.max(1, #M.lines), 0 })
end

--- vim.notify with the plugin's title, also logged.
function M.notify(text, level)
  M.add(level == vim.log.levels.ERROR and "error" or "notify", text)
  vim.notify("agentd: " .. text, level or vim.log.levels.INFO, { title = "agentd" })
end

return M
