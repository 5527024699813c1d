-- The agent panel: Neovim as an A2A client of Gemini CLI's agent, through
-- the sidecar's agent/* methods (docs/agent-panel.md). The sidecar decides
-- everything protocol-wise; this module shows its agent/event notifications
-- in the panel and sends the user's prompts and answers. A file edit comes
-- as the usual diff view (gemini_companion.diff): :w approves, :q denies.
local panel = require("gemini_companion.agent.panel")
local sidecar = require("gemini_companion.sidecar")
local util = require("gemini_companion.util")

local M = {}

-- How a user sets the server command here; the sidecar names it in its
-- errors (server not found, server exited).
local COMMAND_OPTION = 'the command option: require("gemini_companion.agent").setup({ command = { "node", "/path/to/a2a-server.mjs" } })'

local defaults = {
  -- Server command (list); nil: the sidecar finds gemini-cli-a2a-server.
  command = nil,
  -- URL of a running A2A server to attach to instead of starting one.
  url = nil,
  -- Width of the panel's split.
  width = 80,
  -- Send the editor's context (open files, cursor, selection) with prompts.
  context = true,
}

M.options = vim.deepcopy(defaults)
-- How a user sets the server command, for the sidecar's advice.
M.COMMAND_OPTION = COMMAND_OPTION

local st = {
  ready = false, -- the sidecar said "ready" for the current sidecar process
  attached = false, -- ready was seen once: resume after a sidecar restart
  url = nil,
  pid = nil,
  task_id = nil,
  context_id = nil,
  command_names = {}, -- "memory", "memory show", ...
  pending = {}, -- toolCallId -> tool (RFC ToolCall) waiting for the user
  queued = nil, -- a prompt typed before the agent was ready
}
M.state = st

--- Sets the panel's options (all optional); raises on a wrong type.
function M.setup(opts)
  opts = opts or {}
  vim.validate({
    command = { opts.command, "table", true },
    url = { opts.url, "string", true },
    width = { opts.width, "number", true },
    context = { opts.context, "boolean", true },
  })
  M.options = vim.tbl_extend("force", vim.deepcopy(defaults), opts)
end

local function show_error(msg)
  panel.append({ "! " .. msg })
  util.notify(msg, "error")
end

local function on_answer(err)
  if err then
    show_error(err.message or tostring(err))
  end
end

local function request_start()
  panel.set_status(st.attached and "reconnecting" or "starting")
  -- An object even when every field is nil (default settings): an empty
  -- Lua table would go out as [].
  local params = vim.empty_dict()
  params.command = M.options.command
  params.url = st.url or M.options.url
  params.pid = st.pid
  params.taskId = st.task_id
  params.contextId = st.context_id
  params.commandOption = COMMAND_OPTION
  sidecar.request("agent/start", params, on_answer)
end

local function with_sidecar(fn)
  if sidecar.running() then
    fn()
    return
  end
  require("gemini_companion").start(function(err)
    if err then
      show_error("the sidecar did not start: " .. (type(err) == "table" and (err.message or vim.inspect(err)) or tostring(err)))
      return
    end
    fn()
  end)
end

local function flatten(cmds, out)
  for _, c in ipairs(cmds or {}) do
    if type(c.name) == "string" then
      table.insert(out, c.name)
    end
    flatten(c.subCommands, out)
  end
  return out
end

local function fetch_commands()
  sidecar.request("agent/listCommands", vim.empty_dict(), function(err, res)
    if not err and res and type(res.commands) == "table" then
      st.command_names = flatten(res.commands, {})
      table.sort(st.command_names)
    end
  end)
end

-- The arguments of a call, as JSON cut to a line's worth.
local function arguments(params)
  if type(params) ~= "table" or next(params) == nil then
    return ""
  end
  local ok, text = pcall(vim.fn.json_encode, params)
  if not ok then
    return ""
  end
  if #text > 200 then
    text = text:sub(1, 199) .. "…"
  end
  return " with " .. text
end

