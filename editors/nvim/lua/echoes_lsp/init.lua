-- echoes_lsp: Neovim commands for the EchoesVault language server (echoes-lsp).
--
-- Every write goes through the server's `workspace/executeCommand` commands, which run the
-- project's portable runtime. See docs/editors/neovim.md.

local M = {}

M.name = 'echoes_lsp'
M.vault_dir = 'EchoesVault'

--- Latest `echoes/statusChanged` notification per workspace URI.
---@type table<string, table>
M.statuses = {}
---@type table?
M.last_status = nil

local defaults = {
  -- Enable Neovim's built-in LSP completion (`vim.lsp.completion`) with autotrigger on the
  -- server's trigger characters (`[`, `#`, `^`, `|`, ...). Leave false when using nvim-cmp.
  completion = false,
  -- Open the quickfix window after `:EchoesSearch`.
  open_quickfix = true,
  -- Show each diagnostic's message at the end of its line (virtual text) in vault pages only;
  -- Neovim 0.11 turns virtual text off by default. `true` or a `vim.diagnostic.Opts.VirtualText`.
  virtual_text = false,
}
M.options = vim.deepcopy(defaults)

local function notify(message, level)
  vim.notify('EchoesVault: ' .. message, level or vim.log.levels.INFO)
end

local function error_message(err)
  if type(err) == 'table' then
    return tostring(err.message or vim.inspect(err))
  end
  return tostring(err)
end

-- The server reports each failure with `window/showMessage` before its error response; remember
-- those messages so that the same failure is not shown twice.
local shown = {} ---@type table<string, integer>

--- `window/showMessage` handler: remember the message, then show it as Neovim does by default.
function M.on_show_message(err, params, ctx)
  if type(params) == 'table' and type(params.message) == 'string' then
    shown[params.message] = vim.uv.now()
  end
  return vim.lsp.handlers['window/showMessage'](err, params, ctx)
end

local function already_shown(message)
  local now = vim.uv.now()
  for text, at in pairs(shown) do
    if now - at > 10000 then
      shown[text] = nil
    elseif message == text or message:find(text, 1, true) then
      return true
    end
  end
  return false
end

local function notify_error(err)
  local message = error_message(err)
  if not already_shown(message) then
    notify(message, vim.log.levels.ERROR)
  end
end

-- Server command ----------------------------------------------------------------------------------

--- How to install the server today (it is not on PyPI yet), for messages and `:checkhealth`.
M.install_hint = 'install it from a checkout of echoes-lsp: `pipx install /path/to/echoes-lsp` '
  .. '(or `python3 -m pip install --user /path/to/echoes-lsp`; echoes-lsp is not on PyPI yet; '
  .. 'its docs/install.md says more), '
  .. 'or point cmd at a Python that has it: '
  .. "vim.lsp.config('echoes_lsp', { cmd = { '/path/to/python', '-m', 'echoes_lsp', 'serve' } })"

---@type string[]?
local resolved_cmd = nil

--- The command that runs the server: `echoes-lsp serve` when `echoes-lsp` is on PATH, else
--- `<python3> -m echoes_lsp serve` when that Python has the package. Nil when neither works (asked
--- again next time, so that installing the server and `:edit` is enough).
---@return string[]?
function M.resolve_cmd()
  if resolved_cmd then
    return resolved_cmd
  end
  if vim.fn.executable('echoes-lsp') == 1 then
    resolved_cmd = { 'echoes-lsp', 'serve' }
    return resolved_cmd
  end
  for _, python in ipairs({ 'python3', 'python' }) do
    if vim.fn.executable(python) == 1 then
      local ok, done = pcall(function()
        return vim.system({ python, '-m', 'echoes_lsp', '--version' }, { text = true }):wait(15000)
      end)
      if ok and done.code == 0 then
        resolved_cmd = { vim.fn.exepath(python), '-m', 'echoes_lsp', 'serve' }
        return resolved_cmd
      end
    end
  end
  return nil
end

--- The default `cmd` of `lsp/echoes_lsp.lua`: starts the command `resolve_cmd()` finds.
---@param dispatchers vim.lsp.rpc.Dispatchers
---@param config vim.lsp.ClientConfig
---@return vim.lsp.rpc.PublicClient
function M.cmd(dispatchers, config)
  local cmd = M.resolve_cmd()
  if not cmd then
    error(M.server_problem() or 'echoes-lsp not found', 0)
  end
  return vim.lsp.rpc.start(cmd, dispatchers, {
    cwd = config.cmd_cwd,
    env = config.cmd_env,
    detached = config.detached,
  })
