-- What the plugin is doing, for :GeminiStatus and statuslines.
local config = require("gemini_companion.config")
local diff = require("gemini_companion.diff")
local sidecar = require("gemini_companion.sidecar")
local terminal = require("gemini_companion.terminal")
local util = require("gemini_companion.util")

local M = {}

-- What the sidecar last said: CLIs connected and its status line.
local link = { connected = 0, text = nil }
M.link = link

--- A short text for a statusline: the sidecar's own status text while it
--- runs ("Gemini: 1 CLI connected", ...), "Gemini: off", "Gemini: starting".
function M.line()
  local s = sidecar.state
  if s.status == "starting" then
    return "Gemini: starting"
  elseif s.status ~= "running" then
    return "Gemini: off"
  end
  local text = link.text or "Gemini: on"
  local diffs = #diff.paths()
  if diffs > 0 then
    text = text .. string.format(" | %d diff%s", diffs, diffs == 1 and "" or "s")
  end
  return text
end

--- Shows what the sidecar sends for the user: `status` in statuslines,
--- `log` messages as they are.
function M.setup()
  sidecar.on_notification("status", function(params)
    if type(params.connectedClients) == "number" then
      link.connected = params.connectedClients
    end
    if type(params.text) == "string" then
      link.text = params.text
    end
    pcall(vim.cmd, "redrawstatus!")
  end)
  sidecar.on_notification("log", function(params)
    local level = params.level
    if type(params.message) == "string" and util.level(level) and util.level(level) >= util.level(config.options.notify_level) then
      util.notify(params.message, level)
    end
  end)
  sidecar.on_ready(function(up)
    if not up then
      link.connected, link.text = 0, nil
    end
  end)
end

--- The lines :GeminiStatus prints.
function M.lines()
  local s = sidecar.state
  local out = {}
  local function add(fmt, ...)
    table.insert(out, string.format(fmt, ...))
  end
  add("sidecar: %s%s", s.status, s.pid and string.format(" (pid %d, %s)", s.pid, s.path or "?") or "")
  if s.status ~= "running" then
    if s.last_error then
      add("last error: %s", s.last_error)
    end
  else
    local err, st = sidecar.request_sync("status/get", vim.empty_dict(), 2000)
    local info = s.info or {}
    if err or type(st) ~= "table" then
      add("status/get failed: %s", err and err.message or "no result")
      st = {}
    end
    add("version: %s", tostring(st.serverVersion or info.serverVersion or "?"))
    add("port: %s", tostring(st.port or info.port or "?"))
    add("discovery file: %s", (st.discoveryFile or info.discoveryFile or "") ~= "" and (st.discoveryFile or info.discoveryFile) or "(none)")
    add("IDE pid: %s", tostring(st.idePid or info.idePid or "?"))
    local folders = st.workspaceFolders or s.folders or {}
    add("workspace: %s", #folders > 0 and table.concat(folders, ", ") or "(none)")
    add("connected Gemini CLI sessions: %d", tonumber(st.connectedClients) or link.connected)
  end
  local paths = diff.paths()
  add("open diffs: %s", #paths > 0 and table.concat(paths, ", ") or "none")
  add("Gemini CLI terminal: %s", terminal.running() and "running" or "not running")
  return out
end

function M.show()
  local chunks = {}
  for i, l in ipairs(M.lines()) do
    table.insert(chunks, { (i > 1 and "\n" or "") .. l })
  end
  vim.api.nvim_echo(chunks, true, {})
end

return M
