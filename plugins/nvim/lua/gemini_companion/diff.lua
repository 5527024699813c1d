-- Diff views: the CLI's proposed change to a file, shown as a vimdiff in a
-- tab of its own. The original is on the left (read-only), the proposal on
-- the right, editable; `:w` in the proposal accepts it with the user's
-- edits, `:q` (or closing the tab) rejects it.
local config = require("gemini_companion.config")
local layout = require("gemini_companion.layout")
local reload = require("gemini_companion.reload")
local sidecar = require("gemini_companion.sidecar")
local util = require("gemini_companion.util")

local M = {}

local api = vim.api
local uv = vim.uv or vim.loop

local views = {} -- filePath -> view
local order = {} -- views, oldest first
local counter = 0

local function forget(view)
  if views[view.path] == view then
    views[view.path] = nil
  end
  for i, v in ipairs(order) do
    if v == view then
      table.remove(order, i)
      break
    end
  end
  pcall(vim.cmd, "redrawstatus!")
end

--- Paths with an open diff view, oldest first.
function M.paths()
  local out = {}
  for _, v in ipairs(order) do
    table.insert(out, v.path)
  end
  return out
end

--- The view for buf (either side), or nil.
function M.view_of(buf)
  for _, v in ipairs(order) do
    if v.prop_buf == buf or v.orig_buf == buf then
      return v
    end
  end
  return nil
end

local function wipe_named(name)
  for _, b in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_get_name(b) == name then
      pcall(api.nvim_buf_delete, b, { force = true })
    end
  end
end

local function detect_filetype(path, buf)
  if vim.fn.has("nvim-0.8") == 1 then
    local ok, ft = pcall(vim.filetype.match, { filename = path, buf = buf })
    return ok and ft or nil
  end
  local ft
  api.nvim_buf_call(buf, function()
    pcall(vim.cmd, "silent doautocmd filetypedetect BufRead " .. vim.fn.fnameescape(path))
    ft = api.nvim_buf_get_option(buf, "filetype")
  end)
  return ft ~= "" and ft or nil
end

-- Closes the view's tab and buffers; no notification to the sidecar.
local function teardown(view)
  view.done = true
  forget(view)
  pcall(api.nvim_del_augroup_by_id, view.group)
  local was_here = api.nvim_get_current_tabpage() == view.tab
  if view.split then
    -- The diff shares the user's tab: close its two windows only.
    for _, w in ipairs({ view.prop_win, view.orig_win }) do
      if api.nvim_win_is_valid(w) and #api.nvim_tabpage_list_wins(api.nvim_win_get_tabpage(w)) > 1 then
        pcall(api.nvim_win_close, w, true)
      end
    end
  elseif api.nvim_tabpage_is_valid(view.tab) then
    if #api.nvim_list_tabpages() > 1 then
      pcall(vim.cmd, "tabclose! " .. api.nvim_tabpage_get_number(view.tab))
    else
      -- The diff is the only tab left: keep one window, showing something else.
      local wins = api.nvim_tabpage_list_wins(view.tab)
      for i = 2, #wins do
        pcall(api.nvim_win_close, wins[i], true)
      end
      local keep = wins[1]
      if api.nvim_win_is_valid(keep) then
        api.nvim_win_call(keep, function()
          pcall(vim.cmd, "diffoff")
        end)
        pcall(api.nvim_win_set_buf, keep, api.nvim_create_buf(true, false))
      end
    end
  end
  for _, buf in ipairs({ view.prop_buf, view.orig_buf }) do
    if api.nvim_buf_is_valid(buf) then
      pcall(api.nvim_buf_delete, buf, { force = true })
    end
  end
  if was_here and api.nvim_tabpage_is_valid(view.origin_tab) then
    api.nvim_set_current_tabpage(view.origin_tab)
    -- Back to the window the user came from; into the Gemini CLI terminal
    -- ready to type if that is where they were.
    if api.nvim_win_is_valid(view.origin_win) and api.nvim_win_get_tabpage(view.origin_win) == view.origin_tab then
      api.nvim_set_current_win(view.origin_win)
      if view.origin_mode == "t" and api.nvim_buf_get_option(api.nvim_win_get_buf(view.origin_win), "buftype") == "terminal" then
        vim.cmd("startinsert")
      end
    end
  end
