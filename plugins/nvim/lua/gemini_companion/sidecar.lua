-- The sidecar process and the editor link: NDJSON JSON-RPC 2.0 over the
-- child's stdin/stdout (docs/editor-link.md), its start, stop and restart.
local binary = require("gemini_companion.binary")
local config = require("gemini_companion.config")
local util = require("gemini_companion.util")

local M = {}

local uv = vim.uv or vim.loop

-- How long the sidecar gets to answer `initialize` and to exit on `shutdown`.
local INIT_TIMEOUT_MS = 15000
local STOP_TIMEOUT_MS = 2000
local RESTART_WINDOW_MS = 60000

---@class GeminiSidecarState
local state = {
  status = "stopped", -- "stopped" | "starting" | "running" | "stopping"
  handle = nil, -- uv process handle
  pid = nil,
  stdin = nil,
  path = nil, -- binary in use
  info = nil, -- initialize result
  next_id = 1,
  pending = {}, -- id -> callback(err, result)
  waiters = {}, -- callbacks waiting for "running"
  stop_waiters = {},
  stderr_tail = {}, -- last lines of the sidecar's stderr
  restarts = {}, -- uv.now() of recent unexpected exits
  generation = 0, -- bumped on every spawn; stale callbacks compare it
  connected = 0, -- CLI sessions connected (from `status`)
  folders = nil, -- workspace folders last sent
  last_error = nil,
}
M.state = state

-- Handlers for requests and notifications from the sidecar, by method.
-- Request handlers get (params, respond) with respond(err, result).
local request_handlers = {}
local notification_handlers = {}
-- Functions called after every successful (re)start.
local on_ready = {}

function M.on_request(method, fn)
  request_handlers[method] = fn
end

function M.on_notification(method, fn)
  notification_handlers[method] = fn
end

function M.on_ready(fn)
  table.insert(on_ready, fn)
end

function M.running()
  return state.status == "running"
end

--- The environment every terminal running the CLI gets, or nil when the
--- sidecar is not running.
function M.env()
  if not state.info or type(state.info.env) ~= "table" then
    return nil
  end
  local env = vim.deepcopy(state.info.env)
  if state.folders and not state.env_updated then
    env.GEMINI_CLI_IDE_WORKSPACE_PATH = table.concat(state.folders, ":")
  end
  return env
end

local function write(msg)
  if not state.stdin or state.stdin:is_closing() then
    return false
  end
  local ok, line = pcall(vim.json.encode, msg)
  if not ok then
    util.notify("cannot encode a message for the sidecar: " .. tostring(line), "error")
    return false
  end
  state.stdin:write(line .. "\n")
  return true
end

--- Sends a notification. Dropped (returns false) unless the sidecar is running.
function M.notify(method, params)
  if state.status ~= "running" then
    return false
  end
  return write({ jsonrpc = "2.0", method = method, params = params })
end

local function send_request(method, params, cb)
  local id = state.next_id
  state.next_id = id + 1
  state.pending[id] = cb or function() end
  if not write({ jsonrpc = "2.0", id = id, method = method, params = params }) then
    state.pending[id] = nil
    if cb then
      cb({ code = -32000, message = "the sidecar is not running" })
    end
  end
  return id
end

--- Sends a request; cb(err, result) runs on the main loop.
function M.request(method, params, cb)
  if state.status ~= "running" then
    if cb then
      cb({ code = -32000, message = "the sidecar is not running" })
    end
    return
  end
  send_request(method, params, cb)
end

--- Sends a request and waits for its answer (at most timeout_ms).
---@return table|nil err, any result
function M.request_sync(method, params, timeout_ms)
  local done, err, result = false, nil, nil
  M.request(method, params, function(e, r)
    done, err, result = true, e, r
  end)
  if not vim.wait(timeout_ms or 2000, function()
    return done
  end, 10) then
    return { code = -32000, message = method .. " got no answer in time" }, nil
  end
  return err, result
end

