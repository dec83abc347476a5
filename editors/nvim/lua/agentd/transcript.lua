-- The conversation buffer (agentd://chat): events in, lines out, at most one write per frame.
--
-- Contract: `push(event, seq)` only queues; the queue is written by `flush()`, which runs from
-- vim.schedule at most once per FRAME_MS, so a reply of thousands of deltas costs a few
-- buffer writes per second of streaming and never blocks typing. Line prefixes carry the fold
-- structure (see FOLDEXPR): "▸ " opens a fold (a tool call, thinking), "│ " and "┊ " are its
-- body (tool output, reasoning); everything else is unfolded text ("▏ ": the change an
-- approval asks about, always in view).
local compat = require("agentd.compat")
local details = require("agentd.details")
local format = require("agentd.format")
local uv = compat.uv

local M = {
  buf = nil,
  queue = {},
  flush_pending = false,
  last_flush = 0,
  stream = nil, -- { prefix, pieces } of the text being streamed at the end of the buffer
  tools = {}, -- toolCallId -> { mark, label, name, started, output, dirty, body }
  approvals = {}, -- toolCallId (or "question:" .. id) -> extmark of its line
  asked = {}, -- questionId -> the questions of its question_request
  child_args = {}, -- a subagent's toolCallId -> its arguments (for its step's line)
  plan_rows = 0, -- lines the pinned plan takes right below the header
  ns = vim.api.nvim_create_namespace("agentd_transcript"),
  stats = { events = 0, flushes = 0 }, -- counters for tests and benchmarks
}

M.FRAME_MS = 16
M.FOLDEXPR = [[getline(v:lnum)=~#'^▸ '?'>1':(getline(v:lnum)=~#'^[│┊] '?'1':'0')]]
M.FOLDTEXT = [[getline(v:foldstart).'  ['.(v:foldend-v:foldstart).' lines]']]

local function options()
  return require("agentd.config").options.chat
end

--- The transcript buffer, created on first use.
function M.buffer()
  if M.buf and vim.api.nvim_buf_is_valid(M.buf) then
    return M.buf
  end
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(buf, "agentd://chat")
  vim.bo[buf].bufhidden = "hide"
  vim.bo[buf].swapfile = false
  vim.bo[buf].filetype = "agentd"
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, { "agentd — type below and press <CR>" })
  vim.bo[buf].modifiable = false
  M.buf = buf
  return buf
end

local function replace_all(lines)
  local buf = M.buffer()
  M.queue, M.stream, M.tools, M.approvals, M.plan_rows = {}, nil, {}, {}, 0
  M.asked = {}
  M.child_args = {}
  vim.api.nvim_buf_clear_namespace(buf, M.ns, 0, -1)
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
end

--- Start a fresh transcript for session `info` (a SessionInfo).
function M.reset(info)
  M.info = info
  replace_all({ format.header(info) })
end

--- Empty the transcript (no current session).
function M.clear()
  replace_all({ "agentd — no session; type below and press <CR> to start one" })
end

--- Rewrite the first line after the session's settings changed (an untitled session keeps
--- the title its first prompt gave it, as after a reload or a rewind).
function M.set_header(info)
  local old = M.info
  if old and old.sessionId == info.sessionId and old.shown_title and not compat.present(info.title) then
    info = vim.tbl_extend("force", {}, info, { shown_title = old.shown_title })
  end
  M.info = info
  local buf = M.buffer()
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, 1, false, { format.header(info) })
  vim.bo[buf].modifiable = false
end

-- Buffer primitives (the buffer is modifiable while flush runs).

local function line_count()
  return vim.api.nvim_buf_line_count(M.buf)
end

local function append(lines)
  vim.api.nvim_buf_set_lines(M.buf, -1, -1, false, lines)
end

