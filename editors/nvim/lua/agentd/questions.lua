-- Questions: answer `session/askQuestion` (the agent's `ask_user`, an MCP server's question)
-- through vim.ui.select, one question after another. One choice: pick it. Several
-- (multiSelect): each pick ticks or unticks an option and the select opens again, "Done"
-- ends. "Other…" asks for a line of your own (vim.ui.input). Dismissing any prompt declines
-- the whole request. A request decided elsewhere (another client answered, a timeout, a
-- cancel: `$/cancelRequest`) closes the prompt shown (a blocking one by typing <Esc>).
local M = {
  pending = {}, -- rpc id -> entry
}

local OTHER = "Other… (write your own answer)"
local DONE = "Done"

local function finish(id, entry, answers)
  if entry.done then
    return
  end
  entry.done = true
  M.pending[id] = nil
  entry.conn:respond(id, { answers = answers or vim.NIL })
end

local function title(question, params)
  local header = type(question.header) == "string" and question.header or ""
  local text = header ~= "" and (header .. ": " .. question.question) or question.question
  if type(params.url) == "string" then
    text = text .. " (" .. params.url .. ")"
  end
  return "agentd asks: " .. text
end

local function select(entry, items, opts, on_choice)
  entry.blocking = true
  vim.ui.select(items, opts, function(choice, index)
    entry.blocking = false
    on_choice(choice, index)
  end)
  entry.blocking = false
end

local ask_question

-- After question `n`: the next one, or the answers back to the daemon.
local function after(id, entry, n, answer)
  if entry.done then
    return
  end
  if answer == nil then
    return finish(id, entry, nil)
  end
  entry.answers[n] = answer
  if n < #entry.params.questions then
    return vim.schedule(function()
      ask_question(id, entry, n + 1)
    end)
  end
  finish(id, entry, entry.answers)
end

local function other_line(id, entry, n, question, selected)
  vim.ui.input({ prompt = title(question, entry.params) .. " > " }, function(text)
    if text == nil or vim.trim(text) == "" then
      return after(id, entry, n, nil)
    end
    after(id, entry, n, { selected = selected, other = vim.trim(text) })
  end)
end

local function labels_of(question)
  local labels = {}
  for i, option in ipairs(question.options or {}) do
    labels[i] = option.label
  end
  return labels
end

local function pick_one(id, entry, n, question)
  local items = vim.list_extend(labels_of(question), { OTHER })
  select(entry, items, { prompt = title(question, entry.params), kind = "agentd.question" }, function(choice)
    if choice == OTHER then
      return vim.schedule(function()
        other_line(id, entry, n, question, {})
      end)
    end
    after(id, entry, n, choice and { selected = { choice }, other = vim.NIL } or nil)
  end)
end

local function pick_several(id, entry, n, question, ticked)
  local labels = labels_of(question)
  local items = {}
  for i, label in ipairs(labels) do
    items[i] = (ticked[label] and "[x] " or "[ ] ") .. label
  end
  vim.list_extend(items, { OTHER, DONE })
  local function chosen_labels()
    local out = {}
    for _, label in ipairs(labels) do
      if ticked[label] then
        out[#out + 1] = label
      end
    end
    return out
  end
  select(entry, items, { prompt = title(question, entry.params), kind = "agentd.question" }, function(choice, index)
    if choice == nil then
      return after(id, entry, n, nil)
    elseif choice == OTHER then
      return vim.schedule(function()
        other_line(id, entry, n, question, chosen_labels())
      end)
    elseif choice == DONE then
      if #chosen_labels() == 0 then
        return vim.schedule(function()
          pick_several(id, entry, n, question, ticked)
        end)
      end
      return after(id, entry, n, { selected = chosen_labels(), other = vim.NIL })
    end
    local label = labels[index]
    ticked[label] = not ticked[label] or nil
    vim.schedule(function()
      pick_several(id, entry, n, question, ticked)
    end)
  end)
end

ask_question = function(id, entry, n)
  if entry.done then
    return
  end
  require("agentd.transcript").flush_now()
  vim.cmd("redraw")
  local question = entry.params.questions[n]
  if #(question.options or {}) == 0 then
    return other_line(id, entry, n, question, {})
  end
  if question.multiSelect == true then
    return pick_several(id, entry, n, question, {})
  end
  pick_one(id, entry, n, question)
end

--- Ask the user the questions of one request (`id` is the daemon's request id).
function M.ask(conn, id, params)
  local entry = { params = params, conn = conn, done = false, answers = {} }
  M.pending[id] = entry
  vim.schedule(function()
    ask_question(id, entry, 1)
  end)
end

--- The request was decided elsewhere (`$/cancelRequest`): close the prompt shown.
function M.cancelled(id, fast)
  local entry = M.pending[id]
  if not entry or entry.done then
    return
  end
  entry.done = true
  M.pending[id] = nil
  if entry.blocking then
    vim.api.nvim_input("<Esc>")
  end
end

--- The connection ended: every open question is moot.
function M.close_all()
  for id in pairs(M.pending) do
    M.cancelled(id)
  end
end

return M
