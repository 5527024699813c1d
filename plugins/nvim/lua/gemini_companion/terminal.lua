-- The Gemini CLI in a terminal window, started with the sidecar's
-- environment so that its /ide connects to this Neovim.
local config = require("gemini_companion.config")
local sidecar = require("gemini_companion.sidecar")
local util = require("gemini_companion.util")

local M = {}

local api = vim.api
local uv = vim.uv or vim.loop

-- The one CLI terminal: its buffer, job and working directory.
local term = { buf = nil, job = nil, cwd = nil }
M.term = term

function M.running()
  return term.job ~= nil and term.buf ~= nil and api.nvim_buf_is_valid(term.buf)
end

-- A window of the terminal in the current tab, or nil.
local function term_window()
  if not M.running() then
    return nil
  end
  local tab = api.nvim_get_current_tabpage()
  for _, w in ipairs(vim.fn.win_findbuf(term.buf)) do
    if api.nvim_win_get_tabpage(w) == tab then
      return w
    end
  end
  return nil
end

local function size(fraction, total)
  if fraction < 1 then
    return math.max(1, math.floor(total * fraction))
  end
  return math.floor(fraction)
end

-- Opens a window for buf where the options say and makes it current.
local function open_window(buf)
  local t = config.options.terminal
  if t.position == "float" then
    local width = size(t.float.width, vim.o.columns)
    local height = size(t.float.height, vim.o.lines - vim.o.cmdheight - 1)
    return api.nvim_open_win(buf, true, {
      relative = "editor",
      width = width,
      height = height,
      row = math.floor((vim.o.lines - height) / 2) - 1,
      col = math.floor((vim.o.columns - width) / 2),
      style = "minimal",
      border = t.float.border,
    })
  end
  local cmds = {
    right = "botright vsplit",
    left = "topleft vsplit",
    bottom = "botright split",
    top = "topleft split",
    tab = "tabnew",
  }
  vim.cmd(cmds[t.position])
  local win = api.nvim_get_current_win()
  local scratch = api.nvim_win_get_buf(win)
  api.nvim_win_set_buf(win, buf)
  if t.position == "tab" and scratch ~= buf and api.nvim_buf_get_name(scratch) == "" then
    pcall(api.nvim_buf_delete, scratch, { force = true })
  end
  if t.position == "right" or t.position == "left" then
    api.nvim_win_set_width(win, size(t.size, vim.o.columns))
  elseif t.position == "bottom" or t.position == "top" then
    api.nvim_win_set_height(win, size(t.size, vim.o.lines))
  end
  return win
end

local function focus(win)
  -- Leave visual mode before leaving the window (a <Cmd> mapping keeps
  -- it). The selection stays with the CLI: the context module does not
  -- clear it once the focus is in the terminal.
  util.leave_visual()
  api.nvim_set_current_win(win)
  if config.options.terminal.start_insert then
    vim.cmd("startinsert")
  end
end

local function command(args)
  local cmd = config.options.terminal.cmd
  if type(cmd) == "string" then
    local parts = { cmd }
    for _, a in ipairs(args) do
      table.insert(parts, vim.fn.shellescape(a))
    end
    return table.concat(parts, " ")
  end
  local list = vim.deepcopy(cmd)
  vim.list_extend(list, args)
  return list
end

-- Runs cmd in a terminal in the current buffer (termopen() before 0.11,
-- jobstart({term = true}) since).
local function start_terminal(cmd, opts)
  if vim.fn.has("nvim-0.11") == 1 then
    opts.term = true
    return vim.fn.jobstart(cmd, opts)
  end
  return vim.fn.termopen(cmd, opts)
end

