-- Approvals: answer `session/requestPermission` through vim.ui.select.
--
-- Contract: every request gets exactly one answer from this client unless it is decided
-- elsewhere first (another client answered, a rule, a timeout: the daemon then sends
-- `$/cancelRequest` and `permission_resolved`). Then the open prompt is closed: the built-in
-- select (a blocking inputlist) is dismissed by typing <Esc> from the libuv callback, and an
-- asynchronous picker (telescope, dressing, ...) by closing the windows it opened.
local M = {
  pending = {}, -- rpc id -> entry
}

local labels = {
  allow_once = "Allow once",
  allow_always = "Allow always (this session)",
  reject_once = "Reject",
  reject_always = "Reject always (this session)",
}

local function describe(params)
  local args = params.args or {}
  local tool = params.tool or "?"
  if tool == "bash" and type(args.command) == "string" then
    return "run: " .. args.command
  end
  if type(args.path) == "string" then
    return tool .. " " .. args.path
  end
  local ok, text = pcall(vim.json.encode, args)
  return tool .. " " .. string.sub(ok and text or "", 1, 120)
end

--- The prompt shown for a request (also used by the transcript).
function M.describe(params)
  return describe(params)
end

local function find_by_tool_call(tool_call_id)
  for id, entry in pairs(M.pending) do
    if entry.params.toolCallId == tool_call_id then
      return id, entry
    end
  end
end

local function close_windows(entry)
  for _, win in ipairs(entry.windows or {}) do
    if vim.api.nvim_win_is_valid(win) then
      pcall(vim.api.nvim_win_close, win, true)
    end
  end
  if entry.windows and #entry.windows > 0 and vim.api.nvim_get_mode().mode:sub(1, 1) == "i" then
    vim.cmd("stopinsert")
  end
end

-- Mark an entry decided elsewhere; in a fast callback only the blocking prompt is touched.
local function dismiss(id, entry, fast)
  if entry.done then
    return
  end
  entry.done = true
  M.pending[id] = nil
  if entry.blocking then
    vim.api.nvim_input("<Esc>")
  end
  if fast then
    vim.schedule(function()
      close_windows(entry)
    end)
  else
    close_windows(entry)
  end
end

local function list_windows()
  local set = {}
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    set[win] = true
  end
  return set
end

-- Show the prompt for `entry`; remembers the windows an asynchronous picker opened.
local function open_prompt(id, entry)
  if entry.done then
    return
  end
  local before = list_windows()
  local options = entry.params.options or { "allow_once", "allow_always", "reject_once", "reject_always" }
  entry.blocking = true
  vim.ui.select(vim.list_extend({}, options), {
    prompt = "agentd wants to " .. describe(entry.params),
    kind = "agentd.permission",
    format_item = function(option)
      return labels[option] or option
    end,
  }, function(choice)
    entry.blocking = false
    if not entry.done then
      entry.done = true
      M.pending[id] = nil
      entry.conn:respond(id, { outcome = choice or "reject_once" })
    end
  end)
  entry.blocking = false
  entry.windows = {}
  for win in pairs(list_windows()) do
    if not before[win] then
      entry.windows[#entry.windows + 1] = win
    end
  end
  if entry.done then
    close_windows(entry)
  end
end

--- Ask the user about one request (`id` is the daemon's request id).
function M.ask(conn, id, params)
  local entry = { params = params, conn = conn, done = false }
  M.pending[id] = entry
  -- Let the current drain finish before a blocking prompt takes over the loop.
  vim.schedule(function()
    open_prompt(id, entry)
  end)
end

--- Called from the libuv callback for every message: dismiss prompts decided elsewhere.
function M.on_fast(msg)
  if next(M.pending) == nil then
    return
  end
  if msg.method == "$/cancelRequest" and type(msg.params) == "table" then
    local entry = M.pending[msg.params.id]
    if entry then
      dismiss(msg.params.id, entry, true)
    end
  elseif msg.method == "session/event" and type(msg.params) == "table" then
    local ev = msg.params.event
    if type(ev) == "table" and ev.type == "permission_resolved" then
      local id, entry = find_by_tool_call(ev.toolCallId)
      if entry then
        dismiss(id, entry, true)
      end
    end
  end
end

--- `$/cancelRequest` from the daemon (main loop).
function M.cancelled(id)
  local entry = M.pending[id]
  if entry then
    dismiss(id, entry, false)
  end
end

--- A `permission_resolved` event (main loop).
function M.resolved(ev)
  local id, entry = find_by_tool_call(ev.toolCallId)
  if entry then
    dismiss(id, entry, false)
  end
end

--- The connection ended: every open prompt is moot.
function M.close_all()
  for id, entry in pairs(M.pending) do
    dismiss(id, entry, false)
  end
end

return M
