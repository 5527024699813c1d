-- How a diff view is labelled: readable tab labels ("Gemini: app.py")
-- and, in each diff window's statusline, what it shows and how to answer,
-- so the hint stays visible whatever happens to the message area (a
-- diff that opens while the focus is in the CLI's terminal, say).
local M = {}

local api = vim.api

-- tab handle -> label
local labels = {}

--- The tabline our diff tabs get when the user has none of their own:
--- Neovim's default labels, with "Gemini: <file>" for diff tabs.
function M.tabline()
  local parts = {}
  local current = api.nvim_get_current_tabpage()
  for i, tab in ipairs(api.nvim_list_tabpages()) do
    local hl = tab == current and "%#TabLineSel#" or "%#TabLine#"
    local label = labels[tab]
    if not label or not api.nvim_tabpage_is_valid(tab) then
      labels[tab] = nil
      local win = api.nvim_tabpage_get_win(tab)
      local buf = api.nvim_win_get_buf(win)
      local name = api.nvim_buf_get_name(buf)
      label = name == "" and "[No Name]" or vim.fn.fnamemodify(name, ":t")
      if api.nvim_buf_get_option(buf, "modified") then
        label = "+ " .. label
      end
    end
    table.insert(parts, string.format("%s%%%dT %s ", hl, i, label:gsub("%%", "%%%%")))
  end
  table.insert(parts, "%#TabLineFill#%T")
  return table.concat(parts)
end

-- window -> the pieces of its statusline (set_statusline)
local statuslines = {}

local function esc(s)
  return (s:gsub("%%", "%%%%"))
end

-- The start of s that is at most width cells wide.
local function fit(s, width)
  if vim.fn.strdisplaywidth(s) <= width then
    return s
  end
  local out, used = {}, 0
  for i = 0, vim.fn.strchars(s) - 1 do
    local ch = vim.fn.strcharpart(s, i, 1)
    local w = vim.fn.strdisplaywidth(ch)
    if used + w > width then
      break
    end
    used = used + w
    table.insert(out, ch)
  end
  return table.concat(out)
end

--- Sets a diff window's statusline: pieces, in order, each a string or
--- { string, warn = true } (in warning colours), and the line position at
--- the right. A window too narrow for it all shows as much as fits from
--- the left: put what the user must see (the keys that answer) first.
function M.set_statusline(win, pieces)
  for w in pairs(statuslines) do
    if not api.nvim_win_is_valid(w) then
      statuslines[w] = nil
    end
  end
  statuslines[win] = pieces
  pcall(api.nvim_win_set_option, win, "statusline", "%!v:lua.require'gemini_companion.layout'.statusline()")
end

--- The statusline of the window being drawn (g:statusline_winid), as
--- set_statusline() says.
function M.statusline()
  local win = vim.g.statusline_winid or api.nvim_get_current_win()
  local pieces = statuslines[win]
  if not pieces or not api.nvim_win_is_valid(win) then
    return ""
  end
  local pos = string.format("%d/%d ", api.nvim_win_get_cursor(win)[1], api.nvim_buf_line_count(api.nvim_win_get_buf(win)))
  local room = api.nvim_win_get_width(win) - 1 - #pos - 1
  local out = { "%#StatusLine# " }
  for _, piece in ipairs(pieces) do
    local text = type(piece) == "table" and piece[1] or piece
    local part = fit(text, math.max(room, 0))
    room = room - vim.fn.strdisplaywidth(part)
    if part ~= "" then
      table.insert(out, type(piece) == "table" and piece.warn and ("%#WarningMsg#" .. esc(part) .. "%#StatusLine#") or esc(part))
    end
  end
  table.insert(out, "%=" .. pos)
  return table.concat(out)
end

--- Labels a diff view's tab (diff.lua sets its windows' statuslines).
function M.label(tab, path)
  if tab then
    labels[tab] = "Gemini: " .. vim.fn.fnamemodify(path, ":t")
    if vim.o.tabline == "" or vim.o.tabline == "%!v:lua.require'gemini_companion.layout'.tabline()" then
      vim.o.tabline = "%!v:lua.require'gemini_companion.layout'.tabline()"
    end
  end
end

--- Opens buf in a new window on the left of the current tab, for a diff
--- laid out as a vertical split beside the user's windows. Terminal
--- windows keep their width.
function M.open_split(buf)
  for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
    if api.nvim_buf_get_option(api.nvim_win_get_buf(w), "buftype") == "terminal" then
      api.nvim_win_set_option(w, "winfixwidth", true)
    end
  end
  vim.cmd("topleft vertical sbuffer " .. buf)
end

--- Shows the Gemini CLI's terminal in the diff tab too, with the size it
--- has in the tab it came from. Neovim 0.7 sizes a terminal by the windows
--- of the current tab; without a window there it is resized to the whole
--- screen while the diff is shown, and the CLI's screen comes back
--- garbled. Leaves the focus in keep_win.
function M.keep_terminal_size(origin_tab, keep_win)
  local ok, terminal = pcall(require, "gemini_companion.terminal")
  if not ok or not terminal.running() then
    return
  end
  local buf = terminal.term.buf
  local src
  for _, w in ipairs(vim.fn.win_findbuf(buf)) do
    if api.nvim_win_get_tabpage(w) == origin_tab and api.nvim_win_get_config(w).relative == "" then
      src = w
    end
  end
  if not src then
    return
  end
  local width, height = api.nvim_win_get_width(src), api.nvim_win_get_height(src)
  local position = require("gemini_companion.config").options.terminal.position
  local cmds = { left = "topleft vsplit", bottom = "botright split", top = "topleft split" }
  vim.cmd((cmds[position] or "botright vsplit"))
  local win = api.nvim_get_current_win()
  api.nvim_win_set_buf(win, buf)
  api.nvim_win_set_option(win, "diff", false)
  if position == "bottom" or position == "top" then
    api.nvim_win_set_height(win, height)
  else
    api.nvim_win_set_width(win, width)
  end
  if api.nvim_win_is_valid(keep_win) then
    api.nvim_set_current_win(keep_win)
  end
end

return M