local function launch(args, env)
  local cmd = command(args)
  local exe = type(cmd) == "table" and cmd[1] or nil
  if exe and vim.fn.executable(exe) ~= 1 then
    util.notify(
      string.format("cannot start the Gemini CLI: '%s' is not an executable (set terminal.cmd, or install it: npm install -g @google/gemini-cli)", exe),
      "error"
    )
    return false
  end
  local buf = api.nvim_create_buf(false, true)
  local win = open_window(buf)
  -- The sidecar's environment (it adds REMOTE_CONTAINERS=1 in a container,
  -- so the CLI dials 127.0.0.1), then the user's own variables.
  local full_env = vim.tbl_extend("force", env or {}, config.options.terminal.env)
  local cwd = util.cwd()
  -- An empty table reaches termopen() as a list, which it refuses (E475):
  -- only pass env when there is something in it.
  local env_opt = nil
  if next(full_env) ~= nil then
    env_opt = full_env
  end
  local ok, job = pcall(api.nvim_win_call, win, function()
    return start_terminal(cmd, {
      env = env_opt,
      cwd = cwd,
      on_exit = function(job_id, code)
        vim.schedule(function()
          if term.job ~= job_id then
            return
          end
          local b = term.buf
          term.job, term.buf = nil, nil
          -- A clean exit closes the terminal; a failure stays readable.
          if code == 0 and b and api.nvim_buf_is_valid(b) then
            for _, w in ipairs(vim.fn.win_findbuf(b)) do
              if #api.nvim_list_wins() > 1 then
                pcall(api.nvim_win_close, w, true)
              end
            end
            pcall(api.nvim_buf_delete, b, { force = true })
          end
        end)
      end,
    })
  end)
  if not ok or type(job) ~= "number" or job <= 0 then
    pcall(api.nvim_win_close, win, true)
    pcall(api.nvim_buf_delete, buf, { force = true })
    util.notify("cannot start the Gemini CLI: " .. tostring(job), "error")
    return false
  end
  api.nvim_buf_set_option(buf, "bufhidden", "hide")
  api.nvim_buf_set_option(buf, "buflisted", false)
  pcall(api.nvim_buf_set_var, buf, "gemini_companion_terminal", true)
  term.buf, term.job, term.cwd, term.ready = buf, job, cwd, false
  focus(win)
  return true
end

local function show(on_open)
  local win = term_window()
  focus(win or open_window(term.buf))
  if on_open then
    on_open()
  end
end

--- Opens the Gemini CLI (args appended to terminal.cmd), or shows and
--- focuses the one already running; then calls on_open.
---@param args? string[]
---@param on_open? fun()
function M.open(args, on_open)
  args = args or {}
  if M.running() then
    if #args > 0 then
      util.notify("Gemini CLI is already running; arguments ignored (:GeminiCli! restarts it with them)", "warn")
    end
    show(on_open)
    return
  end
  sidecar.start(function(err)
    if err then
      util.notify("the sidecar could not start (" .. tostring(err) .. "); Gemini CLI runs without IDE integration. :checkhealth gemini_companion says more.", "error")
    end
    if M.running() then
      show(on_open)
      return
    end
    -- The environment the sidecar gives a terminal opened now.
    sidecar.terminal_env(function(env)
      if M.running() then
        return show(on_open)
      end
      if launch(args, env) and on_open then
        on_open()
      end
    end)
  end)
end

--- Stops the running CLI, then opens a new one with args.
function M.reopen(args)
  M.close()
  M.open(args)
end

-- Ends the CLI's processes: the job and, since a terminal job leads its
-- own process group, everything it started (the Gemini CLI re-executes
-- itself as a child node process).
local function kill_job(job)
  local ok, pid = pcall(vim.fn.jobpid, job)
  if ok and type(pid) == "number" and pid > 0 then
    pcall(uv.kill, -pid, "sigterm")
    pcall(uv.kill, pid, "sigterm")
  end
  pcall(vim.fn.jobstop, job)
end

--- Stops the CLI the plugin started, if it runs (on VimLeavePre).
function M.stop_on_exit()
  if term.job then
    kill_job(term.job)
    term.job = nil
  end
end

--- Stops the CLI and closes its windows.
function M.close()
  if not M.running() then
    return
  end
  local buf, job = term.buf, term.job
  term.buf, term.job = nil, nil
  kill_job(job)
  for _, w in ipairs(vim.fn.win_findbuf(buf)) do
    if #api.nvim_list_wins() > 1 then
      pcall(api.nvim_win_close, w, true)
    end
  end
  pcall(api.nvim_buf_delete, buf, { force = true })
