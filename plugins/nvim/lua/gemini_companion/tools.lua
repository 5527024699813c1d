-- The editor tools (docs/editor-tools.md): the sidecar's editor/* requests,
-- answered from what Neovim knows, vim.diagnostic for diagnostics and the
-- language servers attached through vim.lsp for definitions, references,
-- hover, outlines and workspace symbols, plus the open buffers. Positions
-- on the link are 1-based lines and 1-based columns in characters; Neovim
-- counts bytes, and a language server counts UTF-16 units (or whatever its
-- client's offset_encoding says): everything is converted here.
local config = require("gemini_companion.config")
local sidecar = require("gemini_companion.sidecar")
local util = require("gemini_companion.util")

local M = {}

local api = vim.api

-- Error codes of docs/editor-tools.md.
M.NOT_AVAILABLE = -32010
M.DEADLINE_PASSED = -32011
local INVALID_PARAMS = -32602

-- How long a buffer loaded for a request waits for a language server to
-- attach, at most.
local ATTACH_WAIT_MS = 3000

local uv = vim.uv or vim.loop
local has_010 = vim.fn.has("nvim-0.10") == 1
local has_011 = vim.fn.has("nvim-0.11") == 1

---------------------------------------------------------------------------
-- Positions
---------------------------------------------------------------------------

-- Characters (code points) in line; invalid bytes count one each.
local function char_count(line)
  local ok, n = pcall(function()
    if has_011 then
      return vim.str_utfindex(line, "utf-32", #line, false)
    end
    return (vim.str_utfindex(line, #line))
  end)
  if ok and n then
    return n
  end
  local count = 0
  for i = 1, #line do
    local b = line:byte(i)
    if b < 0x80 or b >= 0xC0 then
      count = count + 1
    end
  end
  return count
end

--- The byte offset (0-based) of the character at 0-based index `index` in
--- `encoding` units ("utf-8", "utf-16", "utf-32"; utf-32 counts code
--- points) of line; clamped to the line.
function M.to_byte(line, index, encoding)
  if index <= 0 then
    return 0
  end
  if encoding == "utf-8" then
    return math.min(index, #line)
  end
  local ok, b = pcall(function()
    if has_011 then
      return vim.str_byteindex(line, encoding, index, false)
    end
    return vim.str_byteindex(line, index, encoding == "utf-16")
  end)
  if ok and b then
    return math.min(b, #line)
  end
  -- Past the end (or invalid UTF-8): walk the characters.
  local i, units = 1, 0
  while i <= #line and units < index do
    local n = util.char_len(line, i)
    units = units + ((encoding == "utf-16" and n == 4) and 2 or 1)
    i = i + math.max(n, 1)
  end
  return math.min(i - 1, #line)
end

--- The 0-based index in `encoding` units of byte offset `byte` (0-based) of
--- line; clamped to the line.
function M.from_byte(line, byte, encoding)
  if byte <= 0 then
    return 0
  end
  byte = math.min(byte, #line)
  if encoding == "utf-8" then
    return byte
  end
  if encoding == "utf-16" then
    return util.utf16_col(line, byte)
  end
  return char_count(line:sub(1, byte))
end

-- The text of files, by path, for converting positions: a loaded buffer's
-- lines (unsaved changes included), else the file's.
local function new_texts()
  local cache = {}
  return function(path)
    if cache[path] == nil then
      local buf = M._find_buffer(path)
      local lines
      if buf and api.nvim_buf_is_loaded(buf) then
        lines = api.nvim_buf_get_lines(buf, 0, -1, false)
      else
        local ok, l = pcall(vim.fn.readfile, path)
        lines = ok and l or {}
      end
      cache[path] = lines
    end
    return cache[path]
  end
end

-- A position on the link ({line, character}, 1-based, characters) from a
-- 0-based line and a 0-based index in `encoding` units of lines[row + 1].
local function to_link(lines, row, index, encoding)
  local line = lines[row + 1] or ""
  local byte = M.to_byte(line, index, encoding)
  return { line = row + 1, character = M.from_byte(line, byte, "utf-32") + 1 }
end

local function range_to_link(lines, range, encoding)
  return {
    start = to_link(lines, range.start.line, range.start.character, encoding),
    ["end"] = to_link(lines, range["end"].line, range["end"].character, encoding),
  }
end

---------------------------------------------------------------------------
-- Errors and files
---------------------------------------------------------------------------

local Error = {}
Error.__index = Error
local function fail(code, message)
  error(setmetatable({ code = code, message = message }, Error), 0)
end

local function name_of(path)
  return vim.fn.fnamemodify(path, ":t")
end

-- The buffer for path, or nil when there is none.
function M._find_buffer(path)
  for _, b in ipairs(api.nvim_list_bufs()) do
    local name = api.nvim_buf_get_name(b)
    if name ~= "" and (name == path or util.realpath(name) == path) then
      return b
    end
  end
  return nil
end
local find_buffer = M._find_buffer

-- The loaded buffer for path, loading the file (hidden, unlisted) when it
-- is not; the second value is true when it was loaded now.
local function load_buffer(path)
  local buf = find_buffer(path)
  if buf and api.nvim_buf_is_loaded(buf) then
    return buf, false
  end
  if not util.is_file(path) then
    fail(INVALID_PARAMS, path .. " does not exist")
  end
  buf = buf or vim.fn.bufadd(path)
  vim.fn.bufload(buf)
  return buf, true
end

-- Checks a position of params against the buffer's text.
local function check_position(buf, path, params)
  local count = api.nvim_buf_line_count(buf)
  if params.line > count then
    fail(INVALID_PARAMS, string.format("line %d is past the end of %s (%d lines)", params.line, name_of(path), count))
  end
  local line = api.nvim_buf_get_lines(buf, params.line - 1, params.line, false)[1] or ""
  local chars = char_count(line)
  if params.character > chars + 1 then
    fail(INVALID_PARAMS, string.format("character %d is past the end of line %d of %s (%d characters)",
      params.character, params.line, name_of(path), chars))
  end
  return line
end

local function check_args(params, needs_position)
  if type(params.path) ~= "string" or params.path == "" then
    fail(INVALID_PARAMS, "path is missing")
  end
  if needs_position then
    for _, k in ipairs({ "line", "character" }) do
      if type(params[k]) ~= "number" or params[k] < 1 then
        fail(INVALID_PARAMS, k .. " must be 1 or more")
      end
    end
  end
end

---------------------------------------------------------------------------
-- Language servers
---------------------------------------------------------------------------

local function buf_clients(buf)
  if has_010 then
    return vim.lsp.get_clients({ bufnr = buf })
  end
  return vim.tbl_values(vim.lsp.buf_get_clients(buf))
end

local function all_clients()
  if has_010 then
    return vim.lsp.get_clients()
  end
  return vim.lsp.get_active_clients()
end

local function supports(client, method)
  if has_011 then
    return client:supports_method(method)
  end
  return client.supports_method(method)
end

-- Milliseconds this request may still take, leaving the sidecar time to
-- pass the answer on before its own deadline.
local function budget(started)
  local limit = sidecar.limit("editorRequestTimeoutMs") or 10000
  return math.max(limit - 1500 - (vim.loop.now() - started), 100)
end

local function no_server(path, method)
  local buf = find_buffer(path)
  local ft = buf and api.nvim_buf_get_option(buf, "filetype") or ""
  fail(M.NOT_AVAILABLE, string.format(
    "Neovim has no language server for %s%s that answers %s: configure one with vim.lsp (e.g. nvim-lspconfig)",
    name_of(path), ft ~= "" and (" (filetype " .. ft .. ")") or "", method))
end

-- Waits until cond() holds or ms pass; true when it holds. A request from
-- the sidecar runs in a coroutine (see setup): it yields, and Neovim goes on
-- taking the user's keys; a libuv timer checks cond every `every` ms (or
-- once, at the end, without `every`), and waker.poke(), set here, checks it
-- at once (a language server's answer calls it). Outside a coroutine (a
-- caller that wants the answer now) it is vim.wait.
local function wait(ms, cond, every, waker)
  if cond() then return true end
  local co, main = coroutine.running()
  if not co or main or (coroutine.isyieldable and not coroutine.isyieldable()) then
    return vim.wait(ms, cond, every or 10)
  end
  local deadline, timer, finished = uv.now() + ms, uv.new_timer(), false
  local function check()
    if finished or coroutine.status(co) ~= "suspended" then return end
    local held = cond()
    if held or uv.now() >= deadline then
      finished = true
      timer:stop()
      timer:close()
      local ok, err = coroutine.resume(co, held)
      if not ok then util.notify("editor tools: " .. tostring(err), "error") end
    end
  end
  if waker then waker.poke = check end
  timer:start(every or ms, every or 0, vim.schedule_wrap(check))
  return coroutine.yield()
end

-- The clients attached to buf that answer method, waiting a little for one
-- to attach when the buffer was loaded just now.
local function clients_for(buf, path, method, just_loaded, started)
  local function find()
    local out = {}
    for _, c in ipairs(buf_clients(buf)) do
      if supports(c, method) then
        table.insert(out, c)
      end
    end
    return out
  end
  local found = find()
  if #found == 0 and (just_loaded or #all_clients() > 0) then
    wait(math.min(ATTACH_WAIT_MS, budget(started)), function()
      found = find()
      return #found > 0
    end, 20)
  end
  if #found == 0 then
    no_server(path, method)
  end
  return found
end

-- Sends method to every client, params made by make(client) (positions
-- depend on its encoding), and waits for all answers. Returns a list of
-- {client, result}; fails when every client failed or time ran out.
local function request_all(clients, buf, method, make, started)
  local answers, pending, errors = {}, 0, {}
  local ids, waker = {}, {}
  for _, c in ipairs(clients) do
    local handler = function(err, result)
      pending = pending - 1
      if err then
        table.insert(errors, c.name .. ": " .. tostring(err.message or err))
      else
        table.insert(answers, { client = c, result = result })
      end
      if waker.poke then waker.poke() end
    end
    local ok, id
    if has_011 then
      ok, id = c:request(method, make(c), handler, buf)
    else
      ok, id = c.request(method, make(c), handler, buf)
    end
    if ok then
      pending = pending + 1
      ids[c] = id
    end
  end
  local done = wait(budget(started), function() return pending <= 0 end, nil, waker)
  if not done then
    for c, id in pairs(ids) do
      if has_011 then pcall(c.cancel_request, c, id) else pcall(c.cancel_request, id) end
    end
    if #answers == 0 then
      local names = {}
      for _, c in ipairs(clients) do table.insert(names, c.name) end
      fail(M.DEADLINE_PASSED, string.format("%s did not answer %s in time; it may still be loading the workspace: try again",
        table.concat(names, ", "), method))
    end
  end
  if #answers == 0 and #errors > 0 then
    fail(-32603, method .. " failed: " .. table.concat(errors, "; "))
  end
  return answers
end

local function encoding(client)
  return client.offset_encoding or "utf-16"
end

-- textDocument/* params at params' position, in client's units.
local function position_params(buf, line_text, params)
  return function(client)
    local byte = M.to_byte(line_text, params.character - 1, "utf-32")
    return {
      textDocument = { uri = vim.uri_from_bufnr(buf) },
      position = { line = params.line - 1, character = M.from_byte(line_text, byte, encoding(client)) },
    }
  end
end

---------------------------------------------------------------------------
-- The requests
---------------------------------------------------------------------------

local SEVERITIES = { "error", "warning", "info", "hint" }
local SEVERITY_RANK = { error = 1, warning = 2, info = 3, hint = 4 }

local KINDS = {
  "file", "module", "namespace", "package", "class", "method", "property",
  "field", "constructor", "enum", "interface", "function", "variable",
  "constant", "string", "number", "boolean", "array", "object", "key",
  "null", "enumMember", "struct", "event", "operator", "typeParameter",
}
local function kind_name(k)
  return KINDS[k] or "other"
end

local function max_results(params)
  local n = tonumber(params.maxResults)
  if not n or n <= 0 then
    n = sidecar.limit("maxToolResults") or 200
  end
  return n
end

-- The file a buffer of diagnostics stands for (loaded or not).
local function buffer_path(buf)
  if not api.nvim_buf_is_valid(buf) or api.nvim_buf_get_option(buf, "buftype") ~= "" then
    return nil
  end
  local name = api.nvim_buf_get_name(buf)
  if name == "" or util.is_url(name) then
    return nil
  end
  return util.realpath(name)
end

function M.get_diagnostics(params)
  local min_rank = SEVERITY_RANK[params.severity] or 4
  local list
  if type(params.path) == "string" and params.path ~= "" then
    local buf = find_buffer(params.path)
    list = buf and vim.diagnostic.get(buf) or {}
  else
    list = vim.diagnostic.get()
  end
  local texts, out, paths = new_texts(), {}, {}
  for _, d in ipairs(list) do
    local sev = SEVERITIES[d.severity] or "error"
    if SEVERITY_RANK[sev] <= min_rank then
      if paths[d.bufnr] == nil then
        paths[d.bufnr] = buffer_path(d.bufnr) or false
      end
      local path = paths[d.bufnr]
      if path then
        local lines = texts(path)
        local end_lnum = d.end_lnum or d.lnum
        local end_col = d.end_col or d.col
        local code = d.code
        if code == nil and type(d.user_data) == "table" and type(d.user_data.lsp) == "table" then
          code = d.user_data.lsp.code
        end
        table.insert(out, {
          path = path,
          range = {
            start = to_link(lines, d.lnum, d.col, "utf-8"),
            ["end"] = to_link(lines, end_lnum, end_col, "utf-8"),
          },
          severity = sev,
          source = d.source,
          code = code ~= nil and tostring(code) or nil,
          message = d.message or "",
        })
      end
    end
  end
  table.sort(out, function(a, b)
    if a.severity ~= b.severity then return SEVERITY_RANK[a.severity] < SEVERITY_RANK[b.severity] end
    if a.path ~= b.path then return a.path < b.path end
    if a.range.start.line ~= b.range.start.line then return a.range.start.line < b.range.start.line end
    return a.range.start.character < b.range.start.character
  end)
  local max, truncated = max_results(params), false
  if #out > max then
    out = vim.list_slice(out, 1, max)
    truncated = true
  end
  return { diagnostics = out, truncated = truncated or nil }
end

-- Locations of a definition or references answer (Location, Location[],
-- LocationLink[]) on the link, with each one's first line.
local function locations(answers, max)
  local texts, out, seen, truncated = new_texts(), {}, {}, false
  for _, a in ipairs(answers) do
    local res = a.result
    if type(res) == "table" and (res.uri or res.targetUri) then
      res = { res }
    end
    for _, loc in ipairs(type(res) == "table" and res or {}) do
      local uri = loc.uri or loc.targetUri
      local range = loc.range or loc.targetSelectionRange or loc.targetRange
      if uri and range then
        local path = util.realpath(vim.uri_to_fname(uri))
        local lines = texts(path)
        local r = range_to_link(lines, range, encoding(a.client))
        local key = string.format("%s:%d:%d", path, r.start.line, r.start.character)
        if not seen[key] then
          seen[key] = true
          if #out >= max then
            truncated = true
            break
          end
          table.insert(out, { path = path, range = r, text = lines[r.start.line] })
        end
      end
    end
  end
  return { locations = out, truncated = truncated or nil }
end

local function at_position(method, params, extra)
  check_args(params, true)
  local started = vim.loop.now()
  local buf, just_loaded = load_buffer(params.path)
  local line = check_position(buf, params.path, params)
  local clients = clients_for(buf, params.path, method, just_loaded, started)
  local make = position_params(buf, line, params)
  return request_all(clients, buf, method, function(c)
    return vim.tbl_extend("force", make(c), extra or {})
  end, started)
end

function M.get_definition(params)
  return locations(at_position("textDocument/definition", params), max_results(params))
end

function M.get_references(params)
  local answers = at_position("textDocument/references", params, { context = { includeDeclaration = true } })
  return locations(answers, max_results(params))
end

-- Hover contents (MarkupContent, MarkedString or a list of them) as text.
local function hover_text(contents)
  if type(contents) == "string" then
    return contents
  end
  if type(contents) ~= "table" then
    return ""
  end
  if contents.value then
    if contents.language then
      return "```" .. contents.language .. "\n" .. contents.value .. "\n```"
    end
    return contents.value
  end
  local parts = {}
  for _, c in ipairs(contents) do
    local t = hover_text(c)
    if t ~= "" then table.insert(parts, t) end
  end
  return table.concat(parts, "\n\n")
end

function M.get_hover(params)
  local answers = at_position("textDocument/hover", params)
  local parts, range = {}, nil
  for _, a in ipairs(answers) do
    if type(a.result) == "table" then
      local t = hover_text(a.result.contents)
      if t ~= "" then table.insert(parts, t) end
      if not range and type(a.result.range) == "table" then
        range = range_to_link(new_texts()(params.path), a.result.range, encoding(a.client))
      end
    end
  end
  return { contents = table.concat(parts, "\n\n"), range = range }
end

function M.get_document_symbols(params)
  check_args(params, false)
  local started = vim.loop.now()
  local method = "textDocument/documentSymbol"
  local buf, just_loaded = load_buffer(params.path)
  local clients = clients_for(buf, params.path, method, just_loaded, started)
  local answers = request_all({ clients[1] }, buf, method, function()
    return { textDocument = { uri = vim.uri_from_bufnr(buf) } }
  end, started)
  local lines, enc = new_texts()(params.path), encoding(clients[1])
  local max, count, truncated = max_results(params), 0, false
  local function convert(list)
    local out = {}
    for _, s in ipairs(type(list) == "table" and list or {}) do
      if count >= max then
        truncated = true
        break
      end
      local range = s.range or (s.location and s.location.range)
      if range then
        count = count + 1
        local sym = {
          name = s.name, kind = kind_name(s.kind), detail = (s.detail ~= "" and s.detail) or nil,
          range = range_to_link(lines, range, enc),
        }
        if type(s.children) == "table" and #s.children > 0 then
          sym.children = convert(s.children)
          if #sym.children == 0 then sym.children = nil end
        end
        table.insert(out, sym)
      end
    end
    return out
  end
  local result = answers[1] and answers[1].result or {}
  return { symbols = convert(result), truncated = truncated or nil }
end

function M.search_workspace_symbols(params)
  if type(params.query) ~= "string" then
    fail(INVALID_PARAMS, "query is missing")
  end
  local started = vim.loop.now()
  local method = "workspace/symbol"
  local clients = {}
  for _, c in ipairs(all_clients()) do
    if supports(c, method) then
      table.insert(clients, c)
    end
  end
  if #clients == 0 then
    fail(M.NOT_AVAILABLE, "Neovim has no language server running that searches workspace symbols: "
      .. "open a file of the project with a language server configured through vim.lsp (e.g. nvim-lspconfig)")
  end
  local answers = request_all(clients, nil, method, function() return { query = params.query } end, started)
  local texts, out, truncated, max = new_texts(), {}, false, max_results(params)
  for _, a in ipairs(answers) do
    for _, s in ipairs(type(a.result) == "table" and a.result or {}) do
      local loc = s.location
      if type(loc) == "table" and loc.uri then
        if #out >= max then
          truncated = true
          break
        end
        local path = util.realpath(vim.uri_to_fname(loc.uri))
        local range = loc.range or { start = { line = 0, character = 0 }, ["end"] = { line = 0, character = 0 } }
        table.insert(out, {
          name = s.name, kind = kind_name(s.kind), path = path,
          range = range_to_link(texts(path), range, encoding(a.client)),
          containerName = (s.containerName ~= "" and s.containerName) or nil,
        })
      end
    end
  end
  return { symbols = out, truncated = truncated or nil }
end

-- The selection of the current window in visual mode, or what the context
-- module last reported for it (the user has moved to the CLI's terminal):
-- range and text.
local function selection_of(buf, active)
  if not active then
    return nil, nil
  end
  local context = require("gemini_companion.context")
  local mode = api.nvim_get_mode().mode
  local text
  local p, q
  if util.is_visual(mode) and api.nvim_get_current_buf() == buf then
    p, q = vim.fn.getpos("v"), vim.fn.getpos(".")
    text = context.selected_text and context.selected_text(buf, mode) or nil
  else
    text = context.last_selection and context.last_selection(buf) or nil
    if not text or text == "" then
      return nil, nil
    end
    p, q = api.nvim_buf_get_mark(buf, "<"), api.nvim_buf_get_mark(buf, ">")
    p, q = { 0, p[1], p[2] + 1 }, { 0, q[1], q[2] + 1 }
  end
  if p[2] > q[2] or (p[2] == q[2] and p[3] > q[3]) then
    p, q = q, p
  end
  local lines = api.nvim_buf_get_lines(buf, p[2] - 1, q[2], false)
  if #lines == 0 then
    return nil, text
  end
  local first, last = lines[1], lines[#lines]
  local last_byte = math.min(q[3], #last)
  last_byte = last_byte + math.max(util.char_len(last, last_byte) - 1, 0)
  local range = {
    start = { line = p[2], character = M.from_byte(first, p[3] - 1, "utf-32") + 1 },
    ["end"] = { line = q[2], character = M.from_byte(last, last_byte, "utf-32") + 1 },
  }
  return range, text
end

function M.get_open_editors(params)
  local context = require("gemini_companion.context")
  local current = api.nvim_get_current_buf()
  local active_buf = context.file_of(current) and current or (context.active_buffer and context.active_buffer()) or nil
  local infos = vim.fn.getbufinfo({ buflisted = 1, bufloaded = 1 })
  table.sort(infos, function(a, b) return (a.lastused or 0) > (b.lastused or 0) end)
  local out, max, truncated = {}, max_results(params), false
  local function add(buf)
    local path = context.file_of(buf)
    if not path then return end
    if #out >= max then
      truncated = true
      return
    end
    local active = buf == active_buf
    local cursor
    local win = (buf == current) and api.nvim_get_current_win() or vim.fn.bufwinid(buf)
    local row, col
    if win ~= -1 then
      local c = api.nvim_win_get_cursor(win)
      row, col = c[1], c[2]
    else
      local m = api.nvim_buf_get_mark(buf, '"')
      row, col = math.max(m[1], 1), m[2]
    end
    local line = api.nvim_buf_get_lines(buf, row - 1, row, false)[1] or ""
    cursor = { line = row, character = M.from_byte(line, col, "utf-32") + 1 }
    local sel, text = selection_of(buf, active)
    table.insert(out, {
      path = path, active = active or nil, cursor = cursor, selection = sel,
      selectedText = (text ~= "" and text) or nil,
      dirty = api.nvim_buf_get_option(buf, "modified") or nil,
    })
  end
  if active_buf then add(active_buf) end
  for _, info in ipairs(infos) do
    if info.bufnr ~= active_buf then add(info.bufnr) end
  end
  return { editors = out, truncated = truncated or nil }
end

-- Highlights of editor/openFile's range, cleared when the user moves.
local ns = api.nvim_create_namespace("gemini_companion_open")

-- A window to show a file in: the current one unless it is a terminal or
-- a special or floating window, else the first normal window of the tab,
-- else a new split.
local function target_window()
  local function usable(w)
    local b = api.nvim_win_get_buf(w)
    return api.nvim_win_get_config(w).relative == "" and api.nvim_buf_get_option(b, "buftype") == ""
  end
  local cur = api.nvim_get_current_win()
  if usable(cur) then return cur end
  local prev = vim.fn.win_getid(vim.fn.winnr("#"))
  if prev ~= 0 and usable(prev) then return prev end
  for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
    if usable(w) then return w end
  end
  vim.cmd("aboveleft new")
  local w = api.nvim_get_current_win()
  api.nvim_set_current_win(cur)
  return w
end

function M.open_file(params)
  check_args(params, false)
  local path = params.path
  if not util.is_file(path) then
    fail(INVALID_PARAMS, path .. " does not exist")
  end
  local win = target_window()
  local buf = find_buffer(path) or vim.fn.bufadd(path)
  if not api.nvim_buf_is_loaded(buf) then vim.fn.bufload(buf) end
  api.nvim_buf_set_option(buf, "buflisted", true)
  api.nvim_win_set_buf(win, buf)
  local count = api.nvim_buf_line_count(buf)
  local line = tonumber(params.line)
  if line then
    if line > count then
      fail(INVALID_PARAMS, string.format("line %d is past the end of %s (%d lines)", line, name_of(path), count))
    end
    local last = math.min(math.max(tonumber(params.endLine) or line, line), count)
    api.nvim_win_set_cursor(win, { line, 0 })
    api.nvim_win_call(win, function() vim.cmd("normal! zz") end)
    api.nvim_buf_clear_namespace(buf, ns, 0, -1)
    for l = line, last do
      api.nvim_buf_add_highlight(buf, ns, "Visual", l - 1, 0, -1)
    end
    -- Cleared once the user moves away from where it put the cursor.
    local at = { line, 0 }
    api.nvim_create_autocmd({ "CursorMoved", "InsertEnter", "BufLeave" }, {
      buffer = buf,
      callback = function(args)
        if args.event == "CursorMoved" then
          local c = api.nvim_win_get_cursor(0)
          if c[1] == at[1] and c[2] == at[2] then return end
        end
        pcall(api.nvim_buf_clear_namespace, buf, ns, 0, -1)
        return true
      end,
    })
  end
  return vim.empty_dict()
end

---------------------------------------------------------------------------
-- Wiring
---------------------------------------------------------------------------

M.handlers = {
  ["editor/getDiagnostics"] = { feature = "diagnostics", fn = M.get_diagnostics },
  ["editor/getDefinition"] = { feature = "definition", fn = M.get_definition },
  ["editor/getReferences"] = { feature = "references", fn = M.get_references },
  ["editor/getHover"] = { feature = "hover", fn = M.get_hover },
  ["editor/getDocumentSymbols"] = { feature = "documentSymbols", fn = M.get_document_symbols },
  ["editor/searchWorkspaceSymbols"] = { feature = "workspaceSymbols", fn = M.search_workspace_symbols },
  ["editor/getOpenEditors"] = { feature = "openEditors", fn = M.get_open_editors },
  ["editor/openFile"] = { feature = "openFile", fn = M.open_file },
}

--- Answers one editor/* request: (err, result) as the link sends them.
function M.handle(method, params)
  local h = M.handlers[method]
  if not h then
    return { code = -32601, message = "method not found: " .. tostring(method) }, nil
  end
  local ok, res = xpcall(h.fn, function(e)
    if getmetatable(e) == Error then return e end
    return { code = -32603, message = tostring(e) .. "\n" .. debug.traceback() }
  end, params)
  if not ok then
    return { code = res.code, message = res.message }, nil
  end
  return nil, res
end

--- Declares the editor tools' capabilities (before the sidecar starts) and
--- answers their requests, unless the user turned them off.
function M.setup()
  local on = config.options.tools
  for method, h in pairs(M.handlers) do
    sidecar.capabilities[h.feature] = on
    sidecar.on_request(method, function(params, respond)
      if not config.options.tools then
        return respond({ code = M.NOT_AVAILABLE, message = "the editor tools are off in Neovim (setup{ tools = false })" })
      end
      -- In a coroutine: waiting for a language server yields (see wait),
      -- and the answer goes out when it is ready.
      local co = coroutine.create(function() respond(M.handle(method, params)) end)
      local ok, err = coroutine.resume(co)
      if not ok then respond({ code = -32603, message = tostring(err) }) end
    end)
  end
end

return M