local function respond(id, err, result)
  if err then
    write({ jsonrpc = "2.0", id = id, error = { code = err.code or -32603, message = err.message or tostring(err) } })
  else
    if result == nil then
      result = vim.NIL
    end
    write({ jsonrpc = "2.0", id = id, result = result })
  end
end

local function dispatch(line, generation)
  if generation ~= state.generation or line == "" then
    return
  end
  local ok, msg = pcall(vim.json.decode, line, { luanil = { object = true } })
  if not ok or type(msg) ~= "table" then
    util.notify("the sidecar sent a line that is not JSON: " .. line:sub(1, 200), "warn")
    return
  end
  if msg.method ~= nil then
    local params = msg.params
    if params == vim.NIL then
      params = nil
    end
    if msg.id ~= nil then
      local handler = request_handlers[msg.method]
      if not handler then
        respond(msg.id, { code = -32601, message = "method not found: " .. tostring(msg.method) })
        return
      end
      local answered = false
      local function reply(err, result)
        if answered or generation ~= state.generation then
          return
        end
        answered = true
        respond(msg.id, err, result)
      end
      local hok, herr = pcall(handler, params or {}, reply)
      if not hok then
        reply({ code = -32603, message = tostring(herr) })
      end
    else
      local handler = notification_handlers[msg.method]
      if handler then
        local hok, herr = pcall(handler, params or {})
        if not hok then
          util.notify("error handling " .. msg.method .. ": " .. tostring(herr), "error")
        end
      end
    end
  elseif msg.id ~= nil then
    local cb = state.pending[msg.id]
    state.pending[msg.id] = nil
    if cb then
      local err = msg.error
      if err == vim.NIL then
        err = nil
      end
      local result = msg.result
      if result == vim.NIL then
        result = nil
      end
      cb(err, result)
    end
  end
end

-- Splits a byte stream into lines; a line may span many reads (MiB-sized
-- diffs), so pieces are kept in a list and joined once.
local function line_splitter(on_line)
  local pieces = {}
  return function(chunk)
    local start = 1
    while true do
      local nl = chunk:find("\n", start, true)
      if not nl then
        break
      end
      table.insert(pieces, chunk:sub(start, nl - 1))
      local line = table.concat(pieces)
      pieces = {}
      on_line(line)
      start = nl + 1
    end
    if start <= #chunk then
      table.insert(pieces, chunk:sub(start))
    end
  end
end

local function finish_waiters(err)
  local waiters = state.waiters
  state.waiters = {}
  for _, cb in ipairs(waiters) do
    pcall(cb, err, state.info)
  end
end

local function stderr_text()
  return vim.trim(table.concat(state.stderr_tail, "\n"))
end

local start -- forward declaration

local function on_exit(generation, code, signal)
  if generation ~= state.generation then
    return
  end
  local was = state.status
  local info = state.info
  state.handle, state.pid, state.stdin, state.info = nil, nil, nil, nil
  state.status = "stopped"
  state.connected = 0
  local pending = state.pending
  state.pending = {}
  for _, cb in pairs(pending) do
    pcall(cb, { code = -32000, message = "the sidecar exited" })
  end
  for _, fn in ipairs(on_ready) do
    pcall(fn, false)
  end
  pcall(vim.cmd, "redrawstatus!")

  if was == "stopping" then
    local waiters = state.stop_waiters
    state.stop_waiters = {}
    for _, cb in ipairs(waiters) do
      pcall(cb)
    end
    return
  end

  local why = string.format("exit code %d%s", code, signal ~= 0 and (", signal " .. signal) or "")
  local tail = stderr_text()
  if tail ~= "" then
    why = why .. ": " .. tail
  end
  if was == "starting" then
    state.last_error = "gemini-ide-companion failed to start (" .. why .. ")"
    util.notify(state.last_error, "error")
    finish_waiters(state.last_error)
    return
  end

  -- It died while running. Its discovery file outlives it (it is named
  -- after this Neovim, which is alive) and would lead CLIs to a dead port.
  if info and type(info.discoveryFile) == "string" and info.discoveryFile ~= "" then
    os.remove(info.discoveryFile)
  end
  -- Restart it, unless it keeps dying.
  local now = uv.now()
  local recent = {}
  for _, t in ipairs(state.restarts) do
    if now - t < RESTART_WINDOW_MS then
      table.insert(recent, t)
    end
  end
  state.restarts = recent
  local max = config.options.sidecar.max_restarts
  if #recent >= max then
    state.last_error = "gemini-ide-companion exited (" .. why .. ")"
    util.notify(state.last_error .. "; not restarting it again. Run :GeminiStart to try again.", "error")
    return
  end
  table.insert(state.restarts, now)
  util.notify("gemini-ide-companion exited (" .. why .. "); restarting it. Gemini CLI sessions must reconnect (/ide enable).", "warn")
  local timer = uv.new_timer()
  timer:start(100 * #state.restarts, 0, function()
    timer:close()
    vim.schedule(function()
      if state.status == "stopped" then
        start()
      end
    end)
  end)
