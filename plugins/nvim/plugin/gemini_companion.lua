-- Commands and <Plug> mappings of gemini_companion; nothing starts until
-- setup() or a command runs. See :help gemini-companion.
if vim.g.loaded_gemini_companion then
  return
end
vim.g.loaded_gemini_companion = true

if vim.fn.has("nvim-0.7") ~= 1 then
  vim.api.nvim_echo({ { "gemini_companion needs Neovim 0.7 or newer", "ErrorMsg" } }, true, {})
  return
end

require("gemini_companion.commands").define()
