-- Pure formatting of the conversation's lines (no buffer access).
local compat = require("agentd.compat")

local M = {}

--- The first line: title (or id), provider/model.
function M.header(info)
  local title = compat.present(info.title) and info.title or info.shown_title or info.sessionId
  return string.format("agentd · %s · %s/%s", title, info.provider, info.model)
end

--- A tool call's subject: "bash  pytest -q", "edit  src/x.py".
function M.tool_label(name, args)
  args = type(args) == "table" and args or {}
  local subject = args.command or args.path or args.pattern or args.query or ""
  if type(subject) ~= "string" then
    subject = ""
  end
  if args.path and args.command == nil then
    subject = vim.fn.fnamemodify(subject, ":~:.")
  end
  subject = string.gsub(subject, "\n.*", " …")
  if #subject > 80 then
    subject = string.sub(subject, 1, 77) .. "..."
  end
  return subject == "" and name or (name .. "  " .. subject)
end

--- The text blocks of a content list, joined.
function M.text_of(content)
  local parts = {}
  for _, block in ipairs(type(content) == "table" and content or {}) do
    if block.type == "text" then
      parts[#parts + 1] = block.text
    end
  end
  return table.concat(parts, "\n")
end

--- `text` split into lines, each with `prefix`.
function M.prefixed(text, prefix)
  local lines = compat.split_lines(text)
  for i, line in ipairs(lines) do
    lines[i] = prefix .. line
  end
  return lines
end

--- The one line of a tool call: fold marker, status, subject, size, duration.
function M.tool_header(tool)
  local status = tool.status or "⋯"
  local line = "▸ " .. status .. " " .. tool.label
  if tool.summary then
    line = line .. "  " .. tool.summary
  end
  if tool.seconds then
    line = line .. string.format("  %.2fs", tool.seconds)
  end
  return line
end

-- Words for the daemon's enum values (approval outcomes, why a run ended).
M.outcome_words = {
  allow_once = "allowed once",
  allow_always = "allowed always (this session)",
  allow_always_project = "allowed always in this project",
  reject_once = "rejected",
  reject_always = "rejected always (this session)",
}
M.stop_words = {
  end_turn = "done",
  max_turns = "turn limit reached",
  budget = "budget reached",
  cancelled = "cancelled",
  error = "error",
  blocked = "blocked by a hook",
}

--- `value` in words from `words`, else with its underscores as spaces.
function M.words(words, value)
  return words[value] or (string.gsub(tostring(value), "_", " "))
end

--- The line that ends a run.
function M.run_end(ev)
  local parts = { M.words(M.stop_words, ev.stopReason or "end_turn") }
  if compat.present(ev.turns) then
    parts[#parts + 1] = ev.turns .. (ev.turns == 1 and " turn" or " turns")
  end
  local usage = compat.present(ev.usage) and ev.usage or nil
  if usage then
    parts[#parts + 1] = string.format("%d↑ %d↓ tokens", usage.inputTokens or 0, usage.outputTokens or 0)
  end
  if compat.present(ev.error) then
    parts[#parts + 1] = tostring(ev.error)
  end
  return "── " .. table.concat(parts, " · ") .. " ──"
end

--- "⊘ pre_tool hook blocked bash: <reason> (scripts/policy-check)", on one line.
function M.hook_block(ev)
  local what = ""
  if compat.present(ev.tool) then
    what = " " .. ev.tool
  elseif ev.event == "user_prompt" then
    what = " the prompt"
  end
  local reason = compat.present(ev.reason) and tostring(ev.reason):gsub("%s+", " ") or ""
  return string.format("⊘ %s hook blocked%s: %s (%s)", ev.event, what, reason, ev.command)
end

--- "? Database · Features (waiting for your answer)": a question_request, on one line
--- (an MCP server's: "? e asks: Date · Party …").
function M.question_asked(ev)
  local heads = {}
  for i, question in ipairs(ev.questions or {}) do
    heads[#heads + 1] = compat.present(question.header) and question.header or ("Question " .. i)
  end
  local who = compat.present(ev.server) and (ev.server .. " asks: ") or ""
  return "? " .. who .. table.concat(heads, " · ") .. " (waiting for your answer)"
end

--- "? Database: SQLite · Features: Auth, Export", or "? not answered: <reason>": the
--- question_resolved of the `questions` asked.
function M.question_settled(questions, ev)
  if not compat.present(ev.answers) then
    return "? not answered: " .. tostring(compat.present(ev.reason) and ev.reason or "no answer")
  end
  local parts = {}
  for i, answer in ipairs(ev.answers) do
    local question = (questions or {})[i] or {}
    local head = compat.present(question.header) and question.header or ("Question " .. i)
    local picked = vim.list_extend({}, answer.selected or {})
    if compat.present(answer.other) then
      picked[#picked + 1] = answer.other
    end
    parts[#parts + 1] = head .. ": " .. table.concat(picked, ", ")
  end
  return "? " .. table.concat(parts, " · ")
end

return M
