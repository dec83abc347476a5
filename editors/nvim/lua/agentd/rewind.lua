-- :AgentRewind[!] [N] — take the session back to before its N-th last prompt (default 1):
-- the conversation and the files those runs changed. A dry run first lists what will be
-- restored and removed, and the conflicts (files changed outside agentd since, or whose
-- earlier content was not kept), and asks. A rewind that meets conflicts moves nothing unless
-- forced: the choice is then "Rewind anyway" (forced, the same prompt by its entry id); `!`
-- forces from the start.
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
    lines[#lines + 1] = "Conflicts: " .. left_alone(preview.conflicts)
    lines[#lines + 1] = "A rewind stops at conflicts; “Rewind anyway” overwrites the changed files."
  end
  if #preview.restored + #preview.removed + #preview.conflicts == 0 then
    lines[#lines + 1] = "No files to restore."
  end
  return table.concat(lines, "\n")
end

--- One line saying what a rewind did.
function M.summary(result)
  if not result.applied then
    return "not rewound (nothing changed): " .. left_alone(result.conflicts)
  end
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
    if not result.applied then
      return log.notify(M.summary(result), levels.WARN)
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
    local conflicts = #preview.conflicts > 0 and not params.force
    local go = conflicts and "Rewind anyway" or "Rewind"
    require("agentd.sessions").select({ go, "Cancel" }, { prompt = M.question(preview) }, function(choice)
      if choice == go then
        apply({ sessionId = params.sessionId, entryId = preview.entryId, force = params.force or conflicts })
      end
    end)
  end)
end

return M
