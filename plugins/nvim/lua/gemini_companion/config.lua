-- Options: defaults, validation and the merged result other modules read.
local M = {}

M.defaults = {
  -- Start the sidecar when Neovim starts (true) or on the first command
  -- that needs it (false).
  auto_start = true,
  -- trusted (nil by default): workspace trust to report to the CLI. true
  -- or false overrides the CLI's own folder-trust prompt; nil reports none,
  -- so the CLI asks the user itself. Neovim has no trust model of its own.
  sidecar = {
    -- Path of the gemini-ide-companion binary. nil: look in build_dir, then
    -- on PATH, then build it from this checkout with `go build`.
    cmd = nil,
    -- Build the binary from the checkout when it is not found.
    build = true,
    -- Where the built binary goes; nil: <plugin dir>/bin.
    build_dir = nil,
    -- Sidecar log level (debug, info, warn, error) and optional log file.
    log_level = "warn",
    log_file = nil,
    -- At most this many restarts of a sidecar that dies, within the
    -- sidecar's restart window (nil: as many as the sidecar's policy says;
    -- 0 disables restarting). Lowers the policy's number, never raises it.
    max_restarts = nil,
  },
  terminal = {
    -- The Gemini CLI command: a list (run directly) or a string (run by
    -- 'shell'). Arguments of :GeminiCli are appended.
    cmd = { "gemini" },
    -- "right", "left", "bottom", "top", "float" or "tab".
    position = "right",
    -- Split size: a fraction of the editor (< 1) or a number of cells.
    size = 0.4,
    float = { width = 0.85, height = 0.85, border = "rounded" },
    -- Enter terminal mode when the terminal is focused.
    start_insert = true,
    -- Extra environment variables for the CLI.
    env = {},
  },
  diff = {
    -- Jump to the diff tab when a diff opens (false: stay, and get a message).
    focus = true,
    -- When a diff opens while the focus is in the Gemini CLI terminal, stay
    -- there (the diff tab opens in the background).
    keep_terminal_focus = false,
    -- "tab": the diff opens in a tab of its own; "vsplit": as a vertical
    -- split beside your windows in the current tab.
    layout = "tab",
    -- Buffer-local keys in the proposal buffer, e.g. "<leader>ga"; false: none.
    keymaps = { accept = false, reject = false },
  },
  -- Reload buffers whose file changed on disk (the CLI writes accepted
  -- edits itself); a buffer with unsaved changes is left alone, with a
  -- warning.
  reload = true,
  context = {
    -- At most one cursor/selection report per this many milliseconds (the
    -- sidecar's own pacing interval); the first change after a pause is
    -- sent at once. 0: every change is sent.
    coalesce_ms = 50,
  },
  -- Answer the editor tools (diagnostics, definitions, references, hover,
  -- outlines, workspace symbols, open files) from vim.diagnostic and
  -- vim.lsp for the agents that call them. See :help gemini-companion-tools.
  tools = true,
  -- Messages from the sidecar below this level are not shown
  -- ("info", "warn", "error").
  notify_level = "info",
}

-- Tables whose keys are the user's own (not checked against the defaults).
local free_form = { ["terminal.env"] = true, ["terminal.cmd"] = true }

local function is_list_of_strings(v)
  if type(v) ~= "table" then
    return false
  end
  for k, x in pairs(v) do
    if type(k) ~= "number" or type(x) ~= "string" then
      return false
    end
  end
  return #v > 0
end

local positions = { right = true, left = true, bottom = true, top = true, float = true, tab = true }
local log_levels = { debug = true, info = true, warn = true, error = true }
local notify_levels = { info = true, warn = true, error = true }

local function one_of(set)
  local names = vim.tbl_keys(set)
  table.sort(names)
  return function(v)
    return set[v] == true, "one of " .. table.concat(names, ", ")
  end
end

local function key_or_false(v)
  return v == false or (type(v) == "string" and v ~= ""), "a key sequence or false"
end

local function positive(v)
  return type(v) == "number" and v > 0, "a positive number"
end

local function string_map(v)
  if type(v) ~= "table" then
    return false, "a table of strings"
  end
  for k, x in pairs(v) do
    if type(k) ~= "string" or type(x) ~= "string" then
      return false, "a table of strings"
    end
  end
  return true
end

