-- :AgentProcesses — the current session's background processes (started by `bash` with
-- `background: true`) in a scratch buffer, one line each: id, state, runtime, output size,
-- command. In that buffer `x` kills the process under the cursor (session/killProcess: TERM
-- to its group, KILL after the grace period) and `r` reads the list again.
-- :AgentKill ID kills one by id.
local client = require("agentd.client")
local log = require("agentd.log")

local M = {}
local levels = vim.log.levels

--- "running", "exited 3", "killed (SIGTERM)" for a ProcessInfo.
function M.state(info)
  if info.state == "exited" then
    return "exited " .. tostring(info.exitCode)
  elseif info.state == "killed" then
    return info.signal ~= vim.NIL and info.signal and ("killed (" .. info.signal .. ")") or "killed"
  end
  return "running"
end

local function size(count)
  if count < 1024 then
    return count .. "B"
  elseif count < 1024 * 1024 then
    return string.format("%.0fKB", count / 1024)
  end
  return string.format("%.1fMB", count / (1024 * 1024))
end

--- One line of the list for a ProcessInfo.
function M.line(info)
  local command = (info.command or ""):gsub("%s+", " ")
  local about = (info.description and info.description ~= vim.NIL) and (" (" .. info.description .. ")") or ""
  return string.format(
    "%-4s %-16s %7.1fs %7s  %s%s",
    info.id,
    M.state(info),
    (info.runtimeMs or 0) / 1000,
    size(info.outputBytes or 0),
    command,
    about
  )
end

local function lines_of(result)
  local out = {}
  for _, entry in ipairs(result.sessions or {}) do
    for _, info in ipairs(entry.processes or {}) do
      out[#out + 1] = M.line(info)
    end
  end
  if #out == 0 then
    out[1] = "No background processes in this session."
  end
  return out
end

local function scratch()
  local buf = M.buf
  if buf and vim.api.nvim_buf_is_valid(buf) then
    return buf
  end
  buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].filetype = "agentd-processes"
  vim.api.nvim_buf_set_name(buf, "agentd://processes")
  vim.keymap.set("n", "x", function()
    local id = vim.api.nvim_get_current_line():match("^(p%d+)%s")
    if id then
      M.kill(id)
    end
  end, { buffer = buf, desc = "agentd: kill this background process" })
  vim.keymap.set("n", "r", function()
    M.refresh()
  end, { buffer = buf, desc = "agentd: list the background processes again" })
  M.buf = buf
  return buf
end

local function show(buf, lines)
  if not vim.api.nvim_buf_is_valid(buf) then
    return
  end
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
end

--- Read the list again into the processes buffer (if it is open).
function M.refresh()
  local session = client.session
  local buf = M.buf
  if not session or not buf or not vim.api.nvim_buf_is_valid(buf) then
    return
  end
  client.call("session/processes", { sessionId = session.sessionId }, function(err, result)
    if err then
      return log.notify("cannot list the background processes: " .. err.message, levels.ERROR)
    end
    vim.schedule(function()
      show(buf, lines_of(result))
    end)
  end)
end

--- :AgentProcesses
function M.open()
  if not client.session then
    return log.notify("no session yet: its background processes are listed once it has one", levels.WARN)
  end
  local buf = scratch()
  if vim.fn.bufwinid(buf) == -1 then
    vim.cmd("botright split")
    vim.api.nvim_win_set_buf(0, buf)
    vim.api.nvim_win_set_height(0, 8)
  end
  M.refresh()
end

--- Kill process `id` of the current session.
function M.kill(id)
  local session = client.session
  if not session then
    return log.notify("no session to kill a process of", levels.WARN)
  end
  local params = { sessionId = session.sessionId, processId = id }
  client.call("session/killProcess", params, function(err, info)
    if err then
      return log.notify("cannot kill " .. id .. ": " .. err.message, levels.ERROR)
    end
    log.notify(string.format("%s %s", info.id, M.state(info)), levels.INFO)
    vim.schedule(M.refresh)
  end)
end

--- A process event of the current session: the open list follows it.
function M.on_event(event)
  if event.type == "process_start" or event.type == "process_exit" then
    vim.schedule(M.refresh)
  end
end

return M