end

--- Focuses the CLI's window (opening or starting it if needed).
function M.focus()
  M.open({})
end

--- Hides the CLI's windows if shown, else shows it.
function M.toggle()
  local win = term_window()
  if win then
    for _, w in ipairs(vim.fn.win_findbuf(term.buf)) do
      if #api.nvim_list_wins() > 1 then
        pcall(api.nvim_win_close, w, true)
      end
    end
    return
  end
  M.open({})
end

-- Escapes a path the way the CLI's @-references expect (backslash before
-- spaces and the characters that end a reference).
local function escape_ref(path)
  return (path:gsub("([ \t()%[%]{};|*?$`'\"#&<>!~\\,])", "\\%1"))
end

-- The path of the entry under the cursor in a file tree (nvim-tree,
-- neo-tree, oil), or nil when the current buffer is not one.
local function tree_path()
  local ft = vim.bo.filetype
  if ft == "NvimTree" then
    local ok, node = pcall(function()
      return require("nvim-tree.api").tree.get_node_under_cursor()
    end)
    return ok and node and node.absolute_path or nil
  elseif ft == "neo-tree" then
    local ok, node = pcall(function()
      return require("neo-tree.sources.manager").get_state("filesystem").tree:get_node()
    end)
    return ok and node and (node.path or (node.get_id and node:get_id())) or nil
  elseif ft == "oil" then
    local ok, path = pcall(function()
      local oil = require("oil")
      local entry, dir = oil.get_cursor_entry(), oil.get_current_dir()
      if entry and dir then
        return dir .. entry.name
      end
    end)
    return ok and path or nil
  end
  return nil
end

--- The @-reference for the current buffer (with a line range when given),
--- or for the entry under the cursor in a file tree; or nil and why not.
function M.reference(line1, line2)
  local buf = api.nvim_get_current_buf()
  local name = api.nvim_buf_get_name(buf)
  local in_tree = tree_path()
  if in_tree then
    name, line1, line2 = in_tree, nil, nil
  elseif api.nvim_buf_get_option(buf, "buftype") ~= "" or name == "" or util.is_url(name) or not util.is_file(name) then
    return nil, "the current buffer is not a file on disk"
  end
  if not in_tree and not util.is_file(name) then
    return nil, "the current buffer is not a file on disk"
  end
  local path = util.realpath(name)
  local base = term.cwd or util.cwd()
  local ref = "@" .. escape_ref(util.relative(path, base))
  if line1 and line2 then
    if line1 == line2 then
      ref = ref .. string.format("#L%d", line1)
    else
      ref = ref .. string.format("#L%d-%d", line1, line2)
    end
  end
  return ref
end

-- Types text into the CLI. A CLI that just started is not reading input
-- until its prompt shows, so the first text waits for it (20 s at most).
local function deliver(text)
  local job, buf = term.job, term.buf
  if term.ready then
    vim.fn.chansend(job, text)
    return
  end
  local deadline = uv.now() + 20000
  local function prompt_shown()
    for _, l in ipairs(api.nvim_buf_get_lines(buf, 0, -1, false)) do
      if l:find("Type your message", 1, true) then
        return true
      end
    end
    return false
  end
  local timer = uv.new_timer()
  timer:start(
    0,
    100,
    vim.schedule_wrap(function()
      if timer:is_closing() then
        return
      end
      if term.job ~= job or not api.nvim_buf_is_valid(buf) then
        timer:stop()
        timer:close()
        return
      end
      if prompt_shown() or uv.now() > deadline then
        timer:stop()
        timer:close()
        term.ready = true
        vim.fn.chansend(job, text)
      end
    end)
  )
end

--- Sends the current file, or lines line1..line2 of it, to the CLI as an
--- @-reference, and focuses the CLI (starting it if needed).
function M.send(line1, line2)
  local ref, why = M.reference(line1, line2)
  if not ref then
    util.notify("nothing to send: " .. why, "warn")
    return
  end
  M.open({}, function()
    deliver(ref .. " ")
  end)
end

return M
