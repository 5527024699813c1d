-- The sidecar process and the editor link, protocol 2 (docs/editor-link.md):
-- JSON-RPC 2.0 with Content-Length framing (`--framing=lsp`) over the
-- child's stdin/stdout (gemini_companion.jsonrpc, which lets a request be
-- answered later, as the editor tools do while a language server works). Start,
-- stop, restart as the sidecar's policy says, and the terminal environment.
-- The other modules talk to the sidecar only through this one.
local binary = require("gemini_companion.binary")
local config = require("gemini_companion.config")
local jsonrpc = require("gemini_companion.jsonrpc")
local util = require("gemini_companion.util")

local M = {}
local uv = vim.uv or vim.loop

-- How long the sidecar gets to answer `initialize` and to exit on `shutdown`.
local INIT_TIMEOUT_MS = 15000
local STOP_TIMEOUT_MS = 2000

-- The policy used until the first `initialize` answer brings the sidecar's
-- own (docs/editor-link.md, "initialize (v2)"); the last one received is kept.
local DEFAULT_POLICY = {
  restart = { delaysMs = { 100, 500, 1000, 2000, 5000 }, windowMs = 60000, maxRestarts = 5 },
  limits = {
    maxSelectionBytes = 65552, maxOpenFiles = 10, maxSelectedTextUtf16 = 16384, maxMessageBytes = 268435456,
    editorRequestTimeoutMs = 10000, maxToolResults = 200, maxToolResultBytes = 65536,
  },
  messages = {
    restarting = "gemini-ide-companion exited ({reason}); restarting it. Gemini CLI sessions reconnect with /ide enable.",
    gaveUp = "gemini-ide-companion exited {count} times in a minute ({reason}); not restarting it. Run :GeminiRestart to try again.",
    restarted = "gemini-ide-companion restarted; Gemini CLI sessions reconnect with /ide enable.",
  },
}

---@class GeminiSidecarState
local state = {
  status = "stopped", -- "stopped" | "starting" | "running" | "stopping"
  client = nil, -- the gemini_companion.jsonrpc peer
  pid = nil, path = nil, -- the process and the binary it runs
  info = nil, -- initialize result (env and discoveryFile follow workspace/envChanged)
  policy = vim.deepcopy(DEFAULT_POLICY),
  pending = {}, next_id = 1, -- id -> callback(err, result); failed when the sidecar exits
  waiters = {}, stop_waiters = {}, -- callbacks waiting for "running" / "stopped"
  restarts = {}, -- uv.now() of recent restarts after unexpected exits
  restarted = false, -- the start under way follows an unexpected exit
  generation = 0, -- bumped on every spawn; stale callbacks compare it
  folders = nil, last_error = nil, -- workspace folders last sent; what went wrong last
}
M.state = state
--- What the plugin says it can do in `initialize`; a module may turn a
--- capability on (e.g. `agent`) before the sidecar starts.
M.capabilities = { diff = true, diffStates = true, unifiedDiff = false, selection = true, terminal = true, diagnostics = false, agent = false }

-- Handlers for the sidecar's requests (params, respond) — respond(err,
-- result) once, before the handler returns or later — and notifications
-- (params), by method; and functions called with true after every
-- successful (re)start, with false when the sidecar stops.
local request_handlers, notification_handlers, on_ready = {}, {}, {}

function M.on_request(method, fn) request_handlers[method] = fn end
function M.on_notification(method, fn) notification_handlers[method] = fn end
function M.on_ready(fn) table.insert(on_ready, fn) end
function M.running() return state.status == "running" end

--- The sidecar's policy (restart, limits, messages): its last answer, or the
--- built-in defaults before the first one.
function M.policy() return state.policy end

--- A number from policy.limits, e.g. limit("maxSelectionBytes").
function M.limit(name)
  return type(state.policy.limits[name]) == "number" and state.policy.limits[name] or DEFAULT_POLICY.limits[name]