end

-- Accepts that were sent, by path, until the sidecar has taken them: one
-- refused because the file changed on disk is shown again from here.
local sent = {}

-- Records the user's decision, tells the sidecar, and closes the view.
local function decide(view, accepted)
  if view.done then
    return
  end
  if accepted and view.disk and view.disk ~= "unchangedOnDisk" and not view.confirmed then
    -- The file changed (or went) on disk: accepting would overwrite that,
    -- so it takes a second, explicit accept.
    view.confirmed = true
    pcall(api.nvim_buf_set_option, view.prop_buf, "modified", true)
    util.notify(
      string.format(
        "%s %s on disk since Gemini proposed this change; accept again (:w) to overwrite it with the proposal, or :q to reject",
        vim.fn.fnamemodify(view.path, ":~:."),
        view.disk == "deletedOnDisk" and "was deleted" or "changed"
      ),
      "warn"
    )
    return
  end
  view.done = true
  forget(view)
  if accepted then
    local content = util.buf_text(view.prop_buf)
    pcall(api.nvim_buf_set_option, view.prop_buf, "modified", false)
    -- The CLI writes the file itself: its buffers are reloaded once.
    reload.awaiting(view.path, content)
    sent[view.path] = { content = content, diff_id = view.diff_id, time = uv.now() }
    sidecar.notify("diff/accepted", {
      filePath = view.path,
      content = content,
      diffId = view.diff_id,
      overDiskChange = view.confirmed or nil,
    })
  else
    sidecar.notify("diff/rejected", { filePath = view.path, diffId = view.diff_id })
  end
  -- Later: this may run inside an autocommand (BufWriteCmd, WinClosed) in
  -- which windows cannot be closed.
  vim.schedule(function()
    teardown(view)
  end)
end

-- Rejects the view once its proposal is no longer shown in any window.
local function check_gone(view)
  if view.done then
    return
  end
  if api.nvim_buf_is_valid(view.prop_buf) and #vim.fn.win_findbuf(view.prop_buf) > 0 then
    return
  end
  decide(view, false)
end

-- What the view's status lines say about its state (owner, notes, disk,
-- queue), for the user, and b:gemini_diff for scripts and tests.
local function label(view)
  local parts = {}
  if view.outside then
    table.insert(parts, "outside the workspace")
  end
  if view.orphaned then
    table.insert(parts, "ORPHANED: its Gemini CLI is gone, accepting writes nothing")
  end
  if view.disk == "changedOnDisk" then
    table.insert(parts, "CHANGED ON DISK")
  elseif view.disk == "deletedOnDisk" then
    table.insert(parts, "DELETED ON DISK")
  end
  if (view.queued or 0) > 0 then
    table.insert(parts, string.format("%d more proposal%s queued", view.queued, view.queued == 1 and "" or "s"))
  end
  local rel = vim.fn.fnamemodify(view.path, ":~:.")
  local note = #parts > 0 and (" [" .. table.concat(parts, "] [") .. "]") or ""
  local who = view.owner and view.owner ~= "" and ("  (CLI " .. view.owner .. ")") or ""
  local on_disk = view.disk and view.disk ~= "unchangedOnDisk"
  if api.nvim_win_is_valid(view.prop_win) then
    -- The keys first, then any warning: a narrow window (the CLI shares
    -- the tab) cuts the end.
    layout.set_statusline(view.prop_win, { ":w accepts  :q rejects ", { note, warn = true }, " " .. rel .. " (proposed by Gemini)" .. who })
  end
  if api.nvim_win_is_valid(view.orig_win) then
    layout.set_statusline(view.orig_win, { on_disk and ("On disk now: " .. rel .. " (read-only)") or (rel .. " (now, read-only)") })
  end
  if api.nvim_buf_is_valid(view.prop_buf) then
    pcall(api.nvim_buf_set_var, view.prop_buf, "gemini_diff", {
      diff_id = view.diff_id or 0,
      owner = view.owner or "",
      outside_workspace = view.outside or false,
      orphaned = view.orphaned or false,
      disk = view.disk or "unchangedOnDisk",
      queued = view.queued or 0,
      label = "Gemini proposal" .. who .. note,
    })
  end