-- Levenshtein distance, for "did you mean" hints.
local function distance(a, b)
  local prev = {}
  for j = 0, #b do
    prev[j] = j
  end
  for i = 1, #a do
    local cur = { [0] = i }
    for j = 1, #b do
      local cost = a:sub(i, i) == b:sub(j, j) and 0 or 1
      cur[j] = math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
    end
    prev = cur
  end
  return prev[#b]
end

-- Lists "unknown option" messages for keys of user that defaults lacks.
local function unknown_keys(user, defaults, prefix, out)
  for k, v in pairs(user) do
    local name = prefix .. tostring(k)
    if type(k) ~= "string" or defaults[k] == nil and not M._nilable[name] then
      local hint = ""
      if type(k) == "string" then
        local best, best_d
        for known in pairs(defaults) do
          local d = distance(k, known)
          if d <= 2 and (not best_d or d < best_d) then
            best, best_d = known, d
          end
        end
        for known in pairs(M._nilable) do
          local p, leaf = known:match("^(.-)([^.]+)$")
          if p == prefix then
            local d = distance(k, leaf)
            if d <= 2 and (not best_d or d < best_d) then
              best, best_d = leaf, d
            end
          end
        end
        if best then
          hint = string.format(" (did you mean '%s%s'?)", prefix, best)
        end
      end
      table.insert(out, string.format("unknown option '%s'%s", name, hint))
    elseif type(v) == "table" and type(defaults[k]) == "table" and not free_form[name] then
      unknown_keys(v, defaults[k], name .. ".", out)
    end
  end
end

-- Options whose default is nil but which a user may set.
M._nilable = { trusted = true, ["sidecar.cmd"] = true, ["sidecar.build_dir"] = true, ["sidecar.log_file"] = true, ["sidecar.max_restarts"] = true }

-- vim.validate with a table of specs; Neovim 0.11 prefers one call per
-- value (the table form is deprecated there).
local function validate(spec)
  if vim.fn.has("nvim-0.11") == 1 then
    local names = vim.tbl_keys(spec)
    table.sort(names)
    for _, name in ipairs(names) do
      local s = spec[name]
      vim.validate(name, s[1], s[2], s[3])
    end
  else
    vim.validate(spec)
  end
end

--- The workspace trust to report to the sidecar: a boolean the user set,
--- or nil when they set none.
---@param opts table
---@return boolean|nil
function M.trust(opts)
  if type(opts.trusted) == "boolean" then
    return opts.trusted
  end
  return nil
end

--- Validates user options and merges them over the defaults.
--- Raises an error naming the first option of a wrong type; returns the
--- merged options and a list of warnings about unknown options.
---@param user table|nil
---@return table options, string[] warnings
function M.build(user)
  if user == nil then
    user = {}
  end
  if type(user) ~= "table" then
    error("gemini_companion.setup: expected a table of options, got " .. type(user), 0)
  end
  local warnings = {}
  unknown_keys(user, M.defaults, "", warnings)
  table.sort(warnings)

  local opts = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), user)
  -- A list replaces the default list instead of merging into it.
  if user.terminal and user.terminal.cmd ~= nil then
    opts.terminal.cmd = user.terminal.cmd
  end

  local ok, err = pcall(validate, {
    auto_start = { opts.auto_start, "boolean" },
    trusted = { opts.trusted, "boolean", true },
    reload = { opts.reload, "boolean" },
    tools = { opts.tools, "boolean" },
    sidecar = { opts.sidecar, "table" },
    terminal = { opts.terminal, "table" },
    diff = { opts.diff, "table" },
    context = { opts.context, "table" },
    notify_level = { opts.notify_level, one_of(notify_levels) },
  })
  if ok then
    ok, err = pcall(validate, {
      ["sidecar.cmd"] = { opts.sidecar.cmd, "string", true },
      ["sidecar.build"] = { opts.sidecar.build, "boolean" },
      ["sidecar.build_dir"] = { opts.sidecar.build_dir, "string", true },
      ["sidecar.log_level"] = { opts.sidecar.log_level, one_of(log_levels) },
      ["sidecar.log_file"] = { opts.sidecar.log_file, "string", true },
      ["sidecar.max_restarts"] = {
        opts.sidecar.max_restarts,
        function(v)
          return v == nil or (type(v) == "number" and v >= 0 and v == math.floor(v)), "a whole number >= 0"
        end,
      },
      ["terminal.cmd"] = {
        opts.terminal.cmd,
        function(v)
          return (type(v) == "string" and v ~= "") or is_list_of_strings(v), "a command string or a list of strings"
        end,
      },
      ["terminal.position"] = { opts.terminal.position, one_of(positions) },
      ["terminal.size"] = { opts.terminal.size, positive },
      ["terminal.float"] = { opts.terminal.float, "table" },
      ["terminal.start_insert"] = { opts.terminal.start_insert, "boolean" },
      ["terminal.env"] = { opts.terminal.env, string_map },
      ["diff.focus"] = { opts.diff.focus, "boolean" },
      ["diff.keep_terminal_focus"] = { opts.diff.keep_terminal_focus, "boolean" },
      ["diff.layout"] = { opts.diff.layout, one_of({ tab = true, vsplit = true }) },
      ["diff.keymaps"] = { opts.diff.keymaps, "table" },
      ["context.coalesce_ms"] = {
        opts.context.coalesce_ms,
        function(v)
          return type(v) == "number" and v >= 0, "a number of milliseconds >= 0"
        end,
      },
    })
  end
  if ok then
    ok, err = pcall(validate, {
      ["terminal.float.width"] = { opts.terminal.float.width, positive },
      ["terminal.float.height"] = { opts.terminal.float.height, positive },
      ["terminal.float.border"] = { opts.terminal.float.border, { "string", "table" } },
      ["diff.keymaps.accept"] = { opts.diff.keymaps.accept, key_or_false },
      ["diff.keymaps.reject"] = { opts.diff.keymaps.reject, key_or_false },
    })
  end
  if not ok then
    -- vim.validate's messages start with the option name; drop any
    -- "file:line:" prefix a newer Neovim adds.
    err = tostring(err):gsub("^.-:%d+: ", "")
    error("gemini_companion.setup: invalid option " .. err, 0)
  end
  return opts, warnings
end

M.options = vim.deepcopy(M.defaults)

return M