end

local function spawn(path)
  local opts = config.options
  state.generation = state.generation + 1
  local generation = state.generation
  state.path = path
  state.stderr_tail = {}
  state.next_id = 1
  state.pending = {}

  local stdin, stdout, stderr = uv.new_pipe(false), uv.new_pipe(false), uv.new_pipe(false)
  local args = { "--stdio", "--log-level", opts.sidecar.log_level }
  if opts.sidecar.log_file then
    table.insert(args, "--log-file")
    table.insert(args, vim.fn.expand(opts.sidecar.log_file))
  end
  local handle, pid
  handle, pid = uv.spawn(path, { args = args, stdio = { stdin, stdout, stderr } }, function(code, signal)
    handle:close()
    for _, pipe in ipairs({ stdin, stdout, stderr }) do
      if not pipe:is_closing() then
        pipe:close()
      end
    end
    vim.schedule(function()
      on_exit(generation, code, signal)
    end)
  end)
  if not handle then
    for _, pipe in ipairs({ stdin, stdout, stderr }) do
      pipe:close()
    end
    state.status = "stopped"
    state.last_error = "cannot run " .. path .. ": " .. tostring(pid)
    util.notify(state.last_error, "error")
    finish_waiters(state.last_error)
    return
  end
  state.handle, state.pid, state.stdin = handle, pid, stdin

  local split = line_splitter(function(line)
    vim.schedule(function()
      dispatch(line, generation)
    end)
  end)
  stdout:read_start(function(_, data)
    if data then
      split(data)
    end
  end)
  local err_split = line_splitter(function(line)
    table.insert(state.stderr_tail, line)
    if #state.stderr_tail > 10 then
      table.remove(state.stderr_tail, 1)
    end
  end)
  stderr:read_start(function(_, data)
    if data then
      err_split(data)
    end
  end)

  state.folders = { util.cwd() }
  local init_timer = uv.new_timer()
  init_timer:start(INIT_TIMEOUT_MS, 0, function()
    init_timer:close()
    vim.schedule(function()
      if generation == state.generation and state.status == "starting" then
        state.last_error = "gemini-ide-companion did not answer initialize in time"
        util.notify(state.last_error, "error")
        finish_waiters(state.last_error)
        M.stop()
      end
    end)
  end)
  send_request("initialize", {
    protocolVersion = 1,
    ide = { name = "neovim", displayName = "Neovim" },
    processId = vim.fn.getpid(),
    workspaceFolders = state.folders,
    isTrusted = require("gemini_companion.config").trust(opts),
    -- diff.lua shows diff/state (queued, orphaned, changed on disk, ...).
    capabilities = { diffStates = true },
  }, function(err, result)
    if not init_timer:is_closing() then
      init_timer:stop()
      init_timer:close()
    end
    if generation ~= state.generation or state.status ~= "starting" then
      return
    end
    if err or type(result) ~= "table" then
      state.last_error = "gemini-ide-companion refused initialize: " .. (err and err.message or "no result")
      util.notify(state.last_error, "error")
      finish_waiters(state.last_error)
      M.stop()
      return
    end
    state.info = result
    state.env_updated = false
    state.status = "running"
    state.last_error = nil
    for _, fn in ipairs(on_ready) do
      local ok, e = pcall(fn, true)
      if not ok then
        util.notify("error after start: " .. tostring(e), "error")
      end
    end
    pcall(vim.cmd, "redrawstatus!")
    finish_waiters(nil)
  end)
