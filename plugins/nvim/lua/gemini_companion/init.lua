-- gemini_companion: Neovim as an IDE for Gemini CLI, through the
-- gemini-ide-companion sidecar. See :help gemini-companion.
local config = require("gemini_companion.config")
local util = require("gemini_companion.util")

local M = {}

M.did_setup = false

local function modules()
  return require("gemini_companion.sidecar"), require("gemini_companion.diff"), require("gemini_companion.terminal")
end

--- Configures the plugin and, with auto_start, starts the sidecar.
--- Raises an error for an option of the wrong type; warns about unknown ones.
---@param opts? table
function M.setup(opts)
  local options, warnings = config.build(opts)
  local was_trusted = config.trust(config.options)
  config.options = options
  for _, w in ipairs(warnings) do
    util.notify(w .. " (ignored)", "warn")
  end
  require("gemini_companion.commands").define()
  if not M.did_setup then
    M.did_setup = true
    require("gemini_companion.context").setup()
    require("gemini_companion.diff").setup()
    require("gemini_companion.status").setup()
    require("gemini_companion.tools").setup()
    local group = vim.api.nvim_create_augroup("GeminiCompanion", { clear = true })
    vim.api.nvim_create_autocmd("VimLeavePre", {
      group = group,
      callback = function()
        require("gemini_companion.terminal").stop_on_exit()
        require("gemini_companion.sidecar").stop_sync()
      end,
    })
    if config.options.reload then
      require("gemini_companion.reload").setup()
    end
  end
  local trusted = config.trust(options)
  if trusted ~= nil and trusted ~= was_trusted then
    require("gemini_companion.sidecar").notify("workspace/trustChanged", { isTrusted = trusted })
  end
  if options.auto_start then
    M.start()
  end
end

-- Commands work without setup(): they set up with the defaults, minus
-- auto_start (the command itself starts what it needs).
local function ensure()
  if not M.did_setup then
    M.setup({ auto_start = false })
  end
end

--- Starts the sidecar; cb(err, info) once it is ready.
function M.start(cb)
  ensure()
  require("gemini_companion.sidecar").start(cb)
end

function M.stop(cb)
  ensure()
  require("gemini_companion.sidecar").stop(cb)
end

function M.restart(cb)
  ensure()
  require("gemini_companion.sidecar").restart(cb)
end

--- Opens Gemini CLI in a terminal (restarting it with args when force).
function M.open(args, force)
  ensure()
  local _, _, terminal = modules()
  if force then
    terminal.reopen(args or {})
  else
    terminal.open(args or {})
  end
end

function M.focus()
  ensure()
  local _, _, terminal = modules()
  terminal.focus()
end

function M.toggle()
  ensure()
  local _, _, terminal = modules()
  terminal.toggle()
end

--- Sends the current file (or lines line1..line2) to Gemini CLI.
function M.send(line1, line2)
  ensure()
  local _, _, terminal = modules()
  terminal.send(line1, line2)
end

--- Accepts the diff in the current buffer, for path, or the latest one.
function M.accept(path)
  ensure()
  local _, diff = modules()
  diff.accept(path)
end

function M.reject(path)
  ensure()
  local _, diff = modules()
  diff.reject(path)
end

function M.status()
  ensure()
  require("gemini_companion.status").show()
end

--- The environment that connects a Gemini CLI started in a terminal of
--- your own choosing (toggleterm, a tmux pane, :terminal) to this Neovim:
--- GEMINI_CLI_IDE_SERVER_PORT, GEMINI_CLI_IDE_WORKSPACE_PATH,
--- GEMINI_CLI_IDE_AUTH_TOKEN and GEMINI_CLI_IDE_PID, as a table. Starts the
--- sidecar if needed and waits for it (at most timeout_ms, default 15000);
--- nil when it cannot start.
---@param timeout_ms? integer
---@return table<string,string>|nil
function M.terminal_env(timeout_ms)
  ensure()
  local sidecar = require("gemini_companion.sidecar")
  if not sidecar.running() then
    local done = false
    sidecar.start(function() done = true end)
    vim.wait(timeout_ms or 15000, function() return done end, 10)
    if not sidecar.running() then
      return nil
    end
  end
  return sidecar.env()
end

--- A statusline component: "Gemini: 1 CLI", "Gemini: off", ...
function M.statusline()
  if not M.did_setup then
    return ""
  end
  return require("gemini_companion.status").line()
end

--- Builds the sidecar from this checkout with `go build` and waits for it
--- (for plugin managers' build hooks). Raises an error on failure.
function M.build(opts)
  local options = opts and config.build(opts) or config.options
  return require("gemini_companion.binary").build_sync(options)
end

return M
