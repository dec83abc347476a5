-- :AgentSessions — pick a stored session, then load, fork, rename or delete it.
local client = require("agentd.client")
local compat = require("agentd.compat")
local log = require("agentd.log")
local transcript = require("agentd.transcript")

local M = {}
local levels = vim.log.levels

--- vim.ui.select, run outside the current callback (the built-in one blocks).
function M.select(items, opts, on_choice)
  vim.schedule(function()
    vim.ui.select(items, opts, on_choice)
  end)
end

local function title_of(summary)
  return compat.present(summary.title) and summary.title or "(untitled)"
end

local function format_session(summary)
  local current = client.session and client.session.sessionId == summary.sessionId
  local when = string.gsub(string.sub(summary.updatedAt or summary.createdAt or "", 1, 16), "T", " ")
  local mark = current and "● " or (summary.running and "▶ " or "  ")
  return string.format("%s%s  %s  %d entries  %s", mark, title_of(summary), when, summary.entryCount or 0, summary.sessionId)
end

--- Load session `id` as the current one, replaying its history into the transcript.
function M.load(id, title)
  client.set_session({ sessionId = id, title = title or vim.NIL, provider = "…", model = "…" })
  require("agentd.edits").reset()
  client.call("session/load", { sessionId = id, replay = true }, function(err, result)
    if err then
      return log.notify("cannot load the session: " .. err.message, levels.ERROR)
    end
    client.session = result.session
    transcript.set_header(result.session)
    for _, warning in ipairs(result.warnings or {}) do
      log.notify(tostring(warning), levels.WARN)
    end
  end)
end

local function fork(summary)
  client.call("session/fork", { sessionId = summary.sessionId }, function(err, info)
    if err then
      return log.notify("cannot fork: " .. err.message, levels.ERROR)
    end
    M.load(info.sessionId, info.title)
    log.notify("forked into " .. info.sessionId, levels.INFO)
  end)
end

local function rename(summary)
  vim.schedule(function()
    vim.ui.input({ prompt = "New title: ", default = compat.present(summary.title) and summary.title or "" }, function(text)
      if not text or vim.trim(text) == "" then
        return
      end
      local title = vim.trim(text)
      client.call("session/rename", { sessionId = summary.sessionId, title = title }, function(err)
        if err then
          return log.notify("cannot rename: " .. err.message, levels.ERROR)
        end
        if client.session and client.session.sessionId == summary.sessionId then
          client.session.title = title
          transcript.set_header(client.session)
        end
        log.notify("renamed to " .. title, levels.INFO)
      end)
    end)
  end)
end

local function delete(summary)
  local yes = "Delete " .. title_of(summary) .. " (" .. summary.sessionId .. ")"
  M.select({ yes, "Keep it" }, { prompt = "Delete this session for good?" }, function(choice)
    if choice ~= yes then
      return
    end
    client.call("session/delete", { sessionId = summary.sessionId }, function(err)
      if err then
        return log.notify("cannot delete: " .. err.message, levels.ERROR)
      end
      if client.session and client.session.sessionId == summary.sessionId then
        client.session = nil
        transcript.clear()
      end
      log.notify("deleted " .. summary.sessionId, levels.INFO)
    end)
  end)
end

local actions = {
  { "Load", function(s) M.load(s.sessionId, s.title) end },
  { "Fork", fork },
  { "Rename", rename },
  { "Delete", delete },
}

local function act(summary)
  M.select(actions, {
    prompt = title_of(summary),
    kind = "agentd.session_action",
    format_item = function(action)
      return action[1]
    end,
  }, function(action)
    if action then
      action[2](summary)
    end
  end)
end

--- Open the picker (`all`: every project's sessions, not only the current directory's).
function M.pick(all)
  local params = { limit = 100 }
  if not all then
    params.cwd = vim.fn.getcwd()
  end
  client.call("session/list", params, function(err, result)
    if err then
      return log.notify("cannot list sessions: " .. err.message, levels.ERROR)
    end
    if #result.sessions == 0 then
      return log.notify("no stored sessions" .. (all and "" or " for this directory (:AgentSessions! lists all)"), levels.INFO)
    end
    M.select(result.sessions, { prompt = "agentd sessions", kind = "agentd.session", format_item = format_session }, function(summary)
      if summary then
        act(summary)
      end
    end)
  end)
end

--- :AgentModel — switch the model of the current session (or of the next one).
function M.pick_model()
  client.call("models/list", { cwd = vim.fn.getcwd() }, function(err, result)
    if err then
      return log.notify("cannot list models: " .. err.message, levels.ERROR)
    end
    local function label(m)
      local default = m.provider == result.defaultProvider and m.model == result.defaultModel
      return m.provider .. "/" .. m.model .. (default and "  (default)" or "")
    end
    M.select(result.models, { prompt = "agentd model", kind = "agentd.model", format_item = label }, function(choice)
      if not choice then
        return
      end
      if not client.session then
        client.pending_model = { provider = choice.provider, model = choice.model }
        return log.notify("the next session uses " .. choice.provider .. "/" .. choice.model, levels.INFO)
      end
      local params = { sessionId = client.session.sessionId, provider = choice.provider, model = choice.model }
      client.call("session/setModel", params, function(set_err, info)
        if set_err then
          return log.notify("cannot switch the model: " .. set_err.message, levels.ERROR)
        end
        client.session = info
        transcript.set_header(info)
        log.notify("model: " .. info.provider .. "/" .. info.model, levels.INFO)
      end)
    end)
  end)
end

return M