end

--- Starts the sidecar if it is not running. cb(err, info) once it answered
--- `initialize` (or failed).
---@param cb? fun(err: string|nil, info: table|nil)
function start(cb)
  if cb then
    table.insert(state.waiters, cb)
  end
  if state.status == "running" then
    finish_waiters(nil)
    return
  end
  if state.status == "starting" then
    return
  end
  if state.status == "stopping" then
    -- Start again once the old one is gone.
    table.insert(state.stop_waiters, function()
      start()
    end)
    return
  end
  state.status = "starting"
  binary.resolve(config.options, function(err, path)
    if state.status ~= "starting" then
      return
    end
    if err then
      state.status = "stopped"
      state.last_error = err
      util.notify(err, "error")
      finish_waiters(err)
      return
    end
    spawn(path)
  end)
end
M.start = start

--- Asks the sidecar to shut down; kills it if it does not exit in time.
---@param cb? fun()
function M.stop(cb)
  if state.status == "stopped" then
    if cb then
      cb()
    end
    return
  end
  if cb then
    table.insert(state.stop_waiters, cb)
  end
  if state.status == "stopping" then
    return
  end
  if not state.handle then
    -- Still resolving or building the binary.
    state.status = "stopped"
    finish_waiters("stopped")
    local waiters = state.stop_waiters
    state.stop_waiters = {}
    for _, w in ipairs(waiters) do
      pcall(w)
    end
    return
  end
  local was_starting = state.status == "starting"
  state.status = "stopping"
  if was_starting then
    finish_waiters("stopped")
  end
  local handle, stdin = state.handle, state.stdin
  send_request("shutdown", nil, function()
    if stdin and not stdin:is_closing() then
      stdin:close()
    end
  end)
  local timer = uv.new_timer()
  timer:start(STOP_TIMEOUT_MS, 0, function()
    timer:close()
    if not handle:is_closing() then
      handle:kill("sigterm")
    end
  end)
end

--- Stops the sidecar and waits until it has exited (for VimLeavePre).
function M.stop_sync(timeout_ms)
  if state.status == "stopped" then
    return
  end
  M.stop()
  vim.wait(timeout_ms or STOP_TIMEOUT_MS + 500, function()
    return state.status == "stopped"
  end, 10)
  if state.status ~= "stopped" and state.handle and not state.handle:is_closing() then
    state.handle:kill("sigkill")
  end
end

function M.restart(cb)
  state.restarts = {}
  M.stop(function()
    start(cb)
  end)
end

--- Tells the sidecar the editor's workspace folders changed.
function M.set_folders(folders)
  state.folders = folders
  M.notify("workspace/foldersChanged", { workspaceFolders = folders })
end

M.on_notification("status", function(params)
  if type(params.connectedClients) == "number" then
    state.connected = params.connectedClients
    pcall(vim.cmd, "redrawstatus!")
  end
end)

-- The sidecar's answer to workspace/foldersChanged: the new environment
-- for terminals and the new discovery file.
M.on_notification("workspace/envChanged", function(params)
  if state.info and type(params.env) == "table" then
    state.info.env = params.env
    state.env_updated = true
    if type(params.discoveryFile) == "string" then
      state.info.discoveryFile = params.discoveryFile
    end
  end
end)

M.on_notification("log", function(params)
  local level = params.level
  if type(params.message) ~= "string" or not util.level(level) then
    return
  end
  if util.level(level) >= util.level(config.options.notify_level) then
    util.notify(params.message, level)
  end
end)

return M
