-- :AgentRewind[!] [N] — take the session back to before its N-th last prompt (default 1):
-- the conversation and the files those runs changed. A dry run first lists what will be
-- restored, removed and left alone, and asks; `!` also restores files changed outside agentd
-- since (otherwise they are left alone and listed).
local client = require("agentd.client")
local log = require("agentd.log")

local M = {}
local levels = vim.log.levels

local function relative(path)
  return vim.fn.fnamemodify(path, ":~:.")
end

local function names(paths)
  local out = {}
  for _, path in ipairs(paths) do
    out[#out + 1] = relative(path)
  end
  return table.concat(out, ", ")
end

local function left_alone(conflicts)
  local out = {}
  for _, conflict in ipairs(conflicts) do
    out[#out + 1] = string.format("%s (%s)", relative(conflict.path), conflict.message)
  end
  return table.concat(out, "; ")
end

local function one_line(text)
  local line = vim.trim((text or ""):gsub("%s+", " "))
  return #line > 60 and (line:sub(1, 59) .. "…") or line
end

--- The confirmation for a dry run's result `preview` (a SessionRewindResult).
function M.question(preview)
  local lines = { string.format("Rewind to before “%s”? The turns after it are set aside.", one_line(preview.prompt)) }
  if #preview.restored > 0 then
    lines[#lines + 1] = "Restore: " .. names(preview.restored)
  end
  if #preview.removed > 0 then
    lines[#lines + 1] = "Remove: " .. names(preview.removed)
  end
  if #preview.conflicts > 0 then
    lines[#lines + 1] = "Leave alone: " .. left_alone(preview.conflicts)
  end
  if #preview.restored + #preview.removed + #preview.conflicts == 0 then
    lines[#lines + 1] = "No files to restore."
  end
  return table.concat(lines, "\n")
end

--- One line saying what a rewind did.
function M.summary(result)
  local text = string.format("rewound: %d restored, %d removed", #result.restored, #result.removed)
  if #result.conflicts > 0 then
    text = text .. "; left alone: " .. left_alone(result.conflicts)
  end
  return text
end

local function apply(params)
  client.call("session/rewind", params, function(err, result)
    if err then
      return log.notify("cannot rewind: " .. err.message, levels.ERROR)
    end
    local session = client.session
    require("agentd.sessions").load(params.sessionId, session and session.title or nil)
    vim.cmd("checktime") -- buffers of the restored files show their restored text
    log.notify(M.summary(result), #result.conflicts > 0 and levels.WARN or levels.INFO)
  end)
end

--- :AgentRewind[!] [N]
function M.run(opts)
  local turns = opts.args == "" and 1 or tonumber(opts.args)
  if not turns or turns < 1 or turns % 1 ~= 0 then
    return log.notify("AgentRewind takes a number of prompts to go back (1, 2, …)", levels.ERROR)
  end
  if not client.session then
    return log.notify("no session to rewind", levels.INFO)
  end
  local params = { sessionId = client.session.sessionId, turns = turns, force = opts.bang }
  local preview_params = vim.tbl_extend("force", params, { dryRun = true })
  client.call("session/rewind", preview_params, function(err, preview)
    if err then
      return log.notify("cannot rewind: " .. err.message, levels.ERROR)
    end
    require("agentd.sessions").select({ "Rewind", "Cancel" }, { prompt = M.question(preview) }, function(choice)
      if choice == "Rewind" then
        apply(params)
      end
    end)
  end)
end

return M
