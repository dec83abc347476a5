-- The chat split: the transcript window and, below it, an input window.
--
-- Contract: `toggle()` opens both windows in the current tab or closes them; `open()` only
-- opens. In the input buffer, <CR> in normal mode (and the submit_insert key in insert mode)
-- sends the text as a prompt (or steers a running agent) and clears it.
local config = require("agentd.config")
local transcript = require("agentd.transcript")

local M = { input_buf = nil }

local function input_buffer()
  if M.input_buf and vim.api.nvim_buf_is_valid(M.input_buf) then
    return M.input_buf
  end
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(buf, "agentd://input")
  vim.bo[buf].bufhidden = "hide"
  vim.bo[buf].swapfile = false
  vim.bo[buf].filetype = "agentdinput"
  local keys = config.options.chat.keys
  local function map(mode, lhs, fn, desc)
    if lhs and lhs ~= "" then
      vim.keymap.set(mode, lhs, fn, { buffer = buf, desc = desc, nowait = true })
    end
  end
  map("n", keys.submit, M.submit, "agentd: send")
  map("i", keys.submit_insert, function()
    vim.cmd("stopinsert")
    M.submit()
  end, "agentd: send")
  map("n", keys.cancel, require("agentd.client").cancel, "agentd: cancel the run")
  map("n", keys.close, M.close, "agentd: close the chat")
  local hint = string.format("prompt here; %s sends, %s stops the run", keys.submit, keys.cancel)
  vim.api.nvim_buf_set_extmark(buf, vim.api.nvim_create_namespace("agentd_input"), 0, 0, {
    virt_text = { { hint, "Comment" } },
    virt_text_pos = "eol",
  })
  require("agentd.slash").attach(buf) -- `/name` completion of custom commands
  M.input_buf = buf
  return buf
end

local function chat_keys(buf)
  local keys = config.options.chat.keys
  if keys.close and keys.close ~= "" then
    vim.keymap.set("n", keys.close, M.close, { buffer = buf, desc = "agentd: close the chat", nowait = true })
  end
  if keys.cancel and keys.cancel ~= "" then
    vim.keymap.set("n", keys.cancel, require("agentd.client").cancel, { buffer = buf, desc = "agentd: cancel" })
  end
  vim.keymap.set("n", "<Tab>", "za", { buffer = buf, desc = "agentd: toggle the fold" })
end

local function set_win_options(win, is_chat)
  local wo = vim.wo[win]
  wo.number, wo.relativenumber, wo.signcolumn = false, false, "no"
  wo.wrap, wo.linebreak = true, true
  wo.winfixwidth = true
  if is_chat then
    wo.foldmethod, wo.foldexpr, wo.foldtext = "expr", transcript.FOLDEXPR, transcript.FOLDTEXT
    wo.foldlevel, wo.foldenable = 0, true
    wo.statusline = [[%{luaeval('require("agentd").status()')}%=%l/%L]]
  else
    wo.winfixheight = true
  end
end

--- The chat and input windows of the current tab (either may be nil).
function M.windows()
  local chat_win, input_win
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    local buf = vim.api.nvim_win_get_buf(win)
    if buf == transcript.buf then
      chat_win = win
    elseif buf == M.input_buf then
      input_win = win
    end
  end
  return chat_win, input_win
end

--- Open the chat in the current tab (focus goes to the input window when `focus`).
function M.open(focus)
  local chat_buf = transcript.buffer()
  local in_buf = input_buffer()
  local chat_win, input_win = M.windows()
  local origin = vim.api.nvim_get_current_win()
  local o = config.options.chat
  if not chat_win then
    local split = ({ left = "topleft vsplit", bottom = "botright split" })[o.position] or "botright vsplit"
    vim.cmd(split)
    chat_win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(chat_win, chat_buf)
    if o.position == "bottom" then
      vim.api.nvim_win_set_height(chat_win, o.height)
    else
      vim.api.nvim_win_set_width(chat_win, o.width)
    end
    set_win_options(chat_win, true)
    chat_keys(chat_buf)
    vim.api.nvim_win_set_cursor(chat_win, { vim.api.nvim_buf_line_count(chat_buf), 0 })
  end
  if not input_win then
    vim.api.nvim_set_current_win(chat_win)
    vim.cmd("belowright split")
    input_win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(input_win, in_buf)
    vim.api.nvim_win_set_height(input_win, o.input_height)
    set_win_options(input_win, false)
  end
  vim.api.nvim_set_current_win(focus and input_win or origin)
end

--- Close both windows (the buffers and the conversation stay).
function M.close()
  local chat_win, input_win = M.windows()
  for _, win in ipairs({ input_win, chat_win }) do
    if win and vim.api.nvim_win_is_valid(win) and #vim.api.nvim_list_wins() > 1 then
      vim.api.nvim_win_close(win, true)
    end
  end
end

function M.toggle()
  local chat_win = M.windows()
  if chat_win then
    return M.close()
  end
  M.open(true)
end

--- Send what the input buffer holds.
function M.submit()
  local buf = input_buffer()
  local text = vim.trim(table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n"))
  if text == "" then
    return
  end
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, {})
  require("agentd.client").prompt(text)
end

return M
