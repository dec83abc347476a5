-- The user commands defined by plugin/agentd.lua; each receives the command's `opts` table.
local client = require("agentd.client")
local config = require("agentd.config")
local log = require("agentd.log")

local M = {}
local levels = vim.log.levels

local function ask(prompt, cb)
  vim.ui.input({ prompt = prompt }, function(text)
    if text and vim.trim(text) ~= "" then
      cb(vim.trim(text))
    end
  end)
end

--- Send `text` (with `images`), opening the chat first when configured to.
function M.send_text(text, images)
  if config.options.chat.open_on_prompt then
    require("agentd.chat").open(false)
  end
  client.prompt(text, images)
end

-- The prompt words and the images they name (image files become images); nil on a bad one.
local function with_images(args)
  local text, images, why = require("agentd.images").split(args)
  if not text then
    log.notify(why, levels.ERROR)
    return nil
  end
  return text, images
end

local function relative(buf)
  local name = vim.api.nvim_buf_get_name(buf)
  return name == "" and "[No Name]" or vim.fn.fnamemodify(name, ":~:.")
end

--- :Agent {prompt}
function M.agent(opts)
  if opts.args ~= "" then
    local text, images = with_images(opts.args)
    if text then
      M.send_text(text ~= "" and text or "Look at this image.", images)
    end
    return
  end
  ask("agentd: ", M.send_text)
end

--- :[range]AgentSend [prompt] — the lines with their file and range, after the prompt.
function M.send(opts)
  local buf = vim.api.nvim_get_current_buf()
  local first, last = opts.line1, opts.line2
  local lines = vim.api.nvim_buf_get_lines(buf, first - 1, last, false)
  local fence = string.rep("`", 3)
  local excerpt = string.format("%s lines %d-%d:\n%s%s\n%s\n%s", relative(buf), first, last, fence, vim.bo[buf].filetype, table.concat(lines, "\n"), fence)
  local function send(prompt, images)
    M.send_text(prompt .. "\n\n" .. excerpt, images)
  end
  if opts.args ~= "" then
    -- image files among the words go as images: `:AgentSend what is wrong here? shot.png`
    local text, images = with_images(opts.args)
    if text then
      send(text, images)
    end
    return
  end
  ask("agentd (about the selection): ", send)
end

--- :AgentFix [extra words] — the current buffer's diagnostics.
function M.fix(opts)
  local buf = vim.api.nvim_get_current_buf()
  local diagnostics = vim.diagnostic.get(buf)
  if #diagnostics == 0 then
    return log.notify("no diagnostics in this buffer", levels.INFO)
  end
  table.sort(diagnostics, function(a, b)
    return a.lnum < b.lnum or (a.lnum == b.lnum and a.col < b.col)
  end)
  local names = { "error", "warning", "info", "hint" }
  local items = {}
  for _, d in ipairs(diagnostics) do
    local source = d.source and (" [" .. d.source .. "]") or ""
    items[#items + 1] = string.format("- line %d, col %d: %s: %s%s", d.lnum + 1, d.col + 1, names[d.severity] or "note", d.message, source)
  end
  local text = string.format("Fix these problems reported in %s:\n%s", relative(buf), table.concat(items, "\n"))
  if opts.args ~= "" then
    text = text .. "\n\n" .. opts.args
  end
  M.send_text(text)
end

function M.chat()
  require("agentd.chat").toggle()
end

function M.cancel()
  client.cancel()
end

--- :AgentNew — the next prompt starts a new session.
function M.new()
  client.session, client.running = nil, false
  require("agentd.edits").reset()
  require("agentd.transcript").clear()
end

function M.sessions(opts)
  require("agentd.sessions").pick(opts.bang)
end

function M.model()
  require("agentd.sessions").pick_model()
end

function M.log()
  log.show()
end

function M.diff(opts)
  require("agentd.edits").show(opts.bang)
end

function M.rewind(opts)
  require("agentd.rewind").run(opts)
end

function M.processes()
  require("agentd.processes").open()
end

function M.kill(opts)
  require("agentd.processes").kill(vim.trim(opts.args))
end

return M
