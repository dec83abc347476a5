-- A small JSON-RPC 2.0 client over a child process's stdio, Content-Length framed.
--
-- Contract:
--   * `M.start(cmd, handlers)` spawns `cmd` (a list: executable, args...) and returns a
--     connection, or nil and an error message when it cannot be spawned.
--   * Bytes are read in libuv callbacks; frames are cut and decoded there (vim.json is safe in
--     fast callbacks), then `handlers.on_fast(msg)` sees every message at once, and everything
--     else is delivered in order from one vim.schedule'd drain: responses to their callbacks,
--     notifications to `handlers.on_notify(method, params)`, requests from the daemon to
--     `handlers.on_request(method, params, id)` (answer with `conn:respond`).
--   * When the process ends every pending callback gets `{code = -32008, message = ...}` and
--     `handlers.on_exit(code, signal)` runs (scheduled).
local compat = require("agentd.compat")
local uv = compat.uv

local M = {}

local Conn = {}
Conn.__index = Conn

M.CONNECTION_LOST = -32008

--- Cut complete Content-Length frames out of `buf`, starting at byte `pos`.
--- Returns the list of bodies and the position of the first unconsumed byte.
function M.cut_frames(buf, pos)
  local bodies = {}
  while true do
    local head_end, body_start = string.find(buf, "\r?\n\r?\n", pos)
    if not head_end then
      break
    end
    local header = string.sub(buf, pos, head_end - 1)
    local length = tonumber(string.match(string.lower(header), "content%-length:%s*(%d+)"))
    if not length then
      -- Not a header we can use: skip past it (the daemon never sends one).
      pos = body_start + 1
    else
      local stop = body_start + length
      if stop > #buf then
        break
      end
      bodies[#bodies + 1] = string.sub(buf, body_start + 1, stop)
      pos = stop + 1
    end
  end
  return bodies, pos
end

--- Frame one message.
function M.frame(message)
  local body = compat.encode(message)
  return "Content-Length: " .. #body .. "\r\n\r\n" .. body
end

local function noop() end

function M.start(cmd, handlers)
  local self = setmetatable({
    next_id = 0,
    callbacks = {},
    inbox = {},
    scheduled = false,
    closed = false,
    buf = "",
    handlers = handlers,
    stderr_tail = {},
  }, Conn)
  self.stdin = uv.new_pipe(false)
  self.stdout = uv.new_pipe(false)
  self.stderr = uv.new_pipe(false)
  local handle, pid_or_err = uv.spawn(cmd[1], {
    args = vim.list_slice(cmd, 2),
    stdio = { self.stdin, self.stdout, self.stderr },
    cwd = handlers.cwd,
  }, function(code, signal)
    self:_on_exit(code, signal)
  end)
  if not handle then
    for _, pipe in ipairs({ self.stdin, self.stdout, self.stderr }) do
      pipe:close()
    end
    return nil, string.format("cannot start %s: %s", cmd[1], tostring(pid_or_err))
  end
  self.handle, self.pid = handle, pid_or_err
  self.stdout:read_start(function(err, data)
    self:_on_stdout(err, data)
  end)
  self.stderr:read_start(function(_, data)
    if data then
      self:_queue({ stderr = data })
    end
  end)
  return self
end

function Conn:_on_stdout(err, data)
  if err or not data then
    return
  end
  self.buf = self.buf .. data
  local bodies, pos = M.cut_frames(self.buf, 1)
  self.buf = string.sub(self.buf, pos)
  for _, body in ipairs(bodies) do
    local ok, msg = pcall(compat.decode, body)
    if ok and type(msg) == "table" then
      if self.handlers.on_fast then
        self.handlers.on_fast(msg)
      end
      self:_queue(msg)
    else
      self:_queue({ stderr = "agentd: undecodable frame: " .. string.sub(body, 1, 200) })
    end
  end
end

function Conn:_queue(item)
  self.inbox[#self.inbox + 1] = item
  if not self.scheduled then
    self.scheduled = true
    vim.schedule(function()
      self:_drain()
    end)
  end
end

function Conn:_drain()
  self.scheduled = false
  local inbox = self.inbox
  self.inbox = {}
  for _, msg in ipairs(inbox) do
    local ok, err = pcall(self._dispatch, self, msg)
    if not ok and self.handlers.on_error then
      self.handlers.on_error(err)
    end
  end
end

function Conn:_dispatch(msg)
  local h = self.handlers
  if msg.stderr then
    return (h.on_stderr or noop)(msg.stderr)
  end
  if msg.exit then
    return (h.on_exit or noop)(msg.code, msg.signal)
  end
  if msg.method == nil then
    local callback = self.callbacks[msg.id]
    self.callbacks[msg.id] = nil
    if callback then
      local err = compat.present(msg.error) and msg.error or nil
      callback(err, msg.result)
    end
  elseif msg.id ~= nil and msg.id ~= vim.NIL then
    h.on_request(msg.method, compat.present(msg.params) and msg.params or {}, msg.id)
  else
    h.on_notify(msg.method, compat.present(msg.params) and msg.params or {})
  end
end

function Conn:_write(message)
  if self.closed then
    return false
  end
  self.stdin:write(M.frame(message))
  return true
end

--- Send a request; `callback(err, result)` runs on the main loop. Returns the request id.
function Conn:request(method, params, callback)
  self.next_id = self.next_id + 1
  local id = self.next_id
  if self.closed then
    vim.schedule(function()
      callback({ code = M.CONNECTION_LOST, message = "not connected to agentd" }, nil)
    end)
    return id
  end
  self.callbacks[id] = callback
  self:_write({ jsonrpc = "2.0", id = id, method = method, params = params or compat.empty_object() })
  return id
end

function Conn:notify(method, params)
  self:_write({ jsonrpc = "2.0", method = method, params = params or compat.empty_object() })
end

function Conn:respond(id, result)
  self:_write({ jsonrpc = "2.0", id = id, result = result })
end

function Conn:respond_error(id, code, message)
  self:_write({ jsonrpc = "2.0", id = id, error = { code = code, message = message } })
end

--- End the connection: close stdin (the daemon or bridge exits when it ends).
function Conn:close()
  if self.closed then
    return
  end
  self.closed = true
  if not self.stdin:is_closing() then
    self.stdin:shutdown(function()
      self.stdin:close()
    end)
  end
end

function Conn:_on_exit(code, signal)
  self.closed = true
  for _, pipe in ipairs({ self.stdin, self.stdout, self.stderr }) do
    if not pipe:is_closing() then
      pipe:close()
    end
  end
  if self.handle and not self.handle:is_closing() then
    self.handle:close()
  end
  local callbacks = self.callbacks
  self.callbacks = {}
  vim.schedule(function()
    for _, callback in pairs(callbacks) do
      callback({ code = M.CONNECTION_LOST, message = "agentd exited (code " .. code .. ")" }, nil)
    end
  end)
  self:_queue({ exit = true, code = code, signal = signal })
end

return M