--- What a confirmation asks, in words, on one line.
function M.describe(tool)
  local cr = tool.confirmationRequest or {}
  local text
  if cr.executeDetails then
    text = "run `" .. cr.executeDetails.command .. "`"
  elseif cr.fileEditDetails then
    text = "edit " .. vim.fn.fnamemodify(cr.fileEditDetails.filePath, ":~:.")
  elseif cr.mcpDetails then
    -- An MCP tool does whatever its server makes of the arguments: show them.
    text = ("call %s of MCP server %s"):format(cr.mcpDetails.toolName, cr.mcpDetails.serverName)
      .. arguments(tool.inputParameters)
  elseif cr.genericDetails then
    local g = cr.genericDetails
    if type(g.urls) == "table" and #g.urls > 0 then
      text = "fetch " .. table.concat(g.urls, ", ")
    else
      text = tostring(g.description)
    end
  else
    text = "use " .. tostring(tool.toolName)
  end
  return (text:gsub("%s*\n%s*", " — "))
end

--- Asks the user to answer a pending tool call (allow once / always / deny).
function M.ask(id)
  local tool = st.pending[id]
  if not tool then
    util.notify("that tool call waits for no answer", "warn")
    return
  end
  local options = tool.confirmationRequest.options or {}
  vim.ui.select(options, {
    prompt = "Gemini agent wants to " .. M.describe(tool) .. ":",
    format_item = function(o)
      return o.name
    end,
  }, function(choice)
    if not choice then
      util.notify("not answered; <CR> on its line in the agent panel asks again", "warn")
      return
    end
    if st.pending[id] then
      sidecar.request("agent/confirm", { callId = id, outcome = choice.id }, on_answer)
    end
  end)
end

local icons = { PENDING = "…", EXECUTING = "▶", SUCCEEDED = "✓", FAILED = "✗", CANCELLED = "⊘" }

local function show_tool(tool)
  local id = tool.toolCallId
  local detail = ""
  local params = tool.inputParameters or {}
  if type(params.file_path) == "string" then
    detail = vim.fn.fnamemodify(params.file_path, ":~:.")
  elseif type(params.command) == "string" then
    detail = params.command
  elseif type(tool.description) == "string" then
    detail = tool.description
  end
  local line = ("%s %s %s  [%s]"):format(icons[tool.status] or "•", tool.toolName or "tool", detail, tool.status or "?")
  if tool.confirmationRequest then
    st.pending[id] = tool
    if tool.diffShown then
      line = line .. "  review the diff: :w approves (with your edits), :q denies"
    else
      line = line .. "  waits for you (<CR> here answers)"
      vim.schedule(function()
        M.ask(id)
      end)
    end
  else
    st.pending[id] = nil
  end
  panel.set_tool(id, (line:gsub("\n", " ")))
end

local state_text = {
  working = "working…",
  waiting = "waiting for you",
  idle = "ready",
  canceled = "canceled",
  failed = "failed",
  stopped = "stopped (:GeminiAgent starts it again)",
}

local handlers = {}

function handlers.ready(ev)
  if type(ev.agent) ~= "table" then
    return
  end
  local first = not st.attached
  st.ready, st.attached = true, true
  st.url, st.pid = ev.agent.url, ev.agent.pid
  panel.set_status("ready")
  if first then
    panel.append({ ("Connected to %s at %s."):format(ev.agent.name or "the agent", ev.agent.url) })
  end
  fetch_commands()
  if st.queued then
    local text = st.queued
    st.queued = nil
    M.prompt(text)
  end
end

function handlers.reset(ev)
  panel.clear()
  st.pending = {}
  st.task_id, st.context_id = ev.taskId, ev.contextId
end

function handlers.user(ev)
  local lines = vim.split(ev.text or "", "\n", { plain = true })
  lines[1] = "You: " .. lines[1]
  table.insert(lines, 1, "")
  panel.append(lines)
end

function handlers.text(ev)
  panel.add_text(ev.text or "")
end

function handlers.thought(ev)
  local t = ev.thought or {}
  panel.add_thought(t.subject or "", t.description or "")
end

function handlers.tool(ev)
  if type(ev.tool) == "table" and type(ev.tool.toolCallId) == "string" then
    show_tool(ev.tool)
  end
end

function handlers.state(ev)
  if ev.taskId and ev.taskId ~= "" then
    st.task_id = ev.taskId
  end
  if ev.contextId and ev.contextId ~= "" then
    st.context_id = ev.contextId
  end
  if ev.state == "canceled" or ev.state == "failed" or ev.state == "stopped" then
    st.task_id = nil
    st.pending = {}
  end
  if ev.state == "stopped" then
    -- The server is gone: :GeminiAgent starts a new one.
    st.ready, st.attached, st.url, st.pid = false, false, nil, nil
  end
  panel.set_status(state_text[ev.state] or ev.state)
  if ev.state == "canceled" then
    panel.append({ "— canceled —" })
    if ev.text and ev.text ~= "" then
      -- What cancel stopped, or what still runs because it could not.
      panel.append({ "• " .. ev.text })
    end
  elseif ev.state == "failed" and ev.text and ev.text ~= "" then
    panel.append({ "! " .. ev.text })
  end