end

-- The two buffers of a view: the original (read-only scratch) and the
-- proposal (written with :w, which accepts it).
local function make_buffers(path, new_content, original)
  local orig_name = "gemini://original/" .. path
  local prop_name = "gemini://proposal/" .. path
  wipe_named(orig_name)
  wipe_named(prop_name)

  local orig = api.nvim_create_buf(false, true)
  util.set_buf_text(orig, original or "")
  api.nvim_buf_set_name(orig, orig_name)
  api.nvim_buf_set_option(orig, "modifiable", false)
  api.nvim_buf_set_option(orig, "readonly", true)

  local prop = api.nvim_create_buf(false, false)
  api.nvim_buf_set_option(prop, "buftype", "acwrite")
  api.nvim_buf_set_option(prop, "bufhidden", "hide")
  api.nvim_buf_set_option(prop, "swapfile", false)
  util.set_buf_text(prop, new_content)
  api.nvim_buf_set_name(prop, prop_name)
  api.nvim_buf_set_option(prop, "modified", false)

  local ft = detect_filetype(path, prop)
  if ft then
    api.nvim_buf_set_option(orig, "filetype", ft)
    api.nvim_buf_set_option(prop, "filetype", ft)
  end
  return orig, prop
end

-- Shows orig and prop side by side in diff mode, in a new tab or a split
-- (diff.layout), and returns the tab, the two windows and whether it split.
local function show_windows(path, orig, prop, origin_tab)
  util.leave_visual()
  local split = config.options.diff.layout == "vsplit"
  if split then
    layout.open_split(orig)
  else
    vim.cmd("tab sbuffer " .. orig)
  end
  local tab = api.nvim_get_current_tabpage()
  local orig_win = api.nvim_get_current_win()
  vim.cmd("vertical rightbelow sbuffer " .. prop)
  local prop_win = api.nvim_get_current_win()
  for _, win in ipairs({ orig_win, prop_win }) do
    api.nvim_win_call(win, function()
      vim.cmd("diffthis")
    end)
  end
  layout.label(split and nil or tab, path)
  if not split then
    layout.keep_terminal_size(origin_tab, prop_win)
  end
  return tab, orig_win, prop_win, split
end

-- Takes the user's decision on view: :w accepts, leaving the view rejects,
-- and the accept and reject keymaps.
local function listen(view)
  local prop = view.prop_buf
  view.group = api.nvim_create_augroup("GeminiCompanionDiff" .. view.id, { clear = true })
  api.nvim_create_autocmd("BufWriteCmd", {
    group = view.group,
    buffer = prop,
    callback = function()
      decide(view, true)
    end,
  })
  api.nvim_create_autocmd({ "BufWinLeave", "BufHidden", "BufDelete", "BufWipeout" }, {
    group = view.group,
    buffer = prop,
    callback = function()
      vim.schedule(function()
        check_gone(view)
      end)
    end,
  })
  api.nvim_create_autocmd({ "WinClosed", "TabClosed" }, {
    group = view.group,
    callback = function()
      vim.schedule(function()
        check_gone(view)
      end)
    end,
  })

  local keys = config.options.diff.keymaps
  if keys.accept then
    vim.keymap.set("n", keys.accept, function()
      decide(view, true)
    end, { buffer = prop, desc = "Accept Gemini's proposed change" })
  end
  if keys.reject then
    vim.keymap.set("n", keys.reject, function()
      decide(view, false)
    end, { buffer = prop, desc = "Reject Gemini's proposed change" })
  end
end

