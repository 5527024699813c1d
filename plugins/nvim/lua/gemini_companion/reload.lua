-- Keeps buffers in step with their files on disk. When Gemini CLI writes
-- an edit itself, the file's buffer is reloaded once the write is over
-- (a writer first empties the file, then fills it: the buffer never shows
-- the empty file) if it has no unsaved changes; a buffer with unsaved
-- changes keeps them and the user is warned.
--
-- setup() watches every file's buffer (the `reload` option); awaiting()
-- waits for the write of a proposal the user accepted, whatever the option.
local util = require("gemini_companion.util")

local M = {}

local api = vim.api
local uv = vim.uv or vim.loop

-- After the last change seen, how long a file must stay as it is before
-- its buffer is reloaded.
local QUIET_MS = 100
-- How long to wait for Gemini CLI to write a proposal the user accepted;
-- and, when what it writes is not the accepted text (the CLI may change
-- line endings), how long the file must stay as it is to be taken as
-- written.
local ACCEPT_WATCH_MS = 30000
local ACCEPT_QUIET_MS = 1000

-- buf -> { handle = fs_event, path = string, warned = stamp }
local watches = {}
-- buf -> uv timer: a reload waiting for its file to be quiet
local pending = {}
-- real path -> timer of awaiting(): the file's buffers wait for that write
local accepting = {}

local function close_timer(timer)
  if timer and not timer:is_closing() then
    timer:stop()
    timer:close()
  end
end

local function unwatch(buf)
  local w = watches[buf]
  if w then
    watches[buf] = nil
    if not w.handle:is_closing() then
      w.handle:stop()
      w.handle:close()
    end
  end
  close_timer(pending[buf])
  pending[buf] = nil
end

-- What a file looks like from outside: size, time and inode ("none"
-- when there is no file).
local function stamp(path)
  local st = uv.fs_stat(path)
  if not st then
    return "none"
  end
  return table.concat({ st.size, st.mtime.sec, st.mtime.nsec or 0, st.ino }, ":")
end