end

function handlers.notice(ev)
  panel.append({ "• " .. (ev.text or "") })
end

function handlers.error(ev)
  show_error(ev.text or "unknown error")
end

function handlers.command(ev)
  local data = ev.data
  if type(data) ~= "string" then
    data = vim.inspect(data)
  end
  panel.append(vim.list_extend({ "/" .. (ev.command or "") .. ":" }, vim.split(data, "\n", { plain = true })))
end

sidecar.on_notification("agent/event", function(ev)
  if type(ev) ~= "table" or type(ev.type) ~= "string" then
    return
  end
  local h = handlers[ev.type]
  if h then
    h(ev)
  end
end)

sidecar.on_ready(function(up)
  if not up then
    if st.attached then
      st.ready = false
      panel.set_status("sidecar stopped; resuming when it is back")
    end
    return
  end
  if st.attached then
    request_start()
  end
end)

local function keymaps(buf)
  local function map(lhs, fn, desc)
    vim.keymap.set("n", lhs, fn, { buffer = buf, desc = desc, nowait = true })
  end
  map("i", M.input, "Prompt the Gemini agent")
  map("a", M.input, "Prompt the Gemini agent")
  map("<CR>", function()
    local id = panel.tool_at_cursor()
    if id and st.pending[id] then
      M.ask(id)
    end
  end, "Answer the tool call on this line")
  map("<C-c>", M.cancel, "Cancel the agent's turn")
  map("q", function()
    local win = panel.win()
    if win and #vim.api.nvim_tabpage_list_wins(0) > 1 then
      vim.api.nvim_win_close(win, false)
    end
  end, "Close the agent panel")
end

--- Opens the panel and connects it to the agent (starting what is needed).
function M.open()
  local first = not panel.win() and not st.attached
  panel.open(M.options.width)
  keymaps(panel.buf())
  if first or not st.ready then
    with_sidecar(function()
      if not st.ready then
        request_start()
      end
    end)
  end
end

--- Sends text to the agent; "/name args" runs a slash command.
function M.prompt(text)
  text = vim.trim(text or "")
  if text == "" then
    return
  end
  if not panel.win() then
    M.open()
  end
  if not st.ready then
    st.queued = text
    return
  end
  if text:sub(1, 1) == "/" then
    M.run_command(text:sub(2))
    return
  end
  if M.options.context then
    -- Report the cursor and selection of the file window the prompt comes
    -- from before the prompt itself (same pipe, so the sidecar has them).
    pcall(require("gemini_companion.context").flush)
  end
  sidecar.request("agent/prompt", { text = text, context = M.options.context }, on_answer)
end

--- Runs a slash command: the longest known command name that starts the
--- text, and the rest as its arguments.
function M.run_command(text)
  local name, args = text:match("^(%S+)%s*(.*)$")
  for _, known in ipairs(st.command_names) do
    if (text == known or vim.startswith(text, known .. " ")) and #known > #name then
      name, args = known, vim.trim(text:sub(#known + 1))
    end
  end
  panel.append({ "", "You: /" .. text })
  sidecar.request("agent/runCommand", { command = name or text, args = args or "" }, on_answer)
end

--- Asks for a prompt in the command line.
function M.input()
  vim.ui.input({ prompt = "Gemini agent> " }, function(text)
    if text then
      M.prompt(text)
    end
  end)
end

--- Cancels the agent's current turn.
function M.cancel()
  sidecar.request("agent/cancel", vim.empty_dict(), on_answer)
end

--- Completes :GeminiAgent /commands (and their subcommands).
function M.complete(arglead, cmdline)
  local typed = cmdline:match("^%s*%S+%s+(.*)$") or ""
  if typed:sub(1, 1) ~= "/" then
    return {}
  end
  local out, seen = {}, {}
  for _, name in ipairs(st.command_names) do
    local cand = "/" .. name
    if vim.startswith(cand, typed) then
      local word = cand:sub(#typed - #arglead + 1):match("^%S+")
      if word and not seen[word] then
        seen[word] = true
        table.insert(out, word)
      end
    end
  end
  return out
end

return M
