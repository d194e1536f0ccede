-- Test init for headless Neovim: only editors/nvim on the runtimepath, the real echoes-lsp server,
-- then the scenario driver once startup is complete.
--
-- Environment (set by tests/nvim/conftest.py):
--   ECHOES_TEST_CMD       JSON list: the server command; `null` keeps the config's default
--   ECHOES_TEST_SETTINGS  JSON object merged into the config (optional)
--   ECHOES_TEST_SCENARIO  scenario name (see driver.lua)
--   ECHOES_TEST_OUT       path of the JSON report

local here = vim.fs.dirname(vim.fs.normalize(debug.getinfo(1, 'S').source:sub(2)))
local repo = vim.fs.dirname(vim.fs.dirname(here))
vim.opt.runtimepath:prepend(repo .. '/editors/nvim')
vim.opt.swapfile = false
vim.opt.shadafile = 'NONE'
vim.opt.showmode = false

-- ECHOES_TEST_CMD `null`: keep the config's own `cmd` (it finds the server itself).
local cmd = vim.json.decode(assert(vim.env.ECHOES_TEST_CMD))
local config = cmd ~= vim.NIL and { cmd = cmd } or {}
if vim.env.ECHOES_TEST_CONFIG and vim.env.ECHOES_TEST_CONFIG ~= '' then
  config = vim.tbl_deep_extend('force', config, vim.json.decode(vim.env.ECHOES_TEST_CONFIG))
end
if vim.env.ECHOES_TEST_KEEP_PULL == '1' then
  -- Leave out the config's push-only `on_init`, to observe the server with Neovim's defaults.
  config.on_init = function() end
end
vim.lsp.config('echoes_lsp', config)
vim.lsp.enable('echoes_lsp')

vim.api.nvim_create_autocmd('VimEnter', {
  once = true,
  callback = function()
    -- Outside the autocommand, so that editing a file fires BufRead and FileType as usual.
    vim.schedule(function()
      dofile(here .. '/driver.lua')
    end)
  end,
})