end

--- The problem when the default `cmd` finds no server.
M.not_found = '`echoes-lsp` is not on PATH and `python3 -m echoes_lsp` does not work'

--- Why the configured server cannot start, or nil when it can (as far as can be known before
--- starting it).
---@return string?
function M.server_problem()
  local config = vim.lsp.config[M.name]
  local cmd = config and config.cmd
  if cmd == M.cmd then
    if M.resolve_cmd() then
      return nil
    end
    return M.not_found
  elseif type(cmd) == 'function' then
    return nil
  elseif type(cmd) == 'table' and type(cmd[1]) == 'string' then
    if vim.fn.executable(cmd[1]) == 1 then
      return nil
    end
    return ('`%s` (the cmd of the echoes_lsp config) is not executable'):format(cmd[1])
  end
  return 'the echoes_lsp config has no cmd'
end

local problem_shown = false

--- The one-line notification for `problem` (a `server_problem()`): it fits `v:echospace` of an
--- 80-column screen (68), so Neovim never stops at a Press-ENTER prompt for it; `:checkhealth`
--- says the rest.
---@param problem string
---@return string
function M.problem_message(problem)
  if problem == M.not_found then
    return 'echoes-lsp not found: pipx install it (:checkhealth echoes_lsp)'
  end
  return 'echoes-lsp cmd does not run: see :checkhealth echoes_lsp'
end

--- Shows, once per session, why the server cannot start and how to install it. Returns whether
--- the server can start.
---@return boolean
function M.check_server()
  local problem = M.server_problem()
  if not problem then
    return true
  end
  if not problem_shown then
    problem_shown = true
    -- Scheduled: shown inside the FileType autocommand that asks, a message at ERROR level would
    -- raise and reach the user as "Error executing lua callback" with a traceback.
    local message = M.problem_message(problem)
    vim.schedule(function()
      vim.notify(message, vim.log.levels.WARN)
    end)
  end
  return false
end

-- Workspace ---------------------------------------------------------------------------------------

