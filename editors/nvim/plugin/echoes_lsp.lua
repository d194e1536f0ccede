-- User commands for the EchoesVault language server (echoes-lsp). Requires Neovim 0.11+.
if vim.g.loaded_echoes_lsp then
  return
end
vim.g.loaded_echoes_lsp = true

if vim.fn.has('nvim-0.11') == 0 then
  vim.notify('echoes_lsp needs Neovim 0.11 or newer', vim.log.levels.WARN)
  return
end

-- Semantic-token modifiers no colour scheme knows: a link to nothing is underlined like a
-- warning. `default`: a colour scheme or the user's own definition wins.
vim.api.nvim_set_hl(0, '@lsp.mod.unresolved', { link = 'DiagnosticUnderlineWarn', default = true })

local function echoes()
  return require('echoes_lsp')
end

-- Also receive the status notification when the server was started by a config other than
-- `lsp/echoes_lsp.lua` (a config's own `handlers` take precedence).
if not vim.lsp.handlers['echoes/statusChanged'] then
  vim.lsp.handlers['echoes/statusChanged'] = function(err, result, ctx)
    echoes().on_status(err, result, ctx)
  end
end

-- Neovim leaves a config whose `cmd` is not executable alone without a word (only a line in the
-- LSP log): say once why the server cannot start and how to install it.
vim.api.nvim_create_autocmd('FileType', {
  group = vim.api.nvim_create_augroup('echoes_lsp_check', { clear = true }),
  pattern = 'markdown',
  callback = function(args)
    if vim.lsp.is_enabled and vim.lsp.is_enabled('echoes_lsp') and echoes().root_dir(args.buf) then
      echoes().check_server()
    end
  end,
})

-- The buffer `:checkhealth echoes_lsp` reports on: the last file buffer entered before it.
vim.api.nvim_create_autocmd('BufEnter', {
  group = vim.api.nvim_create_augroup('echoes_lsp_last_buffer', { clear = true }),
  callback = function(args)
    if vim.bo[args.buf].buftype == '' and vim.api.nvim_buf_get_name(args.buf) ~= '' then
      vim.g.echoes_lsp_last_buffer = args.buf
    end
  end,
})

local command = vim.api.nvim_create_user_command

command('EchoesStatus', function()
  echoes().status()
end, { desc = 'EchoesVault: show the status card' })

command('EchoesStart', function()
  echoes().start()
end, { desc = 'EchoesVault: restore the session context' })

command('EchoesSearch', function(opts)
  echoes().search(opts.args)
end, { nargs = '+', desc = 'EchoesVault: search the pages into the quickfix list' })

command('EchoesSave', function()
  echoes().save(0)
end, { desc = 'EchoesVault: save this page through the runtime (hash-checked)' })

command('EchoesAppend', function(opts)
  local text = opts.args
  if text == '' and opts.range > 0 then
    text = echoes().range_text(opts.line1, opts.line2)
  end
  echoes().append(text)
end, { nargs = '*', range = true, desc = 'EchoesVault: append a text or the selection to a daily entry' })

command('EchoesEnd', function(opts)
  echoes().end_session(opts.args)
end, { nargs = '*', desc = 'EchoesVault: end and save the session (asks first)' })

command('EchoesRebuildIndex', function()
  echoes().rebuild_index()
end, { desc = 'EchoesVault: regenerate index.md through the runtime' })

command('EchoesHydrate', function()
  echoes().hydrate()
end, { desc = 'EchoesVault: refresh the ignored index and local state' })
