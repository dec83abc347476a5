-- Files the agent changed: reload their buffers and keep what :AgentDiff shows.
--
-- Contract: after a successful write/edit/undo_edit, every loaded buffer of that file without
-- unsaved changes is reloaded from disk (its previous text is kept as the "before" side of
-- :AgentDiff); a buffer with unsaved changes is left alone and the user is told. The
-- daemon's unified diff of each change is kept too (the `diff` of its details).
local compat = require("agentd.compat")
local details = require("agentd.details")
local log = require("agentd.log")

local M = {
  before = {}, -- absolute path -> lines of the buffer before the agent's first change
  diffs = {}, -- list of { path, diff }
  last_path = nil,
}

local function normalize(path)
  local resolved = compat.uv.fs_realpath(path)
  return resolved or vim.fn.fnamemodify(path, ":p")
end

local function buffers_of(path)
  local found = {}
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    local name = vim.api.nvim_buf_get_name(buf)
    if vim.api.nvim_buf_is_loaded(buf) and name ~= "" and vim.bo[buf].buftype == "" and normalize(name) == path then
      found[#found + 1] = buf
    end
  end
  return found
end

local function reload(buf, path)
  if vim.bo[buf].modified then
    local msg = "%s changed on disk but its buffer has unsaved changes; not reloaded"
    return log.notify(string.format(msg, vim.fn.fnamemodify(path, ":~:.")), vim.log.levels.WARN)
  end
  if M.before[path] == nil then
    M.before[path] = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  end
  -- :checktime reloads an unmodified buffer silently only with 'autoread': set it locally.
  vim.api.nvim_buf_call(buf, function()
    vim.cmd("setlocal autoread")
    vim.cmd("checktime " .. buf)
    vim.cmd("setlocal autoread<")
  end)
end

--- A tool_execution_end event.
function M.on_tool_end(ev)
  local change = not ev.isError and details.file_change(ev.details)
  if not change then
    return
  end
  local path = normalize(change.path)
  M.last_path = path
  local diff = details.diff(change)
  if diff then
    M.diffs[#M.diffs + 1] = { path = path, diff = diff }
  end
  if require("agentd.config").options.reload_buffers then
    for _, buf in ipairs(buffers_of(path)) do
      reload(buf, path)
    end
  end
end

local function scratch(name, lines, filetype)
  local buf = vim.api.nvim_create_buf(false, true)
  pcall(vim.api.nvim_buf_set_name, buf, name)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].filetype = filetype
  vim.bo[buf].modifiable = false
  return buf
end

--- :AgentDiff — the current file against its text before the agent changed it (side by
--- side), or every change of this session as unified diffs.
function M.show(all)
  local path = normalize(vim.api.nvim_buf_get_name(0))
  if not all and M.before[path] == nil and M.last_path and M.before[M.last_path] then
    path = M.last_path
  end
  if not all and M.before[path] then
    local ft = vim.bo.filetype
    vim.cmd("tab split " .. vim.fn.fnameescape(path))
    vim.cmd("diffthis")
    vim.cmd("leftabove vsplit")
    local name = "agentd://before/" .. vim.fn.fnamemodify(path, ":t")
    vim.api.nvim_win_set_buf(0, scratch(name, M.before[path], ft))
    vim.cmd("diffthis")
    return
  end
  if #M.diffs == 0 then
    return log.notify("the agent has not changed any file yet", vim.log.levels.INFO)
  end
  local lines = {}
  for _, change in ipairs(M.diffs) do
    vim.list_extend(lines, compat.split_lines((string.gsub(change.diff, "\n$", ""))))
  end
  vim.cmd("tabnew")
  vim.api.nvim_win_set_buf(0, scratch("agentd://diff/" .. #M.diffs, lines, "diff"))
end

--- Forget the "before" texts (a new session starts).
function M.reset()
  M.before, M.diffs, M.last_path = {}, {}, nil
end

return M