end

-- The policy's text `name` with {reason}, {count}, ... filled in.
local function message(name, vars)
  local text = type(state.policy.messages[name]) == "string" and state.policy.messages[name] or DEFAULT_POLICY.messages[name]
  return (text:gsub("{(%w+)}", function(k) return vars[k] ~= nil and tostring(vars[k]) or nil end))
end

local function adopt_policy(policy)
  local merged = vim.deepcopy(state.policy)
  for _, section in ipairs({ "restart", "limits", "messages" }) do
    for k, v in pairs(type(policy) == "table" and type(policy[section]) == "table" and policy[section] or {}) do
      merged[section][k] = v
    end
  end
  state.policy = merged
end

local function not_running(cb)
  if cb then cb({ code = -32000, message = "the sidecar is not running" }) end
end

local function send_request(method, params, cb)
  local id, pending = state.next_id, state.pending
  state.next_id = id + 1
  pending[id] = cb or function() end
  local ok = state.client and state.client.request(method, params, function(err, result)
    local fn = pending[id]
    pending[id] = nil
    if fn then fn(err, result) end
  end)
  if not ok then
    pending[id] = nil
    not_running(cb)
  end
end

--- Sends a notification. Dropped (returns false) unless the sidecar is running.
function M.notify(method, params)
  return state.status == "running" and state.client.notify(method, params) and true or false
end

--- Sends a request; cb(err, result) runs on the main loop.
function M.request(method, params, cb)
  if state.status ~= "running" then return not_running(cb) end
  send_request(method, params, cb)
end

--- Sends a request and waits for its answer (at most timeout_ms).
---@return table|nil err, any result
function M.request_sync(method, params, timeout_ms)
  local done, err, result = false, nil, nil
  M.request(method, params, function(e, r) done, err, result = true, e, r end)
  if not vim.wait(timeout_ms or 2000, function() return done end, 10) then
    return { code = -32000, message = method .. " got no answer in time" }, nil
  end
  return err, result
end

--- cb(env): the environment for a terminal opened now, as the sidecar's
--- `terminal/env` says (its last known one if that fails), or nil when the
--- sidecar is not running.
function M.terminal_env(cb)
  M.request("terminal/env", vim.empty_dict(), function(err, result)
    if not err and type(result) == "table" and type(result.env) == "table" then return cb(result.env) end
    cb(state.status == "running" and state.info and state.info.env or nil)
  end)
end

--- The same, waiting for the answer (health checks, scripts).
function M.env()
  local done, env = state.status ~= "running", nil
  M.terminal_env(function(e) done, env = true, e end)
  vim.wait(2000, function() return done end, 10)
  return env
end

local function call_all(list, ...)
  for _, fn in ipairs(list) do
    local ok, err = pcall(fn, ...)
    if not ok then util.notify("error in a gemini_companion callback: " .. tostring(err), "error") end
  end
end

local function finish_waiters(err)
  local waiters = state.waiters
  state.waiters = {}
  call_all(waiters, err, state.info)
end

local function fail(msg)
  state.last_error = msg
  util.notify(msg, "error")
  finish_waiters(msg)
end

-- Signals the sidecar through its process handle.
local function kill(client, signal)
  return client.handle:is_closing() or client.handle:kill(signal)
end

local start_now -- forward declaration

