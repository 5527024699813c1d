-- Small helpers shared by the other modules: notifications, paths and
-- UTF-16 columns.
local M = {}

local uv = vim.uv or vim.loop

local levels = { debug = vim.log.levels.DEBUG, info = vim.log.levels.INFO, warn = vim.log.levels.WARN, error = vim.log.levels.ERROR }

--- Shows msg to the user with the plugin's title. Safe to call from a libuv
--- callback: it always goes through the main loop.
---@param msg string
---@param level? string|integer "info" (default), "warn", "error" or a vim.log.levels value
function M.notify(msg, level)
  if type(level) == "string" then
    level = levels[level] or vim.log.levels.INFO
  end
  level = level or vim.log.levels.INFO
  local function show()
    vim.notify("gemini-companion: " .. msg, level, { title = "Gemini" })
  end
  if vim.in_fast_event() then
    vim.schedule(show)
  else
    show()
  end
end

--- Returns the level name's numeric value (vim.log.levels).
function M.level(name)
  return levels[name]
end

--- Returns the canonical absolute path of an existing file, or path itself
--- made absolute when it cannot be resolved.
---@param path string
---@return string
function M.realpath(path)
  return uv.fs_realpath(path) or vim.fn.fnamemodify(path, ":p")
end

--- The current working directory of the editor, resolved.
function M.cwd()
  local cwd = vim.fn.getcwd(-1, -1)
  return uv.fs_realpath(cwd) or cwd
end

--- True when path names a regular file on disk.
function M.is_file(path)
  local st = uv.fs_stat(path)
  return st ~= nil and st.type == "file"
end

--- True when name looks like a URL-style buffer name (fugitive://, oil://,
--- gemini://, term://...), which never names a file on disk.
function M.is_url(name)
  return name:match("^%a[%w+.-]*://") ~= nil
end

local has_011 = vim.fn.has("nvim-0.11") == 1

--- Number of UTF-16 code units in the first `col` bytes of line.
---@param line string
---@param col integer byte offset (0-based); clamped to the line
---@return integer
function M.utf16_col(line, col)
  if col <= 0 then
    return 0
  end
  if col > #line then
    col = #line
  end
  local ok, units
  if has_011 then
    ok, units = pcall(vim.str_utfindex, line, "utf-16", col, false)
  else
    ok, units = pcall(function()
      local _, u16 = vim.str_utfindex(line, col)
      return u16
    end)
  end
  if ok and units then
    return units
  end
  -- Invalid UTF-8 (or a column inside a character): count by hand. Lead
  -- bytes of 4-byte sequences are two UTF-16 units, continuation bytes none.
  units = 0
  for i = 1, col do
    local b = line:byte(i)
    if b >= 0xF0 then
      units = units + 2
    elseif b < 0x80 or b >= 0xC0 then
      units = units + 1
    end
  end
  return units
end

--- Length in bytes of the UTF-8 character that starts at byte i (1-based).
function M.char_len(s, i)
  local b = s:byte(i)
  if not b then
    return 0
  elseif b >= 0xF0 then
    return 4
  elseif b >= 0xE0 then
    return 3
  elseif b >= 0xC0 then
    return 2
  end
  return 1
end

--- Cuts s to at most max bytes without splitting a UTF-8 character.
function M.truncate(s, max)
  if #s <= max then
    return s
  end
  local cut = max
  -- Step back over continuation bytes to a character boundary.
  while cut > 0 do
    local b = s:byte(cut + 1)
    if not b or b < 0x80 or b >= 0xC0 then
      break
    end
    cut = cut - 1
  end
  return s:sub(1, cut)
end

--- Path of file relative to dir when it lies inside it, else the absolute path.
function M.relative(file, dir)
  dir = dir:gsub("/+$", "")
  if file:sub(1, #dir + 1) == dir .. "/" then
    return file:sub(#dir + 2)
  end
  return file
end

local visual_modes = { v = true, V = true, ["\22"] = true, s = true, S = true, ["\19"] = true }

--- True when mode (from nvim_get_mode) is a visual or select mode.
function M.is_visual(mode)
  return visual_modes[mode:sub(1, 1)] == true
end

--- Ends visual/select mode, if active, before the plugin moves the focus
--- to another window (moving it through the API keeps visual mode on).
function M.leave_visual()
  if M.is_visual(vim.api.nvim_get_mode().mode) then
    vim.cmd("normal! \27")
  end
end

--- Returns the buffer's text as the file it stands for would hold it.
function M.buf_text(buf)
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local text = table.concat(lines, "\n")
  if vim.api.nvim_buf_get_option(buf, "eol") then
    text = text .. "\n"
  end
  return text
end

--- Fills buf with text, keeping whether it ends in a newline so that
--- buf_text gives text back unchanged.
function M.set_buf_text(buf, text)
  local eol = text:sub(-1) == "\n"
  if eol then
    text = text:sub(1, -2)
  end
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(text, "\n", { plain = true }))
  vim.api.nvim_buf_set_option(buf, "eol", eol)
  vim.api.nvim_buf_set_option(buf, "fixeol", eol)
end

return M
