-- Keeps buffers in step with their files on disk. When Gemini CLI writes
-- an accepted edit itself (the user answered in the CLI), the file's
-- buffer is reloaded at once if it has no unsaved changes; a buffer with
-- unsaved changes keeps them and the user is warned.
local util = require("gemini_companion.util")

local M = {}

local api = vim.api
local uv = vim.uv or vim.loop

-- buf -> { handle = fs_event, path = string }
local watches = {}

local function unwatch(buf)
  local w = watches[buf]
  if w then
    watches[buf] = nil
    if not w.handle:is_closing() then
      w.handle:stop()
      w.handle:close()
    end
  end
end

local watch

-- Called (scheduled) after the file of buf changed on disk.
local function changed(buf, path)
  if not api.nvim_buf_is_valid(buf) or not api.nvim_buf_is_loaded(buf) then
    unwatch(buf)
    return
  end
  -- Writers that replace the file (rename) leave the watch on the old
  -- inode: watch the path afresh.
  watch(buf, path)
  if not util.is_file(path) then
    return
  end
  if api.nvim_buf_get_option(buf, "modified") then
    local w = watches[buf]
    local st = uv.fs_stat(path)
    local stamp = st and (st.mtime.sec .. "." .. st.mtime.nsec .. ":" .. st.size) or ""
    if w and w.warned ~= stamp then
      w.warned = stamp
      util.notify(
        string.format("%s changed on disk, but its buffer has unsaved changes: kept them (:e! loads the file, :w overwrites it)", vim.fn.fnamemodify(path, ":~:.")),
        "warn"
      )
    end
    return
  end
  -- :checktime reloads an unmodified buffer whose file is newer, keeping
  -- the cursor; 'autoread' makes it do so without asking.
  local old = api.nvim_buf_get_option(buf, "autoread")
  api.nvim_buf_set_option(buf, "autoread", true)
  pcall(vim.cmd, "checktime " .. buf)
  if api.nvim_buf_is_valid(buf) then
    api.nvim_buf_set_option(buf, "autoread", old)
  end
end

watch = function(buf, path)
  unwatch(buf)
  local handle = uv.new_fs_event()
  if not handle then
    return
  end
  local ok = handle:start(path, {}, function(err)
    if err then
      return
    end
    vim.schedule(function()
      local w = watches[buf]
      if w and w.handle == handle then
        changed(buf, path)
      end
    end)
  end)
  if not ok then
    handle:close()
    return
  end
  watches[buf] = { handle = handle, path = path }
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
    end,
  })
  for _, buf in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_loaded(buf) then
      consider(buf)
    end
  end
end

return M