--- The workspace of `path`: the parent of the nearest enclosing `EchoesVault/` folder.
---@param path string absolute file or directory path
---@return string?
function M.find_workspace(path)
  if not path or path == '' then
    return nil
  end
  path = vim.fs.normalize(vim.fn.fnamemodify(path, ':p'))
  local candidates = { path }
  for dir in vim.fs.parents(path) do
    candidates[#candidates + 1] = dir
  end
  for _, dir in ipairs(candidates) do
    if vim.fs.basename(dir) == M.vault_dir then
      local parent = vim.fs.dirname(dir)
      if vim.fn.isdirectory(dir) == 1 or vim.fn.isdirectory(parent) == 1 then
        return parent
      end
    end
  end
  return nil
end

--- Root for the LSP config: the workspace of a file buffer inside an `EchoesVault/`, else nil.
---@param bufnr integer
---@return string?
function M.root_dir(bufnr)
  bufnr = bufnr == 0 and vim.api.nvim_get_current_buf() or bufnr
  if vim.bo[bufnr].buftype ~= '' then
    return nil
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == '' or name:match('^%a[%w+.-]*://') then
    return nil
  end
  return M.find_workspace(name)
end

-- Clients -----------------------------------------------------------------------------------------

local function client_root(client)
  return client.root_dir or (client.config and client.config.root_dir)
end

--- The echoes-lsp client for a buffer (attached to it), or for the whole editor: the one attached
--- to the current buffer, else the one whose workspace holds the current directory, else any.
---@param bufnr integer? buffer that the client must be attached to
---@return vim.lsp.Client?
function M.client(bufnr)
  if bufnr then
    return vim.lsp.get_clients({ name = M.name, bufnr = bufnr })[1]
  end
  local current = vim.lsp.get_clients({ name = M.name, bufnr = vim.api.nvim_get_current_buf() })[1]
  if current then
    return current
  end
  local clients = vim.lsp.get_clients({ name = M.name })
  local cwd = vim.fs.normalize(vim.fn.getcwd())
  for _, client in ipairs(clients) do
    local root = client_root(client)
    if root and (cwd == root or vim.startswith(cwd, root .. '/')) then
      return client
    end
  end
  return clients[1]
end

local function need_client(bufnr)
  local client = M.client(bufnr)
  if not client then
    notify(
      'echoes-lsp is not running'
        .. (bufnr and ' for this buffer' or '')
        .. ': open a page inside EchoesVault/ first (see :checkhealth vim.lsp)',
      vim.log.levels.ERROR
    )
  end
  return client
end

local function workspace_uri(client)
  local root = client_root(client)
  return root and vim.uri_from_fname(root) or nil
end

--- Run a server command with one object argument; `callback(err, result)`.
---@param client vim.lsp.Client
---@param command string
---@param argument table
---@param callback fun(err: table?, result: any)
---@param bufnr integer?
function M.execute(client, command, argument, callback, bufnr)
  local params = { command = command, arguments = { argument } }
  local ok = client:request('workspace/executeCommand', params, function(err, result)
    callback(err, result)
  end, bufnr or vim.api.nvim_get_current_buf())
  if not ok then
    callback({ message = 'echoes-lsp has shut down' }, nil)
  end
end

--- Keep diagnostics in one namespace: when this Neovim cannot be asked to re-pull, the server
--- pushes, so stop Neovim from also pulling (call from the config's `on_init`).
---@param client vim.lsp.Client
function M.prefer_push_diagnostics(client)
  local refresh = vim.tbl_get(client.capabilities or {}, 'workspace', 'diagnostics', 'refreshSupport')
  if not refresh and client.server_capabilities then
    client.server_capabilities.diagnosticProvider = nil
  end
end

-- Status ------------------------------------------------------------------------------------------

--- Handler for the server's `echoes/statusChanged` notification.
function M.on_status(_, result, _)
  if type(result) ~= 'table' then
    return
  end
  if result.workspace then
    M.statuses[result.workspace] = result
  end
  M.last_status = result
  vim.schedule(function()
    vim.api.nvim_exec_autocmds('User', { pattern = 'EchoesStatusChanged', data = result })
    vim.cmd('redrawstatus!')
  end)
end

local function plural(count, one, many)
  return ('%d %s'):format(count, count == 1 and one or many)
end

--- A short statusline item for the vault of the current buffer, naming what it counts as the
--- VS Code status bar does (docs/concepts.md, "Problems and vault issues"): the diagnostics of
--- the open pages (`openProblemCount`) and the vault files that need attention (`issueCount`),
--- e.g. `Echoes: 3 problems in open files · vault healthy`. Empty when no echoes-lsp client
--- serves the buffer's workspace.
---@param bufnr integer?
---@return string
function M.statusline(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local client = M.client(bufnr) or M.client()
  local status = client and M.statuses[workspace_uri(client) or ''] or nil
  if not status then
    return ''
  end
  if status.integrity == 'read-only' or status.integrity == 'uninitialized' then
    return 'Echoes: ' .. (status.integrity == 'read-only' and 'read-only' or 'not initialized')
  end
  local problems = tonumber(status.openProblemCount) or 0 -- absent from older servers
  local issues = tonumber(status.issueCount) or 0
  local vault = issues > 0 and plural(issues, 'vault file needs', 'vault files need') .. ' attention'
    or 'vault healthy'
  if problems > 0 then
    return ('Echoes: %s in open files · %s'):format(plural(problems, 'problem', 'problems'), vault)
  end
  if issues == 0 and status.pages then
    return ('Echoes: vault healthy (%s)'):format(plural(tonumber(status.pages) or 0, 'page', 'pages'))
  end
  return 'Echoes: ' .. vault
end

local function show_markdown(markdown, title)
  local lines = vim.split(markdown, '\n', { trimempty = false })
  local buf, win = vim.lsp.util.open_floating_preview(lines, 'markdown', {
    border = 'rounded',
    focus_id = 'echoes_' .. title,
    title = ' ' .. title .. ' ',
    title_pos = 'center',
  })
  return buf, win
end

--- `:EchoesStatus`: the runtime's status card in a floating window.
function M.status(callback)
  local client = need_client()
  if not client then
    return
  end
  M.execute(client, 'echoes.status', { workspace = workspace_uri(client), format = 'card' }, function(err, result)
    if err then
      notify_error(err)
    else
      local markdown = type(result) == 'table' and result.markdown or vim.inspect(result)
      show_markdown(markdown, 'EchoesVault status')
    end
    if callback then
      callback(err, result)
    end
  end)
end

--- `:EchoesStart`: restore the session context (Markdown) in a floating window.
function M.start(callback)
  local client = need_client()
  if not client then
    return
  end
  M.execute(client, 'echoes.start', { workspace = workspace_uri(client) }, function(err, result)
    if err then
      notify_error(err)
    else
      show_markdown(type(result) == 'table' and result.markdown or '', 'EchoesVault session')
    end
    if callback then
      callback(err, result)
    end
  end)
end

--- The server client, once `text` is known to be non-empty (else `message` is shown).
local function client_for_text(text, message)
  local client = need_client()
  if not client then
    return nil
  end
  if not text or vim.trim(text) == '' then
    notify(message, vim.log.levels.ERROR)
    return nil
  end
  return client
end

-- Search ------------------------------------------------------------------------------------------

--- `:EchoesSearch {query}`: literal search of the pages, results in the quickfix list.
function M.search(query, callback)
  local client = client_for_text(query, 'give a search text: :EchoesSearch {query}')
  if not client then
    return
  end
  local root = client_root(client)
  M.execute(client, 'echoes.search', { workspace = workspace_uri(client), query = query }, function(err, result)
    if err then
      notify_error(err)
      if callback then
        callback(err, nil)
      end
      return
    end
    local items = {}
    for _, hit in ipairs(type(result) == 'table' and result.results or {}) do
      local filename = hit.uri and vim.uri_to_fname(hit.uri) or vim.fs.joinpath(root or '', hit.file or '')
      items[#items + 1] = { filename = filename, lnum = tonumber(hit.line) or 1, col = 1, text = hit.text or '' }
    end
    vim.fn.setqflist({}, ' ', { title = 'EchoesVault search: ' .. query, items = items })
    if #items == 0 then
      notify(('no page mentions "%s"'):format(query))
    elseif M.options.open_quickfix then
      vim.cmd('botright copen')
    end
    if result and result.truncated then
      notify('more results than the limit; refine the query', vim.log.levels.WARN)
    end
    if callback then
      callback(nil, items)
    end
  end)
end

-- Save --------------------------------------------------------------------------------------------

local function is_stale(err)
  if type(err) ~= 'table' then
    return false
  end
  if type(err.data) == 'table' and err.data.code == 'EV701' then
    return true
  end
  return tostring(err.message or ''):find('EV701', 1, true) ~= nil
end

local function reload(bufnr)
  vim.api.nvim_buf_call(bufnr, function()
    vim.cmd('silent edit!')
  end)
end

--- Open the disk version of a page beside it, in diff mode.
function M.diff_with_disk(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local path = vim.api.nvim_buf_get_name(bufnr)
  local win = vim.fn.bufwinid(bufnr)
  if win ~= -1 then
    vim.api.nvim_set_current_win(win)
  end
  vim.cmd('diffthis')
  vim.cmd('vertical new')
  local disk = vim.api.nvim_get_current_buf()
  vim.bo[disk].buftype = 'nofile'
  vim.bo[disk].bufhidden = 'wipe'
  vim.bo[disk].swapfile = false
  local ok, lines = pcall(vim.fn.readfile, path)
  vim.api.nvim_buf_set_lines(disk, 0, -1, false, ok and lines or {})
  vim.bo[disk].modifiable = false
  vim.bo[disk].filetype = vim.bo[bufnr].filetype
  pcall(vim.api.nvim_buf_set_name, disk, 'echoes-disk://' .. path)
  vim.cmd('diffthis')
end

M.stale_choices = {
  overwrite = 'Overwrite the disk version with this buffer',
  diff = 'Compare with the disk version (diff)',
  reload = 'Reload the disk version (discard buffer changes)',
  cancel = 'Cancel (keep both as they are)',
}

local function offer_overwrite(bufnr, err, opts)
  local name = vim.fs.basename(vim.api.nvim_buf_get_name(bufnr))
  notify_error(err)
  local c = M.stale_choices
  local choices = { c.overwrite, c.diff, c.reload, c.cancel }
  vim.ui.select(choices, {
    prompt = ('EV701: %s changed on disk since it was opened. What now?'):format(name),
    kind = 'echoes_stale',
  }, function(choice)
    if choice == c.overwrite then
      -- Explicit confirmation: the server re-reads the disk hash and replaces that version.
      M.save(bufnr, { confirm_overwrite = true, on_done = opts.on_done })
      return
    end
    if choice == c.diff then
      M.diff_with_disk(bufnr)
    elseif choice == c.reload then
      reload(bufnr)
    else
      notify(('save cancelled; %s on disk was not changed'):format(name), vim.log.levels.WARN)
    end
    if opts.on_done then
      opts.on_done(false, err)
    end
  end)
end

--- `:EchoesSave`: save the buffer through the runtime (hash-checked upsert), then reload it so it
--- is clean. A page changed on disk since it was opened is refused (EV701); overwriting it needs
--- an explicit choice.
---@param bufnr integer?
---@param opts {confirm_overwrite?: boolean|'ask', on_done?: fun(ok: boolean, result: any)}?
function M.save(bufnr, opts)
  opts = opts or {}
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local function done(ok, result)
    if opts.on_done then
      opts.on_done(ok, result)
    end
  end
  local client = need_client(bufnr)
  if not client then
    return done(false, 'no client')
  end
  local argument = { uri = vim.uri_from_bufnr(bufnr) }
  if opts.confirm_overwrite ~= nil then
    -- true: the user already confirmed; 'ask': the server asks (window/showMessageRequest).
    argument.confirmOverwrite = opts.confirm_overwrite
  end
  local tick = vim.b[bufnr].changedtick
  M.execute(client, 'echoes.savePage', argument, function(err, result)
    if err then
      if is_stale(err) and opts.confirm_overwrite == nil then
        return offer_overwrite(bufnr, err, opts)
      end
      notify_error(err)
      return done(false, err)
    end
    if not vim.api.nvim_buf_is_valid(bufnr) then
      return done(true, result)
    end
    if vim.b[bufnr].changedtick ~= tick then
      notify('saved; the buffer changed meanwhile, so it was not reloaded', vim.log.levels.WARN)
    else
      reload(bufnr)
    end
    local page = type(result) == 'table' and result.page or vim.api.nvim_buf_get_name(bufnr)
    notify(('%s %s'):format(type(result) == 'table' and result.action or 'saved', vim.fs.basename(page)))
    done(true, result)
  end, bufnr)
end

--- Client-side handler of the `echoes.savePage` command, used when it comes from a code action
--- ("Save through EchoesVault", "Overwrite the disk version ..."): the same save, then the reload.
---@param command lsp.Command
---@param ctx table
function M.save_command(command, ctx)
  local argument = (command.arguments or {})[1] or {}
  local bufnr = argument.uri and vim.uri_to_bufnr(argument.uri) or ctx.bufnr
  M.save(bufnr, { confirm_overwrite = argument.confirmOverwrite })
end

-- Daily entries and session end -------------------------------------------------------------------

--- `:EchoesAppend {text}`: write one scratchpad daily entry.
function M.append(text, callback)
  local client = client_for_text(text, 'nothing to append: give a text or select lines')
  if not client then
    return
  end
  M.execute(client, 'echoes.append', { workspace = workspace_uri(client), entry = text }, function(err, result)
    if err then
      notify_error(err)
    else
      local where = type(result) == 'table' and result.dailyLog or ''
      notify('appended to ' .. vim.fn.fnamemodify(where, ':~:.'))
    end
    if callback then
      callback(err, result)
    end
  end)
end

M.end_choices = { yes = 'Yes, end and save the session', no = 'No' }

--- `:EchoesEnd [summary]`: ask for the daily summary (unless given) and a yes/no confirmation,
--- then end the session. Nothing is saved without the explicit "yes".
function M.end_session(summary, callback)
  local client = need_client()
  if not client then
    return
  end
  local function finish(err, result)
    if callback then
      callback(err, result)
    end
  end
  local function confirm(text)
    vim.ui.select({ M.end_choices.yes, M.end_choices.no }, {
      prompt = 'End the EchoesVault session and save it with this summary?',
      kind = 'echoes_end',
    }, function(choice)
      if choice ~= M.end_choices.yes then
        notify('session not ended')
        return finish({ message = 'cancelled' }, nil)
      end
      M.execute(client, 'echoes.endSession', {
        workspace = workspace_uri(client),
        dailySummary = text,
        confirmExplicitUserEnd = true,
      }, function(err, result)
        if err then
          notify_error(err)
        else
          notify('session saved to ' .. vim.fn.fnamemodify(result.dailyLog or '', ':~:.'))
        end
        finish(err, result)
      end)
    end)
  end
  if summary and vim.trim(summary) ~= '' then
    return confirm(summary)
  end
  vim.ui.input({ prompt = 'Daily summary: ' }, function(input)
    if not input or vim.trim(input) == '' then
      notify('session not ended (no summary given)')
      return finish({ message = 'cancelled' }, nil)
    end
    confirm(input)
  end)
end

-- Index -------------------------------------------------------------------------------------------

local function simple(command, done_message)
  return function(callback)
    local client = need_client()
    if not client then
      return
    end
    M.execute(client, command, { workspace = workspace_uri(client) }, function(err, result)
      if err then
        notify_error(err)
      else
        notify(done_message)
      end
      if callback then
        callback(err, result)
      end
    end)
  end
end

M.rebuild_index = simple('echoes.rebuildIndex', 'index rebuilt')
M.hydrate = simple('echoes.hydrate', 'index and local state refreshed')

-- Selection ---------------------------------------------------------------------------------------

--- Text of a command's range: the exact visual selection when the range came from it, else the
--- whole lines.
function M.range_text(line1, line2)
  local vstart, vend = vim.fn.getpos("'<"), vim.fn.getpos("'>")
  if vstart[2] == line1 and vend[2] == line2 and vim.fn.visualmode() ~= '' then
    local ok, region = pcall(vim.fn.getregion, vstart, vend, { type = vim.fn.visualmode() })
    if ok then
      return table.concat(region, '\n')
    end
  end
  return table.concat(vim.api.nvim_buf_get_lines(0, line1 - 1, line2, false), '\n')
end

-- Setup -------------------------------------------------------------------------------------------

--- Built-in completion with autotrigger for the client's buffers: autotrigger opens the menu on
--- `[`, so without `noselect` (or `noinsert`) Neovim would insert the first item by itself and the
--- next key would land after it.
---@param client vim.lsp.Client
---@param bufnr integer
local function enable_completion(client, bufnr)
  local current = vim.bo[bufnr].completeopt ~= '' and vim.bo[bufnr].completeopt or vim.o.completeopt
  local completeopt = vim.split(current, ',', { trimempty = true })
  for _, flag in ipairs({ 'menuone', 'noselect' }) do
    local covered = flag == 'noselect' and vim.tbl_contains(completeopt, 'noinsert')
    if not vim.tbl_contains(completeopt, flag) and not covered then
      table.insert(completeopt, flag)
    end
  end
  vim.bo[bufnr].completeopt = table.concat(completeopt, ',')
  vim.lsp.completion.enable(true, client.id, bufnr, { autotrigger = true })
end

--- Virtual text for the client's diagnostics only: set on its namespaces, so other servers and
--- non-vault buffers keep the global `vim.diagnostic.config()`.
---@param client vim.lsp.Client
---@param virtual_text boolean|table
local function enable_virtual_text(client, virtual_text)
  for _, is_pull in ipairs({ false, true }) do
    local namespace = vim.lsp.diagnostic.get_namespace(client.id, is_pull)
    vim.diagnostic.config({ virtual_text = virtual_text }, namespace)
  end
end

--- Optional: `require('echoes_lsp').setup({ completion = true, virtual_text = true })`. Options
--- merge over those of an earlier call, so separate snippets of a config add up.
function M.setup(opts)
  M.options = vim.tbl_deep_extend('force', M.options, opts or {})
  local group = vim.api.nvim_create_augroup('echoes_lsp_setup', { clear = true })
  if not M.options.completion and not M.options.virtual_text then
    return
  end
  vim.api.nvim_create_autocmd('LspAttach', {
    group = group,
    callback = function(args)
      local client = vim.lsp.get_client_by_id(args.data.client_id)
      if not client or client.name ~= M.name then
        return
      end
      if M.options.completion then
        enable_completion(client, args.buf)
      end
      if M.options.virtual_text then
        enable_virtual_text(client, M.options.virtual_text)
      end
    end,
  })
end

return M
