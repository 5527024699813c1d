-- :GeminiAgent and the agent panel's <Plug> mappings. Loads the panel only
-- when used.
local M = {}

local function agent()
  return require("gemini_companion.agent")
end

function M.define()
  vim.api.nvim_create_user_command("GeminiAgent", function(o)
    if o.bang then
      agent().cancel()
    elseif o.args ~= "" then
      agent().prompt(o.args)
    else
      agent().open()
    end
  end, {
    nargs = "*",
    bang = true,
    complete = function(arglead, cmdline)
      return agent().complete(arglead, cmdline)
    end,
    desc = "Gemini agent panel: open it, send a prompt or /command, or cancel the turn (!)",
  })
  local map = vim.keymap.set
  map("n", "<Plug>(GeminiAgent)", function()
    agent().open()
  end, { desc = "Open the Gemini agent panel" })
  map("n", "<Plug>(GeminiAgentPrompt)", function()
    agent().input()
  end, { desc = "Prompt the Gemini agent" })
  map("n", "<Plug>(GeminiAgentCancel)", function()
    agent().cancel()
  end, { desc = "Cancel the Gemini agent's turn" })
end

return M
