-- Reading a finished tool call's `details`: the daemon's typed ToolDetails (schemas/README.md,
-- "details"), told apart by `type`. Lua has no types to import, so every read goes through
-- here, by the same field names the web UI (details.js) and VS Code read, and only after the
-- `type` says the field exists.
local compat = require("agentd.compat")

local M = {}

local changes = { write = true, edit = true, undo_edit = true, notebook_edit = true }

--- The details of a call that changed a file (write, edit, undo_edit, notebook_edit: its diff is
--- the cell's), else nil.
function M.file_change(details)
  if type(details) == "table" and changes[details.type] and type(details.path) == "string" then
    return details
  end
  return nil
end

--- The unified diff a call made, or nil (no change, not diffed, or not a file change).
function M.diff(details)
  local change = M.file_change(details)
  local diff = change and compat.present(change.diff) and change.diff
  if type(diff) == "string" and diff ~= "" then
    return diff
  end
  return nil
end

--- The added and removed line counts of a file change, or nil when it has none.
function M.counts(details)
  local change = M.file_change(details)
  if change and type(change.added) == "number" and type(change.removed) == "number" then
    return change.added, change.removed
  end
  return nil
end

--- The details of a task (a subagent's run: childSessionId, agent, turns…), else nil.
function M.subagent(details)
  if type(details) == "table" and details.type == "task" and type(details.childSessionId) == "string" then
    return details
  end
  return nil
end

local MARKS = { error = "✗", warning = "⚠", information = "ℹ", hint = "·" }

--- The problems a file change introduced (`diagnostics`: what a language server reported
--- after it and not before), as transcript lines under a heading; nil when there are none.
function M.problem_lines(details)
  local change = M.file_change(details)
  local found = change and compat.present(change.diagnostics) and change.diagnostics
  if type(found) ~= "table" or #found == 0 then
    return nil
  end
  local lines = { string.format("%d new problem%s the language server reports:", #found, #found == 1 and "" or "s") }
  for _, d in ipairs(found) do
    local origin = compat.present(d.source) and string.format(" (%s)", d.source) or ""
    local mark = MARKS[d.severity] or "·"
    lines[#lines + 1] =
      string.format("%s %s:%d:%d %s: %s%s", mark, d.path, d.line, d.column, d.severity, d.message, origin)
  end
  return lines
end

return M