-- Append the streamed pieces at the end of the last line (which the stream owns).
local function commit_text()
  local s = M.stream
  if not s or #s.pieces == 0 then
    return
  end
  local lines = compat.split_lines(table.concat(s.pieces))
  s.pieces = {}
  for i = 2, #lines do
    lines[i] = s.prefix .. lines[i]
  end
  local last = line_count() - 1
  vim.api.nvim_buf_set_text(M.buf, last, s.width, last, s.width, lines)
  s.width = (#lines == 1 and s.width or 0) + #lines[#lines]
end

local function end_stream()
  commit_text()
  M.stream = nil
end

local function stream_text(kind, text)
  if not M.stream or M.stream.kind ~= kind then
    end_stream()
    if kind == "thinking" then
      append({ "▸ thinking", "┊ " })
      M.stream = { kind = kind, prefix = "┊ ", pieces = {}, width = #"┊ " }
    else
      append({ "" })
      M.stream = { kind = kind, prefix = "", pieces = {}, width = 0 }
    end
  end
  M.stream.pieces[#M.stream.pieces + 1] = text
end

local function mark_row(mark)
  return vim.api.nvim_buf_get_extmark_by_id(M.buf, M.ns, mark, {})[1]
end

-- A mark that stays at the start of its line when the line's text is replaced.
local function new_mark(row)
  return vim.api.nvim_buf_set_extmark(M.buf, M.ns, row, 0, { right_gravity = false })
end

-- Replace the text of line `row` in place (set_lines would move the marks on it).
local function set_line(row, text)
  local old = vim.api.nvim_buf_get_lines(M.buf, row, row + 1, false)[1]
  vim.api.nvim_buf_set_text(M.buf, row, 0, row, #old, { text })
end

local function render_tool(tool)
  local row = mark_row(tool.mark)
  local keep = options().tool_output_lines
  local lines = compat.split_lines(string.gsub(tool.output, "\n$", ""))
  if tool.output == "" then
    lines = {}
  elseif #lines > keep then
    local hidden = #lines - keep
    lines = vim.list_slice(lines, hidden + 1)
    table.insert(lines, 1, string.format("… %d earlier lines", hidden))
  end
  local body = #lines == 0 and {} or format.prefixed(table.concat(lines, "\n"), "│ ")
  set_line(row, format.tool_header(tool))
  vim.api.nvim_buf_set_lines(M.buf, row + 1, row + 1 + tool.body, false, body)
  tool.body = #body
  tool.dirty = false
end

local function start_tool(id, name, args, status)
  end_stream()
  local tool = { label = format.tool_label(name, args), name = name, started = uv.hrtime() }
  tool.output, tool.body, tool.status = "", 0, status
  append({ format.tool_header(tool) })
  tool.mark = new_mark(line_count() - 1)
  M.tools[id] = tool
  return tool
end

local function end_tool(ev)
  local tool = M.tools[ev.toolCallId] or start_tool(ev.toolCallId, ev.name, {}, nil)
  tool.seconds = (uv.hrtime() - tool.started) / 1e9
  tool.status = ev.isError and "✗" or "✓"
  local added, removed = details.counts(ev.details)
  if added then
    tool.summary = string.format("+%d -%d", added, removed)
  end
  local child = details.subagent(ev.details)
  if child then -- a task: the subagent's own session
    tool.summary = string.format("subagent %s · session %s", child.agent, child.childSessionId)
  end
  local diff = details.diff(ev.details)
  if diff then
    local problems = details.problem_lines(ev.details)
    tool.output = problems and (string.gsub(diff, "\n$", "") .. "\n" .. table.concat(problems, "\n")) or diff
  elseif tool.output == "" then
    tool.output = format.text_of(ev.result)
  end
  render_tool(tool)
end

local CHILD_MARKS = { done = "✓", error = "✗" }

-- A subagent's step in the body of its task's call: each of its finished tool calls as one
-- line (`✓ write  child.txt`) and its replies' first lines (`› …`), as they come.
local function child_step(task, ev)
  local line
  if ev.type == "tool_execution_end" then
    local mark = CHILD_MARKS[ev.isError and "error" or "done"]
    line = mark .. " " .. format.tool_label(ev.name, M.child_args[ev.toolCallId])
  elseif ev.type == "tool_execution_start" then
    M.child_args[ev.toolCallId] = ev.args
  elseif ev.type == "message_end" and type(ev.message) == "table" and ev.message.role == "assistant" then
    local text = format.text_of(ev.message.content)
    if text ~= "" then
      line = "› " .. string.sub(compat.split_lines(text)[1], 1, 120)
    end
  end
  local tool = M.tools[task]
  if line and tool then
    tool.child_lines = tool.child_lines or {}
    tool.child_lines[#tool.child_lines + 1] = line
    tool.output = table.concat(tool.child_lines, "\n")
    tool.dirty = true
  end
end

local function approval_line(id, text)
  local mark = M.approvals[id]
  if mark then
    return set_line(mark_row(mark), text)
  end
  end_stream()
  append({ text })
  M.approvals[id] = new_mark(line_count() - 1)
end

-- An untitled session is shown under its first prompt (as the daemon lists it).
local function name_after(text)
  local info = M.info
  if info and not compat.present(info.title) and not info.shown_title then
    info.shown_title = string.sub(compat.split_lines(text)[1], 1, 60)
    vim.api.nvim_buf_set_lines(M.buf, 0, 1, false, { format.header(info) })
  end
end

local function render_message(message)
  end_stream()
  if message.role == "user" then
    local text = format.text_of(message.content)
    append({ "", "▍You" })
    if compat.present(message.command) then -- a custom command: as typed, its prompt folded
      append(compat.split_lines(message.command))
      append({ "▸ expanded", unpack(format.prefixed(text, "┊ ")) })
      text = message.command
    else
      append(compat.split_lines(text))
    end
    name_after(text)
  elseif message.role == "assistant" then
    append({ "", "▍Agent" })
    for _, block in ipairs(message.content or {}) do
      if block.type == "text" then
        append(compat.split_lines(block.text))
      elseif block.type == "thinking" then
        append({ "▸ thinking", unpack(format.prefixed(block.thinking or "", "┊ ")) })
      elseif block.type == "tool_call" then
        start_tool(block.id, block.name, block.arguments, "•")
      end
    end
  elseif message.role == "tool_result" then
    local tool = M.tools[message.toolCallId]
    if tool then
      tool.status = message.isError and "✗" or "✓"
      tool.output = format.text_of(message.content)
      render_tool(tool)
    end
  end
end

local PLAN_MARKS = { completed = "✔", in_progress = "▸", pending = "○" }

-- The agent's plan, pinned below the header line: replaced whole by each plan_update.
local function render_plan(ev)
  local entries = ev.entries or {}
  local lines = {}
  if #entries > 0 then
    local done = 0
    for _, entry in ipairs(entries) do
      done = done + (entry.status == "completed" and 1 or 0)
    end
    lines[1] = string.format("◆ plan  %d/%d done", done, #entries)
    for _, entry in ipairs(entries) do
      lines[#lines + 1] = "  " .. (PLAN_MARKS[entry.status] or "○") .. " " .. entry.content
    end
    lines[#lines + 1] = ""
  end
  vim.api.nvim_buf_set_lines(M.buf, 1, 1 + M.plan_rows, false, lines)
  M.plan_rows = #lines
end

local renderers = {
  plan_update = render_plan,
  message_start = function(ev)
    if ev.role == "assistant" then
      end_stream()
      append({ "", "▍Agent" })
    end
  end,
  message_update = function(ev)
    local d = ev.delta
    if d.type == "text_delta" then
      stream_text("text", d.text)
    elseif d.type == "thinking_delta" then
      stream_text("thinking", d.text)
    end
  end,
  message_end = function(ev, seq)
    if seq == 0 then
      return render_message(ev.message)
    end
    end_stream()
    if ev.message.role == "user" then
      render_message(ev.message)
    end
  end,
  tool_execution_start = function(ev)
    start_tool(ev.toolCallId, ev.name, ev.args, nil)
  end,
  tool_execution_update = function(ev)
    local tool = M.tools[ev.toolCallId]
    if tool then
      tool.output = string.sub(tool.output .. ev.output, -65536)
      tool.dirty = true
    end
  end,
  tool_execution_end = end_tool,
  permission_request = function(ev)
    local approval = require("agentd.approval")
    local known = M.approvals[ev.toolCallId] ~= nil
    approval_line(ev.toolCallId, "⚑ approval needed: " .. approval.describe(ev))
    local preview = approval.preview_lines(ev.preview)
    if not known and #preview > 0 then -- the change to approve, once, under the question (unfolded)
      append(format.prefixed(table.concat(preview, "\n"), "▏ "))
    end
  end,
  permission_resolved = function(ev)
    local reason = compat.present(ev.reason) and (" (" .. ev.reason .. ")") or ""
    approval_line(ev.toolCallId, "⚑ " .. format.words(format.outcome_words, ev.outcome) .. reason)
  end,
  question_request = function(ev) -- one line per round, settled in place
    M.asked[ev.questionId] = ev.questions
    approval_line("question:" .. ev.questionId, format.question_asked(ev))
  end,
  question_resolved = function(ev)
    local line = format.question_settled(M.asked[ev.questionId], ev)
    approval_line("question:" .. ev.questionId, line)
  end,
  retry = function(ev)
    end_stream()
    append({ string.format("↻ retry %d/%d in %.1fs: %s", ev.attempt, ev.maxAttempts, ev.delayMs / 1000, ev.error) })
  end,
  error = function(ev)
    end_stream()
    append({ "✗ " .. ev.message })
  end,
  session_warning = function(ev)
    end_stream()
    append({ "⚠ " .. ev.message })
  end,
  hook_result = function(ev)
    if ev.decision == "block" then -- a failed hook also sent a session_warning
      end_stream()
      append({ format.hook_block(ev) })
    end
  end,
  compaction_end = function(ev)
    end_stream()
    append({ "⋯ compacted older messages (" .. (ev.reason or "") .. ")" })
  end,
  agent_end = function(ev)
    end_stream()
    append({ "", format.run_end(ev) })
  end,
  subagent_step = function(ev)
    child_step(ev.task, ev.child)
  end,
}

local function followers()
  local wins = {}
  local last = line_count()
  for _, win in ipairs(vim.fn.win_findbuf(M.buf)) do
    if vim.api.nvim_win_get_cursor(win)[1] >= last then
      wins[#wins + 1] = win
    end
  end
  return wins
end

--- Write what is queued now, if anything (before a blocking prompt takes the screen).
function M.flush_now()
  if M.flush_pending then
    M.flush()
  end
end

--- Write everything queued to the buffer (main loop only).
function M.flush()
  M.stats.flushes = M.stats.flushes + 1
  M.flush_pending = false
  M.last_flush = uv.now()
  local queue = M.queue
  M.queue = {}
  local buf = M.buffer()
  local follow = followers()
  vim.bo[buf].modifiable = true
  for _, item in ipairs(queue) do
    local render = renderers[item.event.type]
    if render then
      render(item.event, item.seq)
    end
  end
  commit_text()
  for _, tool in pairs(M.tools) do
    if tool.dirty then
      render_tool(tool)
    end
  end
  vim.bo[buf].modifiable = false
  local last = line_count()
  for _, win in ipairs(follow) do
    vim.api.nvim_win_set_cursor(win, { last, 0 })
  end
end

local timer = nil

--- Queue an event for the next frame.
function M.push(event, seq)
  M.stats.events = M.stats.events + 1
  M.queue[#M.queue + 1] = { event = event, seq = seq }
  if M.flush_pending then
    return
  end
  M.flush_pending = true
  local wait = M.FRAME_MS - (uv.now() - M.last_flush)
  if wait <= 0 then
    return vim.schedule(M.flush)
  end
  timer = timer or uv.new_timer()
  timer:start(wait, 0, function()
    vim.schedule(M.flush)
  end)
end

--- A subagent's event, for the task call `task` (its tool call id): queued like the others,
--- so it is drawn after the task's own line (see the `subagent_step` renderer).
function M.push_child(task, ev)
  M.push({ type = "subagent_step", task = task, child = ev }, 0)
end

--- The answer of session/prompt (usage and stop reason are already in agent_end).
function M.prompt_done(result)
  if result and compat.present(result.error) and result.stopReason ~= "error" then
    require("agentd.log").notify(tostring(result.error), vim.log.levels.ERROR)
  end
end

--- The whole transcript as text (tests, :AgentExport-like uses).
function M.text()
  if M.flush_pending then
    M.flush()
  end
  return table.concat(vim.api.nvim_buf_get_lines(M.buffer(), 0, -1, false), "\n")
end

return M
