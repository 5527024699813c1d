-- What the user is looking at: focused file, cursor, selection, closed and
-- renamed files, the working directory. Reported to the sidecar, which
-- keeps the list, the timestamps and the limits.
local config = require("gemini_companion.config")
local sidecar = require("gemini_companion.sidecar")
local util = require("gemini_companion.util")

local M = {}

local api = vim.api
local uv = vim.uv or vim.loop

-- More selected text than the sidecar's policy.limits.maxSelectionBytes is
-- cut before sending (the sidecar makes the exact cut and marks it).
local function max_bytes()
  return sidecar.limit("maxSelectionBytes")
end
local MAXCOL = 2147483647

local reported = {} -- bufnr -> path the sidecar knows this buffer by
local renaming = {} -- bufnr -> path before a BufFilePre/BufFilePost pair
local entered = {} -- buffers entered since the last flush, oldest first
local last = {} -- what was last sent about the active file
local sent_at = nil -- uv.now() of the last report about the cursor
local moved_at = nil -- uv.now() of the last move
local pending_at = nil -- uv.now() of the first move not reported yet
local timer = nil
local group = nil

--- The file a buffer stands for, or nil when it is not a file on disk
--- (terminals, help, quickfix, scratch and plugin buffers, diff views).
---@return string|nil
function M.file_of(buf)
  if not api.nvim_buf_is_valid(buf) or api.nvim_buf_get_option(buf, "buftype") ~= "" then
    return nil
  end
  local name = api.nvim_buf_get_name(buf)
  if name == "" or util.is_url(name) or not util.is_file(name) then
    return nil
  end
  return util.realpath(name)
end

local function lines(buf, first, last_line)
  return api.nvim_buf_get_lines(buf, first - 1, last_line, false)
end

-- Start and end display column of the character at byte col (1-based) of line.
local function display_span(line, col)
  local prefix = vim.fn.strdisplaywidth(line:sub(1, col - 1))
  if col > #line then
    return prefix + 1, prefix + 1
  end
  local ch = line:sub(col, col + util.char_len(line, col) - 1)
  local w = vim.fn.strdisplaywidth(ch, prefix)
  return prefix + 1, prefix + math.max(w, 1)
end

-- The characters of line that overlap display columns left..right.
local function block_part(line, left, right)
  local out, width, i = {}, 0, 1
  while i <= #line do
    local n = util.char_len(line, i)
    local ch = line:sub(i, i + n - 1)
    local w = vim.fn.strdisplaywidth(ch, width)
    local s, e = width + 1, width + math.max(w, 1)
    if s > right then
      break
    end
    if e >= left then
      table.insert(out, ch)
    end
    width = width + w
    i = i + n
  end
  return table.concat(out)
end

-- Joins lines with "\n", stopping once the text is long enough.
local function join_capped(parts)
  local size, out = 0, {}
  for i, l in ipairs(parts) do
    table.insert(out, l)
    size = size + #l + 1
    if size > max_bytes() then
      out = { util.truncate(table.concat(out, "\n"), max_bytes()) }
      break
    end
    if i == #parts then
      break
    end
  end
  return table.concat(out, "\n")
end

-- Lines first..last of buf, read in batches until the cap is reached.
local function capped_lines(buf, first, last_line)
  local out, size = {}, 0
  local l = first
  while l <= last_line and size <= max_bytes() do
    local batch = lines(buf, l, math.min(last_line, l + 255))
    for _, s in ipairs(batch) do
      table.insert(out, s)
      size = size + #s + 1
    end
    l = l + 256
  end
  return out
end

