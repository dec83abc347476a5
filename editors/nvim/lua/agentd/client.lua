-- The connection to the daemon and the current session; routes what the daemon sends.
--
-- Contract: `M.call(method, params, cb)` connects (and initializes) on first use; `cb(err,
-- result)` gets JSON-RPC errors as tables, and when `cb` is nil an error becomes a
-- vim.notify. Events of the current session go to the transcript, approvals, edits and
-- notifications; events of other sessions are ignored.
local config = require("agentd.config")
local log = require("agentd.log")
local rpc = require("agentd.rpc")

local M = {
  VERSION = "0.1.0",
  conn = nil,
  server = nil, -- the initialize result
  connecting = false,
  waiters = {},
  session = nil, -- SessionInfo of the current session
  running = false,
  last_seq = 0,
  pending_model = nil, -- { provider, model } chosen before a session exists
}

local levels = vim.log.levels

local function finish_connect(err)
  M.connecting = false
  local waiters = M.waiters
  M.waiters = {}
  for _, waiter in ipairs(waiters) do
    waiter(err)
  end
end

-- The shared daemon keeps running sessions going: during a run, connect again and pick up
-- the events after the last one seen (session/subscribe sinceSeq). Otherwise the next
-- command reconnects (so stopping the daemon does not start it again).
local function resubscribe()
  local id = M.session.sessionId
  log.notify("lost the connection to agentd; reconnecting", levels.WARN)
  vim.defer_fn(function()
    M.call("session/subscribe", { sessionId = id, sinceSeq = M.last_seq }, function(err, result)
      if err then
        return log.notify("could not reconnect to agentd: " .. tostring(err.message), levels.ERROR)
      end
      if not result.complete then
        log.notify("some events were missed while disconnected; Load the session to see all", levels.WARN)
      end
      M.call("session/state", { sessionId = id }, function(_, state)
        M.running = state ~= nil and state.status == "running"
      end)
    end)
  end, 100)
end

local function on_exit(code, signal)
  log.add("conn", string.format("connection ended (exit %s, signal %s)", tostring(code), tostring(signal)))
  local was_running = M.running
  M.conn, M.server, M.running = nil, nil, false
  if M.connecting then
    finish_connect({ code = rpc.CONNECTION_LOST, message = "agentd exited before answering initialize" })
  end
  require("agentd.approval").close_all()
  if M.stopping then
    return
  end
  if was_running and M.session and config.options.connection == "shared" then
    return resubscribe()
  end
  if was_running then
    log.notify("the connection to agentd ended during a run; see :AgentLog", levels.ERROR)
  end
end

local function on_request(method, params, id)
  if method == "session/requestPermission" then
    return require("agentd.approval").ask(M.conn, id, params)
  end
  M.conn:respond_error(id, -32601, "agentd.nvim does not handle " .. method)
end

local function on_notify(method, params)
  if method == "session/event" then
    return M.on_event(params)
  end
  if method == "$/cancelRequest" then
    return require("agentd.approval").cancelled(params.id)
  end
end

local handlers = {
  on_notify = on_notify,
  on_request = on_request,
  on_exit = on_exit,
  on_fast = function(msg)
    require("agentd.approval").on_fast(msg)
  end,
  on_stderr = function(data)
    log.add("daemon", data)
    -- `agentctl bridge` refuses a socket whose folder or listener is not this user's (another
    -- user may be impersonating agentd): say so, not just that the connection ended.
    for line in data:gmatch("[^\n]+") do
      if line:find("refusing to", 1, true) then
        log.notify(line, levels.ERROR)
      end
    end
  end,
  on_error = function(err)
    log.notify("internal error while handling a message: " .. tostring(err), levels.ERROR)
  end,
}