-- Puts the user in the proposal (diff.focus), or back where they were, and
-- says how to answer.
local function present(view, req)
  local rel = vim.fn.fnamemodify(view.path, ":~:.")
  if type(req.notice) == "string" and req.notice ~= "" then
    util.notify(req.notice, "warn")
  end
  local origin_mode = view.origin_mode
  local keep_terminal = config.options.diff.keep_terminal_focus and origin_mode == "t"
  if config.options.diff.focus and not keep_terminal then
    local m = origin_mode:sub(1, 1)
    if m == "i" or m == "t" or m == "R" then
      vim.cmd("stopinsert")
    end
    api.nvim_set_current_win(view.prop_win)
    util.notify(string.format("Gemini proposes a change to %s: :w accepts (with your edits), :q rejects", rel))
  else
    api.nvim_set_current_tabpage(view.origin_tab)
    if api.nvim_win_is_valid(view.origin_win) then
      api.nvim_set_current_win(view.origin_win)
    end
    if origin_mode == "t" then
      vim.cmd("startinsert")
    end
    util.notify(
      string.format("Gemini proposes a change to %s (tab %d): :GeminiAccept or :GeminiReject", rel, api.nvim_tabpage_get_number(view.tab))
    )
  end
end

local function open_view(path, new_content, original, req)
  req = req or {}
  local origin_tab = api.nvim_get_current_tabpage()
  local origin_win = api.nvim_get_current_win()
  local origin_mode = api.nvim_get_mode().mode
  counter = counter + 1

  local orig, prop = make_buffers(path, new_content, original)
  local tab, orig_win, prop_win, split = show_windows(path, orig, prop, origin_tab)
  local view = {
    id = counter,
    path = path,
    tab = tab,
    orig_buf = orig,
    prop_buf = prop,
    orig_win = orig_win,
    prop_win = prop_win,
    origin_tab = origin_tab,
    origin_win = origin_win,
    origin_mode = origin_mode,
    split = split,
    done = false,
    diff_id = type(req.diffId) == "number" and req.diffId or nil,
    owner = type(req.owner) == "string" and req.owner or nil,
    outside = req.outsideWorkspace == true,
    queued = type(req.queued) == "number" and req.queued or 0,
  }
  listen(view)

  local old = views[path]
  views[path] = view
  table.insert(order, view)
  if old then
    old.done = true
    teardown(old)
  end

  label(view)
  present(view, req)
  pcall(vim.cmd, "redrawstatus!")
  return view
end

--- Accepts a diff: the one shown in the current buffer, else the one for
--- path, else the most recent one.
function M.accept(path)
  local view = M.target(path)
  if view then
    decide(view, true)
  end
end

--- Rejects a diff (same choice of view as accept).
function M.reject(path)
  local view = M.target(path)
  if view then
    decide(view, false)
  end
end

