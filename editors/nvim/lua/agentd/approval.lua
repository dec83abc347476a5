-- Approvals: answer `session/requestPermission` through vim.ui.select. The change to approve
-- (the daemon's preview: a diff, a command and its directory, a URL, an MCP call) is in the
-- chat under the approval line (see transcript.lua), drawn before the prompt opens.
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
  allow_always_project = "Allow always in this project (saved in your config)",
  reject_once = "Reject",
  reject_always = "Reject always (this session)",
}

local MAX_PREVIEW_LINES = 40

-- The label of an option; the "always" ones name the rule they add and for how long.
local function label(option, params)
  local rule = params.alwaysRule
  if type(rule) == "string" and rule ~= "" then
    if option == "allow_always" then
      return "Allow always (adds " .. rule .. " for this session)"
    elseif option == "allow_always_project" then
      return "Allow always in this project (keeps " .. rule .. " in your config for this folder)"
    elseif option == "reject_always" then
      return "Reject always (refuses " .. rule .. " for this session)"
    end
  end
  return labels[option] or option
end

local function capped(lines)
  if #lines <= MAX_PREVIEW_LINES then
    return lines
  end
  local more = #lines - MAX_PREVIEW_LINES
  lines = vim.list_slice(lines, 1, MAX_PREVIEW_LINES)
  lines[#lines + 1] = string.format("… %d more lines", more)
  return lines
end

--- What a call waiting for approval would do (the daemon's `preview`), as lines without a
--- prefix: the diff of an edit or write (its path and size first, header lines dropped), the
--- command and its directory, the URL, the MCP server, tool and arguments. Empty without one.
function M.preview_lines(preview)
  if type(preview) ~= "table" then
    return {}
  end
  local lines = {}
  if preview.kind == "command" then
    lines = capped(vim.split("$ " .. tostring(preview.command or ""), "\n", { plain = true }))
    lines[#lines + 1] = "in " .. tostring(preview.cwd or "?")
  elseif preview.kind == "url" then
    lines = { "fetch " .. tostring(preview.url or "") }
  elseif preview.kind == "mcp" then
    local ok, args = pcall(vim.json.encode, preview.arguments or {})
    lines = { string.format("MCP %s · %s  %s", tostring(preview.server), tostring(preview.tool), ok and args or "") }
  else
    local count = preview.added or 0
    local size = preview.created and string.format("new file, %d line%s", count, count == 1 and "" or "s")
      or string.format("+%d -%d", preview.added or 0, preview.removed or 0)
    lines = { tostring(preview.path or "?") .. "  " .. size }
    if type(preview.error) == "string" then
      lines[#lines + 1] = "this call would fail: " .. preview.error
    end
    local body = {}
    for _, line in ipairs(vim.split(type(preview.diff) == "string" and preview.diff or "", "\n", { plain = true })) do
      if line ~= "" and not line:match("^%-%-%- ") and not line:match("^%+%+%+ ") then
        body[#body + 1] = line
      end
    end
    vim.list_extend(lines, capped(body))
  end
  return lines
end

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
  -- The chat (with the change to approve) is drawn before a blocking prompt holds the screen.
  require("agentd.transcript").flush_now()
  vim.cmd("redraw")
  local before = list_windows()
  local options = entry.params.options or { "allow_once", "allow_always", "reject_once", "reject_always" }
  entry.blocking = true
  vim.ui.select(vim.list_extend({}, options), {
    prompt = "agentd wants to " .. describe(entry.params),
    kind = "agentd.permission",
    format_item = function(option)
      return label(option, entry.params)
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
