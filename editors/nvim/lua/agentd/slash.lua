-- Custom commands in the chat's input buffer: `/name` completion.
--
-- Contract: `attach(buf)` makes `complete` the buffer's 'omnifunc' and 'completefunc' (so
-- <C-x><C-o> and <C-x><C-u> complete), opens the menu by itself when `/` is typed as the first
-- character of the buffer, and reads the commands (`session/commands`: the current session's,
-- or those a new session in the cwd would have) when the buffer is made and on every
-- InsertEnter, so a new command file is offered the next time you type. While you type in the
-- buffer 'completeopt' is "menuone,noinsert,noselect" (yours again on InsertLeave or when
-- you leave the buffer). Only the first word of
-- the first line is completed. The chat has no `/` commands of its own: every `/name` prompt
-- goes to the daemon, which expands it (an unknown name comes back as an error listing the
-- known ones).
local M = { items = {} }

--- Read the commands again (asynchronously); `cb()` runs once they are in.
function M.refresh(cb)
  local client = require("agentd.client")
  local params = client.session and { sessionId = client.session.sessionId } or { cwd = vim.fn.getcwd() }
  client.call("session/commands", params, function(err, result)
    if not err and result then
      M.items = result.commands or {}
    end
    if cb then
      cb()
    end
  end)
end

--- The completion function ('omnifunc'/'completefunc' protocol).
function M.complete(findstart, base)
  if findstart == 1 then
    local line = vim.api.nvim_get_current_line()
    local before = string.sub(line, 1, vim.fn.col(".") - 1)
    if vim.fn.line(".") ~= 1 or string.sub(before, 1, 1) ~= "/" or before:find("%s") then
      return -3 -- not a command name: leave completion mode quietly
    end
    return 0
  end
  local words = {}
  for _, command in ipairs(M.items) do
    local word = "/" .. command.name
    if vim.startswith(word, base) then
      local hint = command.argumentHint
      words[#words + 1] = {
        word = word .. " ",
        abbr = word,
        menu = (hint ~= nil and hint ~= vim.NIL) and hint or "",
        info = command.description,
        kind = command.source == "project" and "project" or "user",
        dup = 1,
      }
    end
  end
  return words
end

_G.agentd_complete_command = M.complete

--- Set up completion in the input buffer `buf` (see the contract above).
function M.attach(buf)
  vim.bo[buf].omnifunc = "v:lua.agentd_complete_command"
  vim.bo[buf].completefunc = "v:lua.agentd_complete_command"
  local group = vim.api.nvim_create_augroup("agentd_slash_" .. buf, { clear = true })
  local saved -- the user's 'completeopt' (global before 0.10), put back on InsertLeave
  vim.api.nvim_create_autocmd("InsertEnter", {
    group = group,
    buffer = buf,
    callback = function()
      saved = vim.o.completeopt
      vim.o.completeopt = "menuone,noinsert,noselect" -- typing narrows the menu, nothing chosen for you
      M.refresh()
    end,
  })
  vim.api.nvim_create_autocmd({ "InsertLeave", "BufLeave" }, { -- <C-c> skips InsertLeave
    group = group,
    buffer = buf,
    callback = function()
      if saved then
        vim.o.completeopt, saved = saved, nil
      end
    end,
  })
  vim.api.nvim_create_autocmd("InsertCharPre", {
    group = group,
    buffer = buf,
    callback = function()
      local first = vim.fn.line(".") == 1 and vim.fn.col(".") == 1 and vim.api.nvim_get_current_line() == ""
      if vim.v.char == "/" and first and #M.items > 0 then
        vim.schedule(function()
          if vim.api.nvim_get_current_buf() == buf and vim.fn.mode() == "i" then
            vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<C-x><C-o>", true, false, true), "n", false)
          end
        end)
      end
    end,
  })
  M.refresh()
end

return M