function M.target(path)
  if path and path ~= "" then
    local full = util.realpath(path)
    local view = views[full] or views[path]
    if not view then
      util.notify("no Gemini diff is open for " .. path, "warn")
    end
    return view
  end
  local view = M.view_of(api.nvim_get_current_buf()) or order[#order]
  if not view then
    util.notify("no Gemini diff is open", "warn")
  end
  return view
end

--- Closes every view without telling the sidecar (it is gone).
function M.close_all()
  for _, view in ipairs(vim.list_slice(order)) do
    teardown(view)
  end
end

-- Shows text the user accepted but that was not written (its CLI is gone,
-- or the proposal expired) in a new buffer, so it can be saved by hand.
local function keep_text(path, content)
  local buf = api.nvim_create_buf(true, false)
  util.set_buf_text(buf, content)
  api.nvim_buf_set_option(buf, "modified", true)
  local ft = detect_filetype(path, buf)
  if ft then
    api.nvim_buf_set_option(buf, "filetype", ft)
  end
  pcall(api.nvim_buf_set_var, buf, "gemini_unwritten", path)
  vim.cmd("tab sbuffer " .. buf)
  pcall(
    api.nvim_win_set_option,
    0,
    "statusline",
    "%#WarningMsg#Not written by Gemini CLI: " .. vim.fn.fnamemodify(path, ":~:."):gsub("%%", "%%%%") .. "%* (:w {file} saves it)"
  )
  return buf
end

--- Takes a diff/state notification: something happened to a proposal.
function M.on_state(p)
  local view = views[p.filePath]
  if view and p.diffId and view.diff_id and p.diffId ~= view.diff_id and p.state ~= "queued" then
    view = nil -- about another proposal for the same file
  end
  local level = "warn"
  local content = type(p.content) == "string" and p.content or nil
  if p.state == "queued" then
    level = "info"
    if view then
      view.queued = type(p.queued) == "number" and p.queued or (view.queued or 0) + 1
    end
  elseif p.state == "orphaned" then
    if view then
      view.orphaned = true
    end
  elseif p.state == "changedOnDisk" or p.state == "deletedOnDisk" or p.state == "unchangedOnDisk" then
    if view then
      view.disk = p.state
      view.confirmed = false
      local disk = type(p.diskContent) == "string" and p.diskContent or ""
      if api.nvim_buf_is_valid(view.orig_buf) then
        api.nvim_buf_set_option(view.orig_buf, "modifiable", true)
        util.set_buf_text(view.orig_buf, disk)
        api.nvim_buf_set_option(view.orig_buf, "modifiable", false)
        api.nvim_buf_set_option(view.orig_buf, "modified", false)
        if api.nvim_win_is_valid(view.orig_win) then
          api.nvim_win_call(view.orig_win, function()
            pcall(vim.cmd, "diffupdate")
          end)
        end
      end
    end
    if p.state == "unchangedOnDisk" then
      level = "info"
    end
  elseif p.state == "needsConfirmation" then
    -- The accept raced a change on disk: show the proposal again, as the
    -- user left it, against the file as it is now.
    local last = sent[p.filePath]
    if not view and last and (last.diff_id == nil or last.diff_id == p.diffId) then
      local f = io.open(p.filePath, "rb")
      local disk = f and f:read("*a") or nil
      if f then
        f:close()
      end
      sent[p.filePath] = nil
      view = open_view(p.filePath, last.content, disk, { diffId = p.diffId })
      view.disk = disk and "changedOnDisk" or "deletedOnDisk"
    end
    if view then
      view.disk = view.disk or "changedOnDisk"
      view.confirmed = true
    end
  elseif p.state == "undelivered" or p.state == "expired" then
    sent[p.filePath] = nil
    if content then
      keep_text(p.filePath, content)
    end
  end
  if view then
    label(view)
  end
  if type(p.message) == "string" and p.message ~= "" then
    util.notify(p.message, level)
  end
  pcall(vim.cmd, "redrawstatus")
end

local function check_path(params)
  if type(params.filePath) ~= "string" or params.filePath == "" or params.filePath:sub(1, 1) ~= "/" then
    return "filePath must be an absolute path"
  end
  return nil
end

function M.setup()
  sidecar.on_request("diff/open", function(params, respond)
    local bad = check_path(params)
    if not bad and type(params.newContent) ~= "string" then
      bad = "newContent must be a string"
    end
    local original = params.originalContent
    if original == vim.NIL then
      original = nil
    end
    if not bad and original ~= nil and type(original) ~= "string" then
      bad = "originalContent must be a string or null"
    end
    if bad then
      respond({ code = -32602, message = bad })
      return
    end
    local ok, err = pcall(open_view, params.filePath, params.newContent, original, params)
    if not ok then
      respond({ code = -32603, message = "cannot open the diff view: " .. tostring(err) })
      return
    end
    respond(nil, vim.empty_dict())
  end)

  sidecar.on_request("diff/close", function(params, respond)
    local bad = check_path(params)
    if bad then
      respond({ code = -32602, message = bad })
      return
    end
    local view = views[params.filePath]
    if not view then
      respond(nil, { content = vim.NIL })
      return
    end
    local content = util.buf_text(view.prop_buf)
    teardown(view)
    respond(nil, { content = content })
  end)

  sidecar.on_notification("diff/state", function(params)
    if type(params) ~= "table" or check_path(params) then
      return
    end
    M.on_state(params)
  end)

  sidecar.on_ready(function(up)
    if not up and #order > 0 then
      M.close_all()
      util.notify("the open Gemini diffs were closed: the sidecar stopped", "warn")
    end
  end)
end

return M
