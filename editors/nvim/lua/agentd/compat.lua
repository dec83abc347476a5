-- Version guards: one place that knows which Neovim API exists where (0.7 through 0.12).
local M = {}

M.uv = vim.uv or vim.loop

local has_json = type(vim.json) == "table" and vim.json.encode ~= nil

--- Encode a Lua value as JSON. Empty tables become `[]`; pass vim.empty_dict() for `{}`.
function M.encode(value)
  if has_json then
    return vim.json.encode(value)
  end
  return vim.fn.json_encode(value)
end

--- Decode JSON text; JSON null becomes vim.NIL. Raises on malformed text.
function M.decode(text)
  if has_json then
    return vim.json.decode(text)
  end
  return vim.fn.json_decode(text)
end

--- True when `value` is neither nil nor JSON null.
function M.present(value)
  return value ~= nil and value ~= vim.NIL
end

--- An empty JSON object.
function M.empty_object()
  return vim.empty_dict()
end

--- Split text on "\n" into a list (a trailing newline yields a trailing empty string).
function M.split_lines(text)
  local lines = {}
  local start = 1
  while true do
    local nl = string.find(text, "\n", start, true)
    if not nl then
      lines[#lines + 1] = string.sub(text, start)
      return lines
    end
    lines[#lines + 1] = string.sub(text, start, nl - 1)
    start = nl + 1
  end
end

--- The health reporting functions of this Neovim (vim.health on 0.10+, report_* before).
function M.health()
  local h = vim.health
  if h == nil or (h.start == nil and h.report_start == nil) then
    h = require("health")
  end
  return {
    start = h.start or h.report_start,
    ok = h.ok or h.report_ok,
    warn = h.warn or h.report_warn,
    error = h.error or h.report_error,
    info = h.info or h.report_info,
  }
end

--- Neovim's version as "0.7.2".
function M.nvim_version()
  local v = vim.version()
  return string.format("%d.%d.%d", v.major, v.minor, v.patch)
end

return M
