-- :checkhealth gemini_companion
local binary = require("gemini_companion.binary")
local config = require("gemini_companion.config")
local sidecar = require("gemini_companion.sidecar")
local util = require("gemini_companion.util")

local M = {}

local uv = vim.uv or vim.loop

-- Neovim 0.10+ has vim.health.start/ok/..., 0.8-0.9 vim.health.report_*,
-- 0.7 only the Vimscript health#report_* functions.
local function reporter(name)
  local h = vim.health
  if h and h[name] then
    return h[name]
  end
  if h and h["report_" .. name] then
    return h["report_" .. name]
  end
  return function(msg, advice)
    if advice then
      vim.fn["health#report_" .. name](msg, advice)
    else
      vim.fn["health#report_" .. name](msg)
    end
  end
end

local start = reporter("start")
local ok = reporter("ok")
local warn = reporter("warn")
local error = reporter("error")
local info = reporter("info")

-- True when something accepts TCP connections on 127.0.0.1:port.
local function port_answers(port)
  local tcp = uv.new_tcp()
  local done, failure = false, nil
  local okc = pcall(tcp.connect, tcp, "127.0.0.1", port, function(err)
    done, failure = true, err
  end)
  if not okc then
    tcp:close()
    return false, "cannot connect"
  end
  vim.wait(2000, function()
    return done
  end, 10)
  if not tcp:is_closing() then
    tcp:close()
  end
  if not done then
    return false, "no answer in 2 s"
  end
  return failure == nil, failure
end

-- Runs `gemini-ide-companion doctor --json` with the environment a CLI
-- opened by :GeminiCli gets, so its findings are about that CLI.
local function doctor(path)
  local env = {}
  for k, v in pairs(sidecar.env() or {}) do
    table.insert(env, k .. "=" .. v)
  end
  for k, v in pairs(config.options.terminal.env or {}) do
    table.insert(env, k .. "=" .. v)
  end
  local cmd = { path, "doctor", "--json", "--workspace", util.cwd() }
  if #env > 0 and vim.fn.executable("env") == 1 then
    cmd = vim.list_extend(vim.list_extend({ "env" }, env), cmd)
  end
  local out = vim.fn.system(cmd)
  local okj, report = pcall(vim.json.decode, out)
  if not okj or type(report) ~= "table" or type(report.findings) ~= "table" then
    return nil, "doctor gave no report: " .. vim.trim(out)
  end
  return report
end

-- Reports the findings of a doctor run, each at its level.
local function report_findings(findings)
  for _, f in ipairs(findings) do
    local msg = tostring(f.check) .. ": " .. tostring(f.message)
    local advice = (f.fix and f.fix ~= "") and { f.fix } or nil
    if f.level == "ok" then
      ok(msg)
    elseif f.level == "info" then
      info(msg .. (advice and (" (" .. advice[1] .. ")") or ""))
    elseif f.level == "warn" then
      warn(msg, advice)
    else
      error(msg, advice)
    end
  end
end

-- The agent panel: what the sidecar needs to start Gemini CLI's A2A server
-- here (node, the server and its version, the folder of its secret), as
-- `gemini-ide-companion doctor --agent` finds it with the panel's options.
local function report_agent(path)
  start("gemini_companion: agent panel (:GeminiAgent)")
  if not path then
    warn("no sidecar binary, so the agent panel cannot be checked")
    return
  end
  local agent = require("gemini_companion.agent")
  local opts = agent.options or {}
  if opts.url then
    info("url is set: the panel attaches to " .. opts.url .. " and starts no server")
  end
  local cmd = { path, "doctor", "--agent", "--json", "--workspace", util.cwd(), "--agent-setting", agent.COMMAND_OPTION }
  if opts.command then
    vim.list_extend(cmd, { "--agent-command", vim.json.encode(opts.command) })
  end
  local out = vim.fn.system(cmd)
  local okj, report = pcall(vim.json.decode, out)
  if not okj or type(report) ~= "table" or type(report.findings) ~= "table" then
    warn("doctor --agent gave no report: " .. vim.trim(out))
    return
  end
  report_findings(report.findings)
  if report.canStart then
    ok(":GeminiAgent can start Gemini CLI's A2A server here")
  elseif not opts.url then
    error(":GeminiAgent cannot start Gemini CLI's A2A server here; see the errors above")
  end
end

local function report_doctor(path)
  start("gemini_companion: doctor (would a gemini started by :GeminiCli connect?)")
  if not path then
    warn("no sidecar binary, so no doctor")
    return
  end
  local report, err = doctor(path)
  if not report then
    warn(err)
    return
  end
  report_findings(report.findings)
  if report.wouldConnect then
    ok("a gemini started by :GeminiCli here would connect")
  else
    error("a gemini started by :GeminiCli here would not connect; see the errors above")
  end
