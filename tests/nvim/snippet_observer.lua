-- Observer for the documentation snippet tests (test_snippets.py), loaded with `--cmd` before the
-- snippet, which runs as the user's init.lua. It records what the user would see (notifications,
-- `:messages`, `v:errmsg`, Press-ENTER prompts), edits a second page as `:e` does, evaluates the statusline, optionally
-- runs `:checkhealth echoes_lsp`, then writes a JSON report and quits.
--
-- Environment:
--   ECHOES_SNIPPET_OUT     path of the JSON report
--   ECHOES_SNIPPET_FIRST   page edited first, with `:e` (optional: else Neovim starts on a page)
--   ECHOES_SNIPPET_NEXT    page edited after start-up
--   ECHOES_SNIPPET_ATTACH  '1': wait for echoes_lsp to attach to each page (the server is present)
--   ECHOES_SNIPPET_HEALTH  '1': run `:checkhealth echoes_lsp` at the end
--   ECHOES_SNIPPET_DIAGNOSTICS  '1': wait for the diagnostics of the second page (it has problems)
--   ECHOES_SNIPPET_MODULE  a lazy.nvim plugin spec file to evaluate (optional)

local WAIT_MS = 20000
local report = { notifications = {} }

-- Record every notification and still show it as Neovim does: a notification that would raise an
-- error where it is sent must still raise it here.
local notify = vim.notify
vim.notify = function(message, level, opts)
  table.insert(report.notifications, { message = tostring(message), level = level or vim.log.levels.INFO })
  return notify(message, level, opts)
end

-- With a screen (the tests run Neovim in a terminal), a message too long for the command line,
-- or several, stop Neovim at a Press-ENTER prompt (mode `r`). Record each one and press Enter,
-- from a timer that runs even while Neovim waits there.
report.prompts = 0
local prompt_watch = assert(vim.uv.new_timer())
local at_prompt = false
prompt_watch:start(10, 10, function()
  local mode = vim.api.nvim_get_mode().mode
  if mode == 'r' or mode == 'rm' then
    if not at_prompt then
      report.prompts = report.prompts + 1
      vim.api.nvim_input('<CR>')
    end
    at_prompt = true
  else
    at_prompt = false
  end
end)

local function settle(condition)
  -- Lets scheduled callbacks run; returns early when `condition` holds.
  vim.wait(condition and WAIT_MS or 100, condition or function()
    return false
  end, 20)
end

local function attached()
  local bufnr = vim.api.nvim_get_current_buf()
  local client = vim.lsp.get_clients({ name = 'echoes_lsp', bufnr = bufnr })[1]
  return client ~= nil and client.initialized == true
end

local function evaluate_module(path)
  local ok, spec = pcall(dofile, path)
  if not ok then
    report.module_error = tostring(spec)
    return
  end
  report.module_is_table = type(spec) == 'table'
  report.module_empty = type(spec) == 'table' and vim.tbl_isempty(spec)
  local dir = type(spec) == 'table' and spec.dir or nil
  report.module_dir_has_plugin = type(dir) == 'string' and vim.fn.filereadable(dir .. '/lsp/echoes_lsp.lua') == 1
end

local function virtual_texts(bufnr)
  local count = 0
  for _, mark in ipairs(vim.api.nvim_buf_get_extmarks(bufnr, -1, 0, -1, { details = true })) do
    if mark[4] and mark[4].virt_text then
      count = count + 1
    end
  end
  return count
end

--- After a page is opened: with the server, wait for it to attach (and for the diagnostics of a
--- page with problems); without, let what the snippet scheduled run.
local function observe_page(has_problems)
  local bufnr = vim.api.nvim_get_current_buf()
  if vim.env.ECHOES_SNIPPET_ATTACH ~= '1' then
    return settle()
  end
  if not vim.wait(WAIT_MS, attached, 20) then
    return
  end
  report.attached = (report.attached or 0) + 1
  if has_problems and vim.env.ECHOES_SNIPPET_DIAGNOSTICS == '1' then
    vim.wait(WAIT_MS, function()
      return #vim.diagnostic.get(bufnr) > 0
    end, 20)
    settle()
    report.diagnostics = #vim.diagnostic.get(bufnr)
    report.virtual_texts = virtual_texts(bufnr)
  end
end

local function run()
  if vim.env.ECHOES_SNIPPET_MODULE then
    evaluate_module(vim.env.ECHOES_SNIPPET_MODULE)
  end
  if vim.env.ECHOES_SNIPPET_FIRST then
    local ok, err = pcall(vim.cmd.edit, vim.fn.fnameescape(vim.env.ECHOES_SNIPPET_FIRST))
    report.edit_error = not ok and tostring(err) or nil
  end
  observe_page(false)
  local ok, err = pcall(vim.cmd.edit, vim.fn.fnameescape(vim.env.ECHOES_SNIPPET_NEXT))
  report.edit_error = report.edit_error or (not ok and tostring(err) or nil)
  observe_page(true)
  report.global_virtual_text = vim.diagnostic.config().virtual_text or false
  if vim.o.statusline ~= '' then
    local sok, serr = pcall(vim.api.nvim_eval_statusline, vim.o.statusline, {})
    report.statusline_error = not sok and tostring(serr) or nil
  end
  if vim.env.ECHOES_SNIPPET_HEALTH == '1' then
    vim.cmd('checkhealth echoes_lsp')
    report.health = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  end
end

vim.api.nvim_create_autocmd('VimEnter', {
  once = true,
  callback = function()
    vim.schedule(function()
      local ok, err = pcall(run)
      report.observer_error = not ok and tostring(err) or nil
      report.errmsg = vim.v.errmsg
      report.messages = vim.fn.execute('messages')
      report.clients = #vim.lsp.get_clients({ name = 'echoes_lsp' })
      report.columns = vim.o.columns
      prompt_watch:stop()
      local file = assert(io.open(assert(vim.env.ECHOES_SNIPPET_OUT), 'w'))
      file:write(vim.json.encode(report))
      file:close()
      for _, client in ipairs(vim.lsp.get_clients()) do
        client:stop(true)
      end
      vim.cmd('qall!')
    end)
  end,
})
