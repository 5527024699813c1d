-- Finding the gemini-ide-companion binary, and building it from the
-- checkout this plugin lives in.
local config = require("gemini_companion.config")
local util = require("gemini_companion.util")

local M = {}

local uv = vim.uv or vim.loop
local NAME = "gemini-ide-companion"

--- Directory of the plugin (the one holding lua/ and plugin/).
function M.plugin_dir()
  local src = debug.getinfo(1, "S").source:gsub("^@", "")
  src = uv.fs_realpath(src) or src
  return vim.fn.fnamemodify(src, ":h:h:h")
end

--- Root of the Go module this plugin ships in (plugins/nvim/../..), or nil
--- when the plugin was copied out of the checkout.
function M.repo_root()
  local root = vim.fn.fnamemodify(M.plugin_dir(), ":h:h")
  if util.is_file(root .. "/go.mod") and vim.fn.isdirectory(root .. "/cmd/" .. NAME) == 1 then
    return root
  end
  return nil
end

--- Where a build puts the binary.
function M.build_path(opts)
  opts = opts or config.options
  local dir = opts.sidecar.build_dir or (M.plugin_dir() .. "/bin")
  return vim.fn.fnamemodify(vim.fn.expand(dir), ":p"):gsub("/+$", "") .. "/" .. NAME
end

--- Returns the binary to run, or nil and a reason.
---@return string|nil path, string|nil reason
function M.find(opts)
  opts = opts or config.options
  if opts.sidecar.cmd then
    local cmd = vim.fn.expand(opts.sidecar.cmd)
    if vim.fn.executable(cmd) == 1 then
      return vim.fn.exepath(cmd) ~= "" and vim.fn.exepath(cmd) or cmd
    end
    return nil, string.format("sidecar.cmd is set to '%s', which is not an executable file", opts.sidecar.cmd)
  end
  local built = M.build_path(opts)
  if vim.fn.executable(built) == 1 then
    return built
  end
  local on_path = vim.fn.exepath(NAME)
  if on_path ~= "" then
    return on_path
  end
  return nil, NAME .. " is not on PATH and has not been built into " .. built
end

--- Why a build cannot run, or nil when it can.
function M.cannot_build()
  if not M.repo_root() then
    return "the plugin is not inside a gemini-ide-companion checkout, so it cannot be built from source"
  end
  if vim.fn.executable("go") ~= 1 then
    return "Go is not installed (https://go.dev/dl/), so the plugin cannot build " .. NAME
  end
  return nil
end

--- Builds the binary with `go build` in the background.
---@param on_done fun(err: string|nil, path: string|nil)
function M.build(opts, on_done)
  opts = opts or config.options
  local why = M.cannot_build()
  if why then
    on_done(why)
    return
  end
  local out = M.build_path(opts)
  vim.fn.mkdir(vim.fn.fnamemodify(out, ":h"), "p")
  local stderr = uv.new_pipe(false)
  local errors = {}
  local handle
  handle = uv.spawn("go", {
    args = { "build", "-o", out, "./cmd/" .. NAME },
    cwd = M.repo_root(),
    stdio = { nil, nil, stderr },
  }, function(code)
    handle:close()
    stderr:read_stop()
    stderr:close()
    vim.schedule(function()
      if code == 0 and vim.fn.executable(out) == 1 then
        on_done(nil, out)
      else
        on_done(string.format("`go build` failed (exit %d): %s", code, vim.trim(table.concat(errors))))
      end
    end)
  end)
  if not handle then
    stderr:close()
    on_done("cannot run go")
    return
  end
  stderr:read_start(function(_, data)
    if data then
      table.insert(errors, data)
    end
  end)
end

--- Builds the binary and waits for it (for plugin managers' build hooks).
--- Raises an error when the build fails.
---@return string path
function M.build_sync(opts, timeout_ms)
  local done, err, path = false, nil, nil
  M.build(opts, function(e, p)
    done, err, path = true, e, p
  end)
  vim.wait(timeout_ms or 600000, function()
    return done
  end, 100)
  if not done then
    error("gemini_companion: go build did not finish in time", 0)
  end
  if err then
    error("gemini_companion: " .. err, 0)
  end
  return path
end

--- Finds the binary or, when allowed, builds it; calls on_done(err, path).
function M.resolve(opts, on_done)
  opts = opts or config.options
  local path, reason = M.find(opts)
  if path then
    on_done(nil, path)
    return
  end
  if opts.sidecar.cmd or not opts.sidecar.build then
    on_done(reason .. ". Set sidecar.cmd in setup(), or put " .. NAME .. " on PATH.")
    return
  end
  local why = M.cannot_build()
  if why then
    on_done(reason .. "; " .. why .. ". Set sidecar.cmd in setup(), or put " .. NAME .. " on PATH.")
    return
  end
  util.notify("building " .. NAME .. " with go build (first use)...")
  M.build(opts, function(err, built)
    if err then
      on_done("cannot build " .. NAME .. ": " .. err)
    else
      util.notify("built " .. built)
      on_done(nil, built)
    end
  end)
end

return M