end

function M.check()
  start("gemini_companion: setup")
  if vim.fn.has("nvim-0.7") == 1 then
    ok("Neovim " .. tostring(vim.version().major) .. "." .. tostring(vim.version().minor) .. "." .. tostring(vim.version().patch))
  else
    error("Neovim 0.7 or newer is needed")
  end
  if require("gemini_companion").did_setup then
    ok("setup() was called")
  else
    warn("setup() has not been called; defaults are used", { 'Call require("gemini_companion").setup({}) in your config.' })
  end

  start("gemini_companion: sidecar binary")
  local path, reason = binary.find(config.options)
  if path then
    ok("found " .. path)
    local out = vim.fn.system({ path, "--version" })
    if vim.v.shell_error == 0 then
      ok("version: " .. vim.trim(out))
    else
      error(path .. " --version failed: " .. vim.trim(out))
    end
    if vim.fn.system({ path, "--help" }):find("--framing", 1, true) then
      ok("it speaks the editor link with Content-Length framing (--framing=lsp)")
    else
      error("this build predates the editor link v2 (no --framing=lsp), so the plugin cannot talk to it", {
        "Rebuild it: :lua require('gemini_companion').build(), or your plugin manager's build step",
      })
    end
  else
    local why = binary.cannot_build()
    if config.options.sidecar.cmd == nil and config.options.sidecar.build and not why then
      warn(reason, { "It will be built with `go build` on first use, or run :lua require('gemini_companion').build()" })
    else
      error(reason, { "Set sidecar.cmd in setup(), put gemini-ide-companion on PATH, or install Go to build it", why })
    end
  end

  start("gemini_companion: sidecar process")
  local s = sidecar.state
  if s.status ~= "running" then
    local advice = { "Run :GeminiStart" }
    if s.last_error then
      table.insert(advice, 1, "last error: " .. s.last_error)
    end
    warn("the sidecar is " .. s.status, advice)
  else
    ok(string.format("running (pid %s)", tostring(s.pid)))
    local i = s.info or {}
    if i.protocolVersion == 2 then
      ok("editor link: protocol 2, Content-Length framing")
    else
      warn("the sidecar speaks editor link protocol " .. tostring(i.protocolVersion or 1) .. ", not 2", { "Rebuild gemini-ide-companion from this checkout" })
    end
    local r = sidecar.policy().restart
    info(string.format("restart policy (from the sidecar): at most %s restarts within %s s", tostring(r.maxRestarts), tostring((r.windowMs or 0) / 1000)))
    local line = require("gemini_companion.status").line()
    info("status: " .. line)
    if type(i.discoveryFile) == "string" and i.discoveryFile ~= "" then
      if util.is_file(i.discoveryFile) then
        ok("discovery file present: " .. i.discoveryFile)
      else
        error("discovery file is missing: " .. i.discoveryFile, { "Run :GeminiRestart" })
      end
    else
      warn("no discovery file (the sidecar could not use the discovery directory); terminals opened with :GeminiCli still connect")
    end
    if type(i.port) == "number" then
      local answers, err = port_answers(i.port)
      if answers then
        ok(string.format("port %d answers", i.port))
      else
        error(string.format("port %d does not answer: %s", i.port, tostring(err)), { "Run :GeminiRestart" })
      end
    else
      error("the sidecar reported no port")
    end
    local err, st = sidecar.request_sync("status/get", vim.empty_dict(), 2000)
    if err or type(st) ~= "table" then
      warn("status/get failed: " .. (err and err.message or "no result"))
    else
      info(string.format("connected Gemini CLI sessions: %s", tostring(st.connectedClients)))
    end
  end

  report_doctor(path)
  report_agent(path)

  start("gemini_companion: Gemini CLI")
  local cmd = config.options.terminal.cmd
  local exe = type(cmd) == "table" and cmd[1] or vim.split(cmd, " ", { plain = true })[1]
  if vim.fn.executable(exe) == 1 then
    ok("terminal.cmd runs " .. vim.fn.exepath(exe))
  else
    warn("'" .. exe .. "' (terminal.cmd) is not an executable", { "Install Gemini CLI: npm install -g @google/gemini-cli", "or set terminal.cmd in setup()" })
  end
  local in_container = util.is_file("/.dockerenv") or util.is_file("/run/.containerenv")
  if in_container and not vim.env.SSH_CONNECTION and not vim.env.REMOTE_CONTAINERS then
    info(
      "Neovim runs in a container: terminals of :GeminiCli get REMOTE_CONTAINERS=1 from the sidecar so that the CLI connects to 127.0.0.1. "
        .. "A CLI started elsewhere in this container needs REMOTE_CONTAINERS=1 (or SSH_CONNECTION) too."
    )
  end
end

return M