--- Connect and initialize if needed; `cb(err)` runs once connected (or failed).
function M.ensure(cb)
  if M.conn and M.server then
    return cb(nil)
  end
  M.waiters[#M.waiters + 1] = cb
  if M.connecting then
    return
  end
  M.connecting = true
  local cmd = config.command()
  if vim.fn.executable(cmd[1]) == 0 then
    return finish_connect({ message = string.format("cannot find %q (set cmd/agentctl/agentd in setup())", cmd[1]) })
  end
  log.add("conn", "starting " .. table.concat(cmd, " "))
  local conn, err = rpc.start(cmd, handlers)
  if not conn then
    return finish_connect({ message = err })
  end
  M.conn = conn
  local params = {
    protocolVersion = 1,
    clientInfo = { name = "agentd.nvim", version = M.VERSION },
    capabilities = { permissions = true },
  }
  conn:request("initialize", params, function(init_err, result)
    if init_err then
      conn:close()
      return finish_connect(init_err)
    end
    M.server = result
    log.add("conn", "connected to " .. result.serverInfo.name .. " " .. result.serverInfo.version)
    finish_connect(nil)
  end)
end

local function report(method, err)
  if err.code == -32800 then
    return
  end
  log.notify(string.format("%s failed: %s", method, err.message or vim.inspect(err)), levels.ERROR)
end

--- Call a daemon method. Without `cb`, errors are notified and the result is dropped.
function M.call(method, params, cb)
  M.ensure(function(err)
    if err and cb then
      return cb(err)
    elseif err then
      return report(method, err)
    end
    M.conn:request(method, params, function(call_err, result)
      if cb then
        return cb(call_err, result)
      end
      if call_err then
        report(method, call_err)
      end
    end)
  end)
end

--- Make `info` (a SessionInfo) the current session.
function M.set_session(info)
  local old = M.session
  if old and old.sessionId ~= info.sessionId and M.conn then
    M.conn:request("session/unsubscribe", { sessionId = old.sessionId }, function() end)
  end
  M.session, M.last_seq, M.running = info, 0, false
  M.children = {}
  require("agentd.transcript").reset(info)
end

--- The current session, creating one (session/new) on first use; `cb(err, info)`.
--- Callers that arrive while it is being created wait for the same one.
function M.ensure_session(cb)
  if M.session then
    return cb(nil, M.session)
  end
  if M.session_waiters then
    M.session_waiters[#M.session_waiters + 1] = cb
    return
  end
  M.session_waiters = { cb }
  local o = config.options
  local chosen = M.pending_model or {}
  local params = {
    cwd = vim.fn.getcwd(),
    provider = chosen.provider or o.provider,
    model = chosen.model or o.model,
    permissionMode = o.permission_mode,
  }
  M.call("session/new", params, function(err, info)
    local waiters = M.session_waiters
    M.session_waiters = nil
    if not err then
      M.pending_model = nil
      M.set_session(info)
    end
    for _, waiter in ipairs(waiters) do
      waiter(err, info)
    end
  end)
end

--- Send a prompt (with `images`, a list of ImageContent) to the current session; while a
--- run is going, steer it instead (a steer carries no images: they are dropped, with a note).
function M.prompt(text, images)
  M.ensure_session(function(err, info)
    if err then
      return report("session/new", err)
    end
    if M.running then
      if images and #images > 0 then
        log.notify("images go with a prompt, not a steer: they were not sent", levels.WARN)
      end
      return M.call("session/steer", { sessionId = info.sessionId, text = text }, function(steer_err)
        if steer_err then
          return report("session/steer", steer_err)
        end
        log.notify("queued for the running agent", levels.INFO)
      end)
    end
    M.running = true
    local params = { sessionId = info.sessionId, text = text }
    if images and #images > 0 then
      params.images = images
    end
    M.call("session/prompt", params, function(prompt_err, result)
      if prompt_err and prompt_err.code == rpc.CONNECTION_LOST then
        return -- on_exit tells the user (and reconnects to a shared daemon)
      end
      M.running = false
      if prompt_err then
        return report("session/prompt", prompt_err)
      end
      require("agentd.transcript").prompt_done(result)
    end)
  end)
end

--- Stop the current run.
function M.cancel()
  if not M.session or not M.conn then
    return log.notify("nothing is running", levels.INFO)
  end
  M.call("session/cancel", { sessionId = M.session.sessionId }, function(err, result)
    if err then
      return report("session/cancel", err)
    end
    if not result.cancelled then
      log.notify("nothing is running", levels.INFO)
    end
  end)
end

--- Handle one `session/event` notification.
function M.on_event(params)
  if not M.session then
    return
  end
  local ev = params.event
  M.children = M.children or {}
  local task = M.children[params.sessionId] -- a subagent's event: the task call it runs for
  if task then
    if ev.type == "subagent_start" then -- a grandchild nests under the same task
      M.children[ev.childSessionId] = task
    end
    return require("agentd.transcript").push_child(task, ev)
  end
  if params.sessionId ~= M.session.sessionId then
    return
  end
  if ev.type == "subagent_start" then
    M.children[ev.childSessionId] = ev.toolCallId
  end
  if (params.seq or 0) > 0 then
    M.last_seq = params.seq
  end
  local kind = ev.type
  if kind == "agent_start" then
    M.running = true
  elseif kind == "agent_end" then
    M.running = false
  elseif kind == "retry" then
    local msg = "retrying (%d/%d) in %.1fs: %s"
    log.notify(string.format(msg, ev.attempt, ev.maxAttempts, ev.delayMs / 1000, ev.error), levels.WARN)
  elseif kind == "error" then
    log.notify(ev.message, levels.ERROR)
  elseif kind == "session_warning" then
    log.notify(ev.message, levels.WARN)
  elseif kind == "permission_resolved" then
    require("agentd.approval").resolved(ev)
  elseif kind == "tool_execution_end" then
    require("agentd.edits").on_tool_end(ev)
  elseif kind == "process_start" or kind == "process_exit" then
    local processes = package.loaded["agentd.processes"] -- only when its list was opened
    if processes then
      processes.on_event(ev)
    end
  end
  require("agentd.transcript").push(ev, params.seq or 0)
end

--- A one-line state for statuslines.
function M.status()
  if not M.conn then
    return "agentd: not connected"
  end
  if not M.session then
    return "agentd: connected"
  end
  return string.format("agentd: %s %s/%s", M.running and "running" or "idle", M.session.provider, M.session.model)
end

--- Close the connection (VimLeavePre); the daemon keeps the session.
function M.stop()
  M.stopping = true
  if M.conn then
    M.conn:close()
  end
end


return M