-- Restarts the sidecar that died as the policy says, unless it keeps dying.
local function restart_after_crash(reason)
  local policy, now, recent = state.policy.restart, uv.now(), {}
  for _, t in ipairs(state.restarts) do
    if now - t < policy.windowMs then table.insert(recent, t) end
  end
  state.restarts = recent
  local max, cap = policy.maxRestarts, config.options.sidecar.max_restarts
  if type(cap) == "number" and cap < max then max = cap end -- the user's own, lower limit
  local vars = { reason = reason, count = #recent + 1 }
  if #recent >= max then
    state.last_error = message("gaveUp", vars)
    return util.notify(state.last_error, "error")
  end
  table.insert(recent, now)
  util.notify(message("restarting", vars), "warn")
  local timer = uv.new_timer()
  timer:start(policy.delaysMs[math.min(#recent, #policy.delaysMs)] or 0, 0, function()
    timer:close()
    vim.schedule(function()
      if state.status == "stopped" then
        state.restarted = true
        start_now()
      end
    end)
  end)
end

local function on_exit(generation, code, signal)
  if generation ~= state.generation then return end
  local was, info, pending = state.status, state.info, state.pending
  state.client, state.pid, state.info, state.pending, state.status = nil, nil, nil, {}, "stopped"
  for _, cb in pairs(pending) do pcall(cb, { code = -32000, message = "the sidecar exited" }) end
  call_all(on_ready, false)
  pcall(vim.cmd, "redrawstatus!")
  if was == "stopping" then
    local waiters = state.stop_waiters
    state.stop_waiters = {}
    return call_all(waiters)
  end
  local reason = (signal and signal ~= 0) and ("signal " .. signal) or ("exit code " .. tostring(code))
  if was == "starting" then
    return fail("gemini-ide-companion (" .. tostring(state.path) .. ") failed to start (" .. reason .. ")")
  end
  -- It died while running. Its discovery file outlives it (it is named
  -- after this Neovim, which is alive) and would lead CLIs to a dead port.
  if info and type(info.discoveryFile) == "string" and info.discoveryFile ~= "" then os.remove(info.discoveryFile) end
  restart_after_crash(reason)
end

-- The handlers the link calls for one sidecar process.
local function dispatchers(generation)
  return {
    notification = function(method, params)
      local handler = notification_handlers[method]
      if generation == state.generation and handler then
        local ok, err = pcall(handler, params)
        if not ok then util.notify("error handling " .. method .. ": " .. tostring(err), "error") end
      end
    end,
    request = function(method, params, reply)
      local handler = request_handlers[method]
      if not handler or generation ~= state.generation then
        return reply({ code = -32601, message = "method not found: " .. tostring(method) })
      end
      local function respond(err, result)
        if err then return reply({ code = tonumber(err.code) or -32603, message = err.message or tostring(err) }) end
        reply(nil, result == nil and vim.NIL or result)
      end
      local ok, perr = pcall(handler, params, respond)
      if not ok then respond({ code = -32603, message = tostring(perr) }) end
    end,
    on_exit = function(code, signal) vim.schedule(function() on_exit(generation, code, signal) end) end,
    on_error = function(kind, err)
      if generation == state.generation then
        local name = tostring(kind)
        local detail = type(err) == "table" and vim.inspect(err, { newline = " ", indent = "" }) or tostring(err)
        util.notify("editor link: " .. name .. ": " .. detail, "warn")
      end
    end,
  }
end

local function on_initialized(generation, err, result)
  if generation ~= state.generation or state.status ~= "starting" then return end
  if err or type(result) ~= "table" then
    fail("gemini-ide-companion refused initialize: " .. (err and tostring(err.message) or "no result"))
    return M.stop()
  end
  state.info, state.status, state.last_error = result, "running", nil
  state.pid = state.pid or result.pid
  adopt_policy(result.policy)
  if type(result.status) == "table" and notification_handlers.status then
    pcall(notification_handlers.status, result.status)
  end
  call_all(on_ready, true)
  if state.restarted then
    state.restarted = false
    util.notify(message("restarted", {}), "info")
  end
  pcall(vim.cmd, "redrawstatus!")
  finish_waiters(nil)
end

local function spawn(path)
  local opts = config.options
  state.generation = state.generation + 1
  local generation = state.generation
  state.path, state.next_id, state.pending = path, 1, {}
  local args = { "--stdio", "--framing=lsp", "--log-level", opts.sidecar.log_level }
  if opts.sidecar.log_file then vim.list_extend(args, { "--log-file", vim.fn.expand(opts.sidecar.log_file) }) end
  local ok, client, why = pcall(jsonrpc.start, path, args, dispatchers(generation))
  if not ok or not client then
    state.status = "stopped"
    return fail("cannot run " .. path .. ": " .. tostring(ok and why or client))
  end
  state.client, state.pid, state.folders = client, client.pid, { util.cwd() }
  local init_timer = uv.new_timer()
  init_timer:start(INIT_TIMEOUT_MS, 0, function()
    init_timer:close()
    vim.schedule(function()
      if generation == state.generation and state.status == "starting" then
        fail("gemini-ide-companion did not answer initialize in time")
        M.stop()
      end
    end)
  end)
  send_request("initialize", {
    protocolVersion = 2, ide = { name = "neovim", displayName = "Neovim", restartCommand = ":GeminiRestart" },
    processId = vim.fn.getpid(), workspaceFolders = state.folders, isTrusted = config.trust(opts), capabilities = M.capabilities,
  }, function(err, result)
    if not init_timer:is_closing() then init_timer:close() end
    on_initialized(generation, err, result)
  end)
end

-- Starts the sidecar unless it runs or is on its way.
function start_now()
  if state.status ~= "stopped" then
    if state.status == "running" then return finish_waiters(nil) end
    if state.status == "starting" then return end
    return table.insert(state.stop_waiters, start_now) -- once the old one is gone
  end
  state.status = "starting"
  binary.resolve(config.options, function(err, path)
    if state.status ~= "starting" then return end
    if err then
      state.status = "stopped"
      return fail(err)
    end
    spawn(path)
  end)
end

--- Starts the sidecar if it is not running. cb(err, info) once it answered
--- `initialize` (or failed).
---@param cb? fun(err: string|nil, info: table|nil)
function M.start(cb)
  if cb then table.insert(state.waiters, cb) end
  start_now()
end

--- Asks the sidecar to shut down; kills it if it does not exit in time.
---@param cb? fun()
function M.stop(cb)
  if state.status == "stopped" then return cb and cb() end
  if cb then table.insert(state.stop_waiters, cb) end
  if state.status == "stopping" then return end
  local was_starting, client = state.status == "starting", state.client
  state.status = "stopping"
  if was_starting then finish_waiters("stopped") end
  if not client then -- still resolving or building the binary
    state.status = "stopped"
    local waiters = state.stop_waiters
    state.stop_waiters = {}
    return call_all(waiters)
  end
  send_request("shutdown", nil, function() end)
  local generation, timer = state.generation, uv.new_timer()
  timer:start(STOP_TIMEOUT_MS, 0, function()
    timer:close()
    vim.schedule(function()
      if generation == state.generation and state.status == "stopping" then kill(client, "sigterm") end
    end)
  end)
end

--- Stops the sidecar and waits until it has exited (for VimLeavePre).
function M.stop_sync(timeout_ms)
  local client = state.client
  M.stop()
  vim.wait(timeout_ms or STOP_TIMEOUT_MS + 500, function() return state.status == "stopped" end, 10)
  if state.status ~= "stopped" and client then kill(client, "sigkill") end
end

--- Stops and starts the sidecar; a restart the user asks for starts the
--- policy's count of restarts afresh.
function M.restart(cb)
  state.restarts = {}
  M.stop(function() M.start(cb) end)
end

--- Tells the sidecar the editor's workspace folders changed.
function M.set_folders(folders)
  state.folders = folders
  M.notify("workspace/foldersChanged", { workspaceFolders = folders })
end

-- After workspace/foldersChanged: the environment for terminals opened from
-- now on and the new discovery file (a `log` says what running CLIs must do).
M.on_notification("workspace/envChanged", function(params)
  if state.info and type(params.env) == "table" then
    state.info.env = params.env
    if type(params.discoveryFile) == "string" then state.info.discoveryFile = params.discoveryFile end
  end
end)

return M