-- Reloads buffer buf from its file when it has no unsaved changes (once:
-- :checktime does nothing when the buffer already has the file's text);
-- else warns with warning(path), once per version of the file.
local function reload(buf, path, warning)
  if not api.nvim_buf_is_valid(buf) or not api.nvim_buf_is_loaded(buf) then
    return
  end
  if api.nvim_buf_get_option(buf, "modified") then
    local w = watches[buf] or {}
    local now = stamp(path)
    if w.warned ~= now then
      w.warned = now
      util.notify(warning(vim.fn.fnamemodify(path, ":~:.")), "warn")
    end
    return
  end
  -- :checktime reloads an unmodified buffer whose file is newer, keeping
  -- the cursor; 'autoread' makes it do so without asking. The message it
  -- gives ("app.py" 3L, 47B) says the buffer was reloaded.
  local old = api.nvim_buf_get_option(buf, "autoread")
  api.nvim_buf_set_option(buf, "autoread", true)
  pcall(vim.cmd, "checktime " .. buf)
  if api.nvim_buf_is_valid(buf) then
    api.nvim_buf_set_option(buf, "autoread", old)
  end
end

local function unsaved_warning(rel)
  return rel .. " changed on disk, but its buffer has unsaved changes: kept them (:e! loads the file, :w overwrites it)"
end

local watch

-- The file of buf has been quiet for QUIET_MS after a change.
local function settled(buf, path)
  pending[buf] = nil
  if not api.nvim_buf_is_valid(buf) or not api.nvim_buf_is_loaded(buf) then
    unwatch(buf)
    return
  end
  -- Writers that replace the file (rename) leave the watch on the old
  -- inode: watch the path afresh.
  watch(buf, path)
  if not util.is_file(path) or accepting[util.realpath(path)] then
    -- Being written with an accepted proposal: awaiting() reloads it.
    return
  end
  reload(buf, path, unsaved_warning)
end

-- Called (scheduled) when the file of buf changed on disk: reloads once
-- the file has been quiet for QUIET_MS.
local function changed(buf, path)
  close_timer(pending[buf])
  local timer = uv.new_timer()
  pending[buf] = timer
  timer:start(
    QUIET_MS,
    0,
    vim.schedule_wrap(function()
      if pending[buf] ~= timer then
        return
      end
      close_timer(timer)
      settled(buf, path)
    end)
  )
end

watch = function(buf, path)
  local w = watches[buf]
  local warned = w and w.warned
  if w then
    watches[buf] = nil
    if not w.handle:is_closing() then
      w.handle:stop()
      w.handle:close()
    end
  end
  local handle = uv.new_fs_event()
  if not handle then
    return
  end
  local ok = handle:start(path, {}, function(err)
    if err then
      return
    end
    vim.schedule(function()
      local cur = watches[buf]
      if cur and cur.handle == handle then
        changed(buf, path)
      end
    end)
  end)
  if not ok then
    handle:close()
    return
  end
  watches[buf] = { handle = handle, path = path, warned = warned }
end

local function consider(buf)
  if not api.nvim_buf_is_valid(buf) or api.nvim_buf_get_option(buf, "buftype") ~= "" then
    return
  end
  local name = api.nvim_buf_get_name(buf)
  if name == "" or util.is_url(name) or not util.is_file(name) then
    unwatch(buf)
    return
  end
  local w = watches[buf]
  if w and w.path == name then
    return
  end
  watch(buf, name)
end

-- The loaded file buffers of real path path.
local function buffers_of(path)
  local out = {}
  for _, buf in ipairs(api.nvim_list_bufs()) do
    local name = api.nvim_buf_get_name(buf)
    if
      api.nvim_buf_is_loaded(buf)
      and api.nvim_buf_get_option(buf, "buftype") == ""
      and name ~= ""
      and not util.is_url(name)
      and util.realpath(name) == path
    then
      table.insert(out, buf)
    end
  end
  return out
end

--- Waits for Gemini CLI to write content (a proposal the user accepted)
--- to path (a real path), then reloads the file's buffers once. The write
--- is over when the file holds content (or content with CRLF line
--- endings); a file that changed to something else is taken as written
--- once it stayed the same for a second. Until then the watches of
--- setup() leave these buffers alone. Gives up after 30 s.
---@param path string
---@param content string
function M.awaiting(path, content)
  close_timer(accepting[path])
  local crlf = content:gsub("\r?\n", "\r\n")
  local initial = stamp(path)
  local last, last_change = initial, uv.now()
  local deadline = uv.now() + ACCEPT_WATCH_MS
  local timer = uv.new_timer()
  accepting[path] = timer
  local function holds_content(size)
    if size ~= #content and size ~= #crlf then
      return false
    end
    local f = io.open(path, "rb")
    if not f then
      return false
    end
    local data = f:read("*a")
    f:close()
    return data == content or data == crlf
  end
  timer:start(
    50,
    50,
    vim.schedule_wrap(function()
      if accepting[path] ~= timer then
        return
      end
      local now = stamp(path)
      if now ~= last then
        last, last_change = now, uv.now()
      end
      local written = false
      if now ~= initial and now ~= "none" then
        local size = tonumber(now:match("^(%d+):"))
        written = holds_content(size) or uv.now() - last_change >= ACCEPT_QUIET_MS
      end
      if not written and uv.now() < deadline then
        return
      end
      accepting[path] = nil
      close_timer(timer)
      if not written then
        return
      end
      for _, buf in ipairs(buffers_of(path)) do
        reload(buf, path, function(rel)
          return rel .. " was changed by Gemini CLI, but has unsaved changes here; :e! loads the new version"
        end)
      end
    end)
  )
end

--- Watches the files of loaded buffers from now on.
function M.setup()
  local group = api.nvim_create_augroup("GeminiCompanionReload", { clear = true })
  api.nvim_create_autocmd({ "BufReadPost", "BufWritePost", "BufFilePost" }, {
    group = group,
    callback = function(a)
      consider(a.buf)
    end,
  })
  api.nvim_create_autocmd({ "BufUnload", "BufWipeout" }, {
    group = group,
    callback = function(a)
      unwatch(a.buf)
    end,
  })
  api.nvim_create_autocmd("VimLeavePre", {
    group = group,
    callback = function()
      for buf in pairs(watches) do
        unwatch(buf)
      end
      for path, timer in pairs(accepting) do
        accepting[path] = nil
        close_timer(timer)
      end
    end,
  })
  for _, buf in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_loaded(buf) then
      consider(buf)
    end
  end
end

return M
