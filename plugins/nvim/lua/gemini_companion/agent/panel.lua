-- The agent panel's buffer and window: the conversation as it streams in.
-- Only rendering lives here; what to do with events is agent/init.lua's.
local M = {}

local api = vim.api

local BUF_NAME = "gemini://agent"

local state = {
  buf = nil,
  text_start = nil, -- first line of the agent text streaming in, or nil
  text = "", -- that text so far
  tool_lines = {}, -- toolCallId -> line (0-based)
  status = "not started",
}

local function valid()
  return state.buf and api.nvim_buf_is_valid(state.buf)
end

local function ensure_buf()
  if valid() then
    return state.buf
  end
  local buf = api.nvim_create_buf(false, true)
  api.nvim_buf_set_name(buf, BUF_NAME)
  api.nvim_buf_set_option(buf, "buftype", "nofile")
  api.nvim_buf_set_option(buf, "bufhidden", "hide")
  api.nvim_buf_set_option(buf, "swapfile", false)
  api.nvim_buf_set_option(buf, "modifiable", false)
  api.nvim_buf_set_option(buf, "filetype", "gemini-agent")
  state.buf = buf
  state.text_start, state.text, state.tool_lines = nil, "", {}
  return buf
end

--- The panel's buffer (created if needed).
function M.buf()
  return ensure_buf()
end

--- The window showing the panel in the current tab, or nil.
function M.win()
  if not valid() then
    return nil
  end
  for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
    if api.nvim_win_get_buf(w) == state.buf then
      return w
    end
  end
  return nil
end

local function set_win_options(win)
  api.nvim_win_set_option(win, "wrap", true)
  api.nvim_win_set_option(win, "linebreak", true)
  api.nvim_win_set_option(win, "number", false)
  api.nvim_win_set_option(win, "foldmethod", "expr")
  -- Thought descriptions (lines starting with "  │") fold under their subject.
  api.nvim_win_set_option(win, "foldexpr", [[getline(v:lnum)=~'^  │'?1:0]])
  api.nvim_win_set_option(win, "foldlevel", 0)
  api.nvim_win_set_option(win, "foldminlines", 0) -- one-line descriptions fold too
  api.nvim_win_set_option(win, "foldenable", true)
  M.redraw_status()
end

--- Shows the panel in a split on the right (or focuses it); returns its window.
function M.open(width)
  local buf = ensure_buf()
  local win = M.win()
  if not win then
    vim.cmd("botright vsplit")
    win = api.nvim_get_current_win()
    api.nvim_win_set_buf(win, buf)
    if width then
      api.nvim_win_set_width(win, width)
    end
  end
  set_win_options(win)
  api.nvim_set_current_win(win)
  return win
end

local function with_modifiable(fn)
  local buf = ensure_buf()
  api.nvim_buf_set_option(buf, "modifiable", true)
  local ok, err = pcall(fn, buf)
  api.nvim_buf_set_option(buf, "modifiable", false)
  if not ok then
    error(err)
  end
end

local function scroll_to_end()
  local win = M.win()
  if win then
    api.nvim_win_set_cursor(win, { api.nvim_buf_line_count(state.buf), 0 })
  end
end

local function is_empty(buf)
  return api.nvim_buf_line_count(buf) == 1 and api.nvim_buf_get_lines(buf, 0, 1, false)[1] == ""
end

--- Appends lines (a string with newlines, or a list); ends a text block.
function M.append(lines)
  if type(lines) == "string" then
    lines = vim.split(lines, "\n", { plain = true })
  end
  state.text_start, state.text = nil, ""
  local first
  with_modifiable(function(buf)
    if is_empty(buf) then
      first = 0
      api.nvim_buf_set_lines(buf, 0, -1, false, lines)
    else
      first = api.nvim_buf_line_count(buf)
      api.nvim_buf_set_lines(buf, -1, -1, false, lines)
    end
  end)
  scroll_to_end()
  return first
end

--- Adds a chunk of the agent's streamed text.
function M.add_text(chunk)
  local buf = ensure_buf()
  if not state.text_start then
    M.append({ "Gemini:" })
    state.text_start = api.nvim_buf_line_count(buf)
    state.text = ""
  end
  state.text = state.text .. chunk
  local start = state.text_start
  with_modifiable(function(b)
    api.nvim_buf_set_lines(b, start, -1, false, vim.split(state.text, "\n", { plain = true }))
  end)
  scroll_to_end()
end

--- Shows a thought: its subject, and its description folded under it.
function M.add_thought(subject, description)
  local lines = { "∴ " .. (subject ~= "" and subject or "Thinking") }
  for _, l in ipairs(vim.split(description or "", "\n", { plain = true })) do
    if l ~= "" then
      table.insert(lines, "  │ " .. l)
    end
  end
  local first = M.append(lines)
  local win = M.win()
  if win and #lines > 1 then
    -- A fold made by new lines starts open; close this one.
    api.nvim_win_call(win, function()
      pcall(vim.cmd, ("%dfoldclose"):format(first + 2))
    end)
  end
end

--- Shows a tool call, or updates its line in place.
function M.set_tool(id, line)
  local at = state.tool_lines[id]
  if at and valid() and at < api.nvim_buf_line_count(state.buf) then
    with_modifiable(function(buf)
      api.nvim_buf_set_lines(buf, at, at + 1, false, { line })
    end)
    return
  end
  state.tool_lines[id] = M.append({ line })
end

--- The toolCallId whose line the cursor is on in the panel, or nil.
function M.tool_at_cursor()
  if not valid() or api.nvim_get_current_buf() ~= state.buf then
    return nil
  end
  local row = api.nvim_win_get_cursor(0)[1] - 1
  for id, at in pairs(state.tool_lines) do
    if at == row then
      return id
    end
  end
  return nil
end

--- Empties the panel (before a replay of the conversation).
function M.clear()
  with_modifiable(function(buf)
    api.nvim_buf_set_lines(buf, 0, -1, false, {})
  end)
  state.text_start, state.text, state.tool_lines = nil, "", {}
end

--- Sets what the panel's statusline says about the agent.
function M.set_status(text)
  state.status = text
  M.redraw_status()
end

function M.redraw_status()
  local win = M.win()
  if win then
    local s = ("Gemini agent: %s  (i: prompt  <CR>: answer  <C-c>: cancel)"):format(state.status):gsub("%%", "%%%%")
    pcall(api.nvim_win_set_option, win, "statusline", s)
  end
  if valid() then
    pcall(api.nvim_buf_set_var, state.buf, "gemini_agent_status", state.status)
  end
end

--- The panel's lines (for :checkhealth-style reports and tests).
function M.lines()
  if not valid() then
    return {}
  end
  return api.nvim_buf_get_lines(state.buf, 0, -1, false)
end

return M
