-- User commands and <Plug> mappings.
local M = {}

local function gc()
  return require("gemini_companion")
end

local function complete_diffs(arg_lead)
  local out = {}
  for _, p in ipairs(require("gemini_companion.diff").paths()) do
    local rel = vim.fn.fnamemodify(p, ":.")
    if rel:sub(1, #arg_lead) == arg_lead then
      table.insert(out, rel)
    end
  end
  return out
end

function M.define()
  local cmd = vim.api.nvim_create_user_command
  cmd("GeminiStart", function()
    gc().start()
  end, { desc = "Start the gemini-ide-companion sidecar" })
  cmd("GeminiStop", function()
    gc().stop()
  end, { desc = "Stop the gemini-ide-companion sidecar" })
  cmd("GeminiRestart", function()
    gc().restart()
  end, { desc = "Restart the gemini-ide-companion sidecar" })
  cmd("GeminiStatus", function()
    gc().status()
  end, { desc = "Show the state of the Gemini CLI integration" })
  cmd("GeminiCli", function(o)
    gc().open(o.fargs, o.bang)
  end, { nargs = "*", bang = true, range = true, desc = "Open Gemini CLI in a terminal (! restarts it)" })
  cmd("GeminiToggle", function()
    gc().toggle()
  end, { desc = "Show or hide the Gemini CLI terminal" })
  cmd("GeminiFocus", function()
    gc().focus()
  end, { desc = "Focus the Gemini CLI terminal (starting it if needed)" })
  cmd("GeminiSend", function(o)
    if o.range > 0 then
      gc().send(o.line1, o.line2)
    else
      gc().send()
    end
  end, { range = true, desc = "Send the file (or the lines of the range, or the file under the cursor in a file tree) to Gemini CLI as an @-reference" })
  cmd("GeminiAccept", function(o)
    gc().accept(o.args)
  end, { nargs = "?", complete = complete_diffs, desc = "Accept Gemini's proposed change" })
  cmd("GeminiReject", function(o)
    gc().reject(o.args)
  end, { nargs = "?", complete = complete_diffs, desc = "Reject Gemini's proposed change" })

  local map = vim.keymap.set
  map("n", "<Plug>(GeminiAccept)", function()
    gc().accept()
  end, { desc = "Accept Gemini's proposed change" })
  map("n", "<Plug>(GeminiReject)", function()
    gc().reject()
  end, { desc = "Reject Gemini's proposed change" })
  map("n", "<Plug>(GeminiFocus)", function()
    gc().focus()
  end, { desc = "Focus the Gemini CLI terminal" })
  map("n", "<Plug>(GeminiToggle)", function()
    gc().toggle()
  end, { desc = "Show or hide the Gemini CLI terminal" })
  map("n", "<Plug>(GeminiSend)", function()
    gc().send()
  end, { desc = "Send the file to Gemini CLI" })
  map("x", "<Plug>(GeminiSend)", ":GeminiSend<CR>", { silent = true, desc = "Send the selected lines to Gemini CLI" })
  require("gemini_companion.agent.command").define()
end

return M