--- The selected text in the current window for visual/select mode `mode`.
local function selection(buf, mode)
  local kind = mode:sub(1, 1)
  kind = ({ s = "v", S = "V", ["\19"] = "\22" })[kind] or kind
  local p, q = vim.fn.getpos("v"), vim.fn.getpos(".")
  local l1, c1, l2, c2 = p[2], p[3], q[2], q[3]
  if l1 > l2 or (l1 == l2 and c1 > c2) then
    l1, c1, l2, c2 = l2, c2, l1, c1
  end
  if kind == "V" then
    return join_capped(capped_lines(buf, l1, l2))
  elseif kind == "v" then
    local ls = capped_lines(buf, l1, l2)
    local eol = false
    if #ls == l2 - l1 + 1 then
      local tail = ls[#ls]
      eol = c2 > #tail
      ls[#ls] = eol and tail or tail:sub(1, c2 - 1 + util.char_len(tail, c2))
    end
    ls[1] = ls[1]:sub(c1)
    local text = join_capped(ls)
    if eol and l2 < api.nvim_buf_line_count(buf) then
      text = text .. "\n"
    end
    return util.truncate(text, max_bytes())
  elseif kind == "\22" then
    local lp = lines(buf, p[2], p[2])[1] or ""
    local lq = lines(buf, q[2], q[2])[1] or ""
    local ps, pe = display_span(lp, p[3])
    local qs, qe = display_span(lq, q[3])
    local left, right = math.min(ps, qs), math.max(pe, qe)
    if vim.fn.winsaveview().curswant >= MAXCOL then
      right = math.huge
    end
    local parts = {}
    for _, l in ipairs(capped_lines(buf, l1, l2)) do
      table.insert(parts, block_part(l, left, right))
    end
    return join_capped(parts)
  end
  return nil
end

-- Cursor ({line, character}, UTF-16 + 1) and selection of the current window.
local function position(buf, mode)
  local cur = api.nvim_win_get_cursor(0)
  local character = 1
  if cur[2] > 0 then
    character = util.utf16_col(lines(buf, cur[1], cur[1])[1] or "", cur[2]) + 1
  end
  local cursor = { line = cur[1], character = character }
  local sel = nil
  if util.is_visual(mode) then
    sel = selection(buf, mode)
  end
  return cursor, sel
end

--- The selected text in the current window in visual/select mode `mode`
--- (for the editor tools' getOpenEditors).
function M.selected_text(buf, mode)
  return selection(buf, mode)
end

--- The buffer of the file last reported as active (the focus may be in a
--- terminal since), or nil.
function M.active_buffer()
  for b, p in pairs(reported) do
    if p == last.path and api.nvim_buf_is_valid(b) then
      return b
    end
  end
  return nil
end

--- The selected text last reported for buf while it was active, or nil.
function M.last_selection(buf)
  if last.path ~= nil and reported[buf] == last.path then
    return last.sel
  end
  return nil
end

--- Sends what changed since the last report about the current window.
function M.flush()
  pending_at = nil
  if not sidecar.running() then
    return
  end
  local mode = api.nvim_get_mode().mode
  local m = mode:sub(1, 1)
  if m == "c" or m == "r" or mode:sub(1, 2) == "no" then
    -- In the command line (or a prompt) the window has not settled yet:
    -- leaving that mode reports again.
    return
  end
  local buf = api.nvim_get_current_buf()
  -- Files passed through on the way (":edit a | edit b", scripts) are open
  -- too: report them before the current one.
  local passed = entered
  entered = {}
  for _, b in ipairs(passed) do
    if b ~= buf and not reported[b] then
      local p = M.file_of(b)
      if p then
        reported[b] = p
        sidecar.notify("context/fileFocused", { path = p })
        last = { path = p }
      end
    end
  end
  local path = reported[buf]
  if not path then
    path = M.file_of(buf)
    if not path then
      -- Not a file (e.g. the Gemini terminal): keep the last file, cursor
      -- and selection, as an editor does when focus moves to its terminal.
      return
    end
    reported[buf] = path
  end
  local cursor, sel = position(buf, mode)
  local params = { path = path, cursor = cursor, selectedText = sel }
  if last.path ~= path then
    sidecar.notify("context/fileFocused", params)
  elseif last.line ~= cursor.line or last.character ~= cursor.character or last.sel ~= sel then
    sidecar.notify("context/selectionChanged", params)
  else
    return
  end
  sent_at = uv.now()
  last = { path = path, line = cursor.line, character = cursor.character, sel = sel }
end

local armed = false -- timer is running
local moving = false -- move_timer (below) is running: a report follows the last move

-- The report timer fired.
local function fire()
  armed = false
  vim.schedule(M.flush)
end

-- Reports after ms (0: at once, on the main loop), unless a report is
-- already on its way.
local function arm(ms)
  if armed or moving then
    return
  end
  timer = timer or uv.new_timer()
  armed = true
  timer:start(ms, 0, fire)
end

-- Milliseconds since the last report (a large number before the first).
local function since_sent(now)
  return sent_at and now - sent_at or math.huge
end

--- Reports soon: at once (on the main loop) when nothing was reported for
--- coalesce_ms, else when coalesce_ms have passed since the last report.
function M.schedule()
  local ms = config.options.context.coalesce_ms
  if ms <= 0 then
    vim.schedule(M.flush)
    return
  end
  arm(math.max(0, math.floor(ms - since_sent(uv.now()))))
end

local move_timer = nil -- reports coalesce_ms after the last move (restarted by timer:again())
local move_ms = nil -- the timeout move_timer was started with

-- The move timer fired: the cursor stopped coalesce_ms ago.
local function stopped()
  moving = false
  move_timer:stop()
  vim.schedule(M.flush)
end

--- The cursor moved or the mode changed. This runs on every keystroke, so
--- it reads the event loop's clock (no system call) and, unless a report
--- is due, only restarts a timer:
--- - the first move after a pause (none for coalesce_ms) is reported at
---   once (once the keys are handled), if nothing was reported in the last
---   coalesce_ms;
--- - while the cursor keeps moving, a move reports when the first move
---   not reported is 4 × coalesce_ms old (the sidecar's own longest wait);
--- - otherwise the timer reports coalesce_ms after the last move, that
---   is, once the cursor stopped: Neovim is not woken up while it moves.
--- So at most one report per coalesce_ms reaches the sidecar, and the last
--- position at most coalesce_ms after the last move. A change of mode
--- waits for the timer: leaving the command line for a command that opens
--- the CLI's terminal (:'<,'>GeminiCli) must not report the selection gone
--- on the way there.
function M.moved(mode_changed)
  local ms = config.options.context.coalesce_ms
  if ms <= 0 then
    vim.schedule(M.flush)
    return
  end
  -- The loop's time: when Neovim last woke up, that is, when the key came.
  local now = uv.now()
  local paused = not moved_at or now - moved_at >= ms
  moved_at = now
  if
    not mode_changed
    and ((paused and since_sent(now) >= ms) or (pending_at and now - pending_at >= 4 * ms))
  then
    if moving then
      moving = false
      move_timer:stop()
    end
    if armed then
      armed = false
      timer:stop()
    end
    pending_at = nil
    -- Once the keys that moved it are handled: ending Visual mode to go
    -- to another window (the CLI's terminal) must not report on the way.
    vim.schedule(M.flush)
    return
  end
  pending_at = pending_at or now
  if armed then
    -- The report after the last move carries what the timer would have.
    armed = false
    timer:stop()
  end
  moving = true
  if move_ms ~= ms then
    move_timer = move_timer or uv.new_timer()
    move_timer:start(ms, ms, stopped)
    move_ms = ms
  else
    -- Restarts it with its repeat as the timeout, without replacing the
    -- callback's reference as start() does.
    move_timer:again()
  end
end

local function on_moved()
  M.moved(false)
end

local function on_mode_changed()
  M.moved(true)
end

local function closed(buf)
  local path = reported[buf]
  if not path then
    return
  end
  reported[buf] = nil
  sidecar.notify("context/fileClosed", { path = path })
  if last.path == path then
    last = {}
  end
end

local function renamed(buf)
  local old = renaming[buf]
  renaming[buf] = nil
  local new = M.file_of(buf)
  if old and new and old ~= new then
    reported[buf] = new
    sidecar.notify("context/fileRenamed", { oldPath = old, newPath = new })
    if last.path == old then
      last.path = new
    end
  elseif old and not new then
    -- Renamed to a name with no file yet (:saveas, :file): it is reported
    -- again once written.
    reported[buf] = old
    closed(buf)
  end
  M.schedule()
end

--- Everything the sidecar should know after it (re)started: the open files,
--- least recently used first, then the current one with its cursor.
function M.resync()
  reported, last, entered = {}, {}, {}
  local infos = vim.fn.getbufinfo({ buflisted = 1, bufloaded = 1 })
  table.sort(infos, function(a, b)
    return (a.lastused or 0) < (b.lastused or 0)
  end)
  local current = api.nvim_get_current_buf()
  for _, info in ipairs(infos) do
    if info.bufnr ~= current then
      local path = M.file_of(info.bufnr)
      if path then
        reported[info.bufnr] = path
        sidecar.notify("context/fileFocused", { path = path })
      end
    end
  end
  M.flush()
end

function M.setup()
  group = api.nvim_create_augroup("GeminiCompanionContext", { clear = true })
  local function au(events, fn)
    api.nvim_create_autocmd(events, { group = group, callback = fn })
  end
  au("BufEnter", function(args)
    if not reported[args.buf] then
      table.insert(entered, args.buf)
    end
    M.schedule()
  end)
  au({ "CursorMoved", "CursorMovedI" }, on_moved)
  au("ModeChanged", on_mode_changed)
  au({ "WinEnter", "BufWritePost", "FocusGained" }, function()
    M.schedule()
  end)
  au({ "BufDelete", "BufWipeout" }, function(args)
    closed(args.buf)
  end)
  au("BufFilePre", function(args)
    renaming[args.buf] = reported[args.buf]
  end)
  au("BufFilePost", function(args)
    renamed(args.buf)
  end)
  api.nvim_create_autocmd("DirChanged", {
    group = group,
    pattern = "global",
    callback = function()
      sidecar.set_folders({ util.cwd() })
    end,
  })
  sidecar.on_ready(function(up)
    if up then
      M.resync()
    else
      reported, last = {}, {}
    end
  end)
end

return M
