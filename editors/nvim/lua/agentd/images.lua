-- Image files named in a prompt (:Agent, :AgentSend): PNG, JPEG, GIF and WebP, told apart by
-- their first bytes, at most MAX_BYTES each; sent as session/prompt `images`.
--
-- `split(args)` takes the command's words: each one naming a readable image file becomes an
-- image, the rest is the prompt text. A word naming a file that is not a usable image is an
-- error (returned, with nothing sent), so a typo is not sent as text.
local M = {}

M.MAX_BYTES = 5 * 1024 * 1024

local ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

--- Base64 of `data` (Neovim 0.7 has no vim.base64).
function M.base64(data)
  if vim.base64 then
    return vim.base64.encode(data)
  end
  local out = {}
  for i = 1, #data, 3 do
    local a, b, c = data:byte(i, i + 2)
    local n = a * 65536 + (b or 0) * 256 + (c or 0)
    local chars = {}
    for k = 3, 0, -1 do
      local index = math.floor(n / 64 ^ k) % 64 + 1
      chars[#chars + 1] = ALPHABET:sub(index, index)
    end
    if not b then
      chars[3], chars[4] = "=", "="
    elseif not c then
      chars[4] = "="
    end
    out[#out + 1] = table.concat(chars)
  end
  return table.concat(out)
end

--- The media type of an image by its first bytes, or nil.
function M.sniff(head)
  if head:sub(1, 8) == "\137PNG\r\n\26\n" then
    return "image/png"
  elseif head:sub(1, 3) == "\255\216\255" then
    return "image/jpeg"
  elseif head:sub(1, 6) == "GIF87a" or head:sub(1, 6) == "GIF89a" then
    return "image/gif"
  elseif head:sub(1, 4) == "RIFF" and head:sub(9, 12) == "WEBP" then
    return "image/webp"
  end
  return nil
end

local function looks_like_image_name(word)
  local lower = word:lower()
  for _, ext in ipairs({ ".png", ".jpg", ".jpeg", ".gif", ".webp" }) do
    if lower:sub(-#ext) == ext then
      return true
    end
  end
  return false
end

--- The image at `path`, or nil and why not.
function M.load(path)
  local file = io.open(vim.fn.expand(path), "rb")
  if not file then
    return nil, "cannot read image " .. path
  end
  local data = file:read(M.MAX_BYTES + 1) or ""
  file:close()
  if #data > M.MAX_BYTES then
    return nil, string.format("image %s is over %d MB; images may be at most %d MB", path, M.MAX_BYTES / 1048576, M.MAX_BYTES / 1048576)
  end
  local mime = M.sniff(data:sub(1, 16))
  if not mime then
    return nil, path .. " is not a PNG, JPEG, GIF or WebP image"
  end
  return { type = "image", data = M.base64(data), mimeType = mime }
end

--- Split a command's words into prompt text and images; on a bad image: nil, nil, why.
function M.split(args)
  local words, images = {}, {}
  for word in args:gmatch("%S+") do
    local path = vim.fn.expand(word)
    if looks_like_image_name(word) and vim.fn.filereadable(path) == 1 then
      local image, why = M.load(word)
      if not image then
        return nil, nil, why
      end
      images[#images + 1] = image
    else
      words[#words + 1] = word
    end
  end
  return table.concat(words, " "), images
end

return M
