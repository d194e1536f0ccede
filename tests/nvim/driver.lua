-- Scenario driver for the headless Neovim tests.
--
-- Runs one scenario (ECHOES_TEST_SCENARIO) as a coroutine on Neovim's main loop: waiting never
-- blocks the loop, so LSP messages, timers and typed keys are processed while a step waits. What
-- the scenario observes goes into a JSON report (ECHOES_TEST_OUT) that pytest checks. A hard
-- timeout always writes the report and quits, so Neovim exits even when a step hangs.

local HARD_TIMEOUT_MS = tonumber(vim.env.ECHOES_TEST_TIMEOUT_MS) or 60000
local STEP_TIMEOUT_MS = 15000

local out_path = assert(vim.env.ECHOES_TEST_OUT, 'ECHOES_TEST_OUT is not set')
local scenario_name = assert(vim.env.ECHOES_TEST_SCENARIO, 'ECHOES_TEST_SCENARIO is not set')
local workspace = vim.fs.normalize(vim.fn.getcwd())
local pages = workspace .. '/EchoesVault/pages'

local report = {
  scenario = scenario_name,
  workspace = workspace,
  steps = {},
  notifications = {},
  messages = {},
  selects = {},
  inputs = {},
}

-- Reporting and exit -----------------------------------------------------------------------------

local finished = false

local function write_report()
  local file = assert(io.open(out_path, 'w'))
  file:write(vim.json.encode(report))
  file:close()
end

local function finish(err)
  if finished then
    return
  end
  finished = true
  if err then
    report.error = tostring(err)
  end
  local ok, write_err = pcall(write_report)
  if not ok then
    io.stderr:write('could not write the report: ' .. tostring(write_err) .. '\n')
  end
  for _, client in ipairs(vim.lsp.get_clients()) do
    client:stop(true)
  end
  vim.cmd('qall!')
end

vim.defer_fn(function()
  finish(('driver timed out after %d ms (last step: %s)'):format(HARD_TIMEOUT_MS, report.steps[#report.steps] or 'none'))
end, HARD_TIMEOUT_MS)

-- Record what the user would see, and answer prompts from a script instead of a keyboard.

vim.notify = function(message, level)
  table.insert(report.notifications, { message = tostring(message), level = level or vim.log.levels.INFO })
end

local show_message = vim.lsp.handlers['window/showMessage']
vim.lsp.handlers['window/showMessage'] = function(err, params, ctx)
  table.insert(report.messages, { type = params.type, message = params.message })
  return show_message(err, params, ctx)
end

--- Answers for vim.ui.select, taken in order: each is a function(items, opts) -> index or nil.
local select_answers = {}
--- Answers for vim.ui.input, taken in order (strings; nil cancels).
local input_answers = {}

vim.ui.select = function(items, opts, on_choice)
  local answer = table.remove(select_answers, 1)
  local index = answer and answer(items, opts) or nil
  table.insert(report.selects, { prompt = opts and opts.prompt, items = items, chosen = index and items[index] or vim.NIL })
  vim.schedule(function()
    on_choice(index and items[index] or nil, index)
  end)
end

vim.ui.input = function(opts, on_confirm)
  local answer = table.remove(input_answers, 1)
  table.insert(report.inputs, { prompt = opts and opts.prompt, answer = answer or vim.NIL })
  vim.schedule(function()
    on_confirm(answer)
  end)
end

-- Every server command the plugin runs, with its answer, for the contract checks.
report.commands = {}
local echoes_module = require('echoes_lsp')
local execute = echoes_module.execute
echoes_module.execute = function(client, command, argument, callback, bufnr)
  local record = { command = command, argument = argument }
  table.insert(report.commands, record)
  return execute(client, command, argument, function(err, result)
    record.error = err and { code = err.code, message = err.message, data = err.data } or vim.NIL
    record.result = result == nil and vim.NIL or result
    callback(err, result)
  end, bufnr)
end

local function choose(title)
  return function(items)
    for index, item in ipairs(items) do
      if item == title or (type(item) == 'table' and item.title == title) then
        return index
      end
    end
    return nil
  end
end

-- Coroutine helpers ------------------------------------------------------------------------------

local co

local function resume(...)
  if finished then
    return
  end
  local ok, err = coroutine.resume(co, ...)
  if not ok then
    finish(debug.traceback(co, err))
  elseif coroutine.status(co) == 'dead' then
    finish()
  end
end

local function sleep(ms)
  vim.defer_fn(function()
    resume()
  end, ms)
  coroutine.yield()
end

local function step(name)
  table.insert(report.steps, name)
end

local function diagnostics(bufnr)
  local items = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    table.insert(items, {
      code = d.code,
      lnum = d.lnum,
      col = d.col,
      end_lnum = d.end_lnum,
      end_col = d.end_col,
      severity = d.severity,
      message = d.message,
      source = d.source,
      namespace = (vim.diagnostic.get_namespace(d.namespace) or {}).name,
    })
  end
  table.sort(items, function(a, b)
    if a.lnum ~= b.lnum then
      return a.lnum < b.lnum
    end
    return tostring(a.code) < tostring(b.code)
  end)
  return items
end

--- Wait until `condition()` returns a truthy value; return it. Errors after `timeout` ms.
local function wait_for(what, condition, timeout)
  local deadline = vim.uv.now() + (timeout or STEP_TIMEOUT_MS)
  while true do
    local value = condition()
    if value then
      return value
    end
    if vim.uv.now() > deadline then
      local seen = {}
      for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
        local name = vim.fs.basename(vim.api.nvim_buf_get_name(bufnr))
        if name ~= '' then
          seen[name] = diagnostics(bufnr)
        end
      end
      report.diagnostics_at_timeout = seen
      error('timed out waiting for ' .. what, 0)
    end
    sleep(25)
  end
end

--- Send an LSP request and wait for the answer: returns err, result.
local function request(client, method, params, bufnr)
  local ok = client:request(method, params, function(err, result)
    vim.schedule(function()
      resume(err, result)
    end)
  end, bufnr)
  assert(ok, 'request ' .. method .. ' could not be sent')
  return coroutine.yield()
end

-- Editor helpers ---------------------------------------------------------------------------------

local function read_file(path)
  local file = io.open(path, 'rb')
  if not file then
    return nil
  end
  local text = file:read('*a')
  file:close()
  return text
end

local function write_file(path, text)
  local file = assert(io.open(path, 'wb'))
  file:write(text)
  file:close()
end

local function buffer_text(bufnr)
  return table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), '\n')
end

local function client_for(bufnr)
  return vim.lsp.get_clients({ name = 'echoes_lsp', bufnr = bufnr })[1]
end

--- Edit a page and wait until the server is attached and initialized.
local function open_page(name)
  vim.cmd.edit(vim.fn.fnameescape(pages .. '/' .. name))
  local bufnr = vim.api.nvim_get_current_buf()
  local client = wait_for('echoes_lsp to attach to ' .. name, function()
    local client = client_for(bufnr)
    return client and client.initialized and client or nil
  end)
  return bufnr, client
end

local function has_code(bufnr, code)
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    if d.code == code then
      return true
    end
  end
  return false
end

--- Wait until the buffer's diagnostic codes satisfy `check(codes)`; return the diagnostics.
local function wait_diagnostics(bufnr, what, check, timeout)
  report.last_wait = what
  return wait_for(what, function()
    local codes = {}
    for _, d in ipairs(vim.diagnostic.get(bufnr)) do
      codes[tostring(d.code)] = true
    end
    if check(codes) then
      return diagnostics(bufnr)
    end
    return nil
  end, timeout)
end

local function notified(pattern)
  for _, n in ipairs(report.notifications) do
    if n.message:find(pattern) then
      return n
    end
  end
  return nil
end

local function position_of(bufnr, needle, offset)
  for lnum, line in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)) do
    local col = line:find(needle, 1, true)
    if col then
      return { line = lnum - 1, character = col - 1 + (offset or 0) }
    end
  end
  error('text not found: ' .. needle, 0)
end

local function text_document(bufnr)
  return { uri = vim.uri_from_bufnr(bufnr) }
end

local function hover_text(result)
  if type(result) ~= 'table' then
    return nil
  end
  local contents = result.contents
  if type(contents) == 'string' then
    return contents
  end
  if contents.value then
    return contents.value
  end
  local parts = {}
  for _, part in ipairs(contents) do
    table.insert(parts, type(part) == 'string' and part or part.value)
  end
  return table.concat(parts, '\n')
end

local function locations(result)
  if type(result) ~= 'table' then
    return {}
  end
  if result.uri or result.targetUri then
    result = { result }
  end
  local items = {}
  for _, loc in ipairs(result) do
    table.insert(items, {
      path = vim.uri_to_fname(loc.uri or loc.targetUri),
      range = loc.targetSelectionRange or loc.range,
    })
  end
  return items
end

local function completion_items(result)
  local items = result and (result.items or result) or {}
  local summary = {}
  for _, item in ipairs(items) do
    table.insert(summary, {
      label = item.label,
      kind = item.kind,
      filterText = item.filterText,
      textEdit = item.textEdit,
      insertText = item.insertText,
    })
  end
  return summary
end

local function float_lines()
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(win).relative ~= '' then
      return vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1, false)
    end
  end
  return nil
end

local function daily_files()
  local found = vim.fs.find(function(name)
    return name:match('%.md$') ~= nil
  end, { path = workspace .. '/EchoesVault/daily', type = 'file', limit = math.huge })
  table.sort(found)
  return found
end

-- Scenarios ---------------------------------------------------------------------------------------

local scenarios = {}

--- Diagnostics, quick fixes and the connection facts on pages with known defects.
function scenarios.defects()
  step('open missing-fields.md')
  local bufnr, client = open_page('missing-fields.md')
  report.client = {
    root_dir = client.root_dir,
    cmd = client.config.cmd,
    trigger_characters = vim.tbl_get(client.server_capabilities, 'completionProvider', 'triggerCharacters'),
    commands = vim.tbl_get(client.server_capabilities, 'executeCommandProvider', 'commands'),
    watched_files_dynamic = vim.tbl_get(client.capabilities, 'workspace', 'didChangeWatchedFiles', 'dynamicRegistration'),
    watched_files_registered = client.dynamic_capabilities:get('workspace/didChangeWatchedFiles') ~= nil,
  }

  step('wait for EV104 and EV300')
  report.diagnostics = wait_diagnostics(bufnr, 'EV104 and EV300 on missing-fields.md', function(codes)
    return codes.EV104 and codes.EV300
  end)

  step('quick fix: insert the missing frontmatter fields')
  local fix_pos = position_of(bufnr, '---', 0)
  local lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  for lnum = 2, #lines do
    if lines[lnum] == '---' then
      fix_pos = { line = lnum - 1, character = 0 }
      break
    end
  end
  vim.api.nvim_win_set_cursor(0, { fix_pos.line + 1, 0 })
  local before = buffer_text(bufnr)
  local titles = {}
  local chosen = 'Insert the missing frontmatter fields'
  vim.lsp.buf.code_action({
    apply = true,
    context = { only = { 'quickfix' } },
    filter = function(action)
      table.insert(titles, action.title)
      return action.title == chosen
    end,
  })
  wait_for('the quick fix to change the buffer', function()
    return buffer_text(bufnr) ~= before
  end)
  report.fix_titles = titles
  report.fixed_text = buffer_text(bufnr)
  report.fixed_modified = vim.bo[bufnr].modified
  report.after_fix = wait_diagnostics(bufnr, 'EV104 to disappear after the fix', function(codes)
    return not codes.EV104
  end)

  step('quick fix: join the folded summary')
  local folded = open_page('folded-summary.md')
  wait_diagnostics(folded, 'EV201 on folded-summary.md', function(codes)
    return codes.EV201
  end)
  local summary = position_of(folded, 'summary:')
  vim.api.nvim_win_set_cursor(0, { summary.line + 1, 0 })
  local folded_before = buffer_text(folded)
  vim.lsp.buf.code_action({
    apply = true,
    filter = function(action)
      return action.title == 'Join the summary onto one line'
    end,
  })
  wait_for('the summary fix to change the buffer', function()
    return buffer_text(folded) ~= folded_before
  end)
  report.joined_text = buffer_text(folded)
  report.joined_diagnostics = wait_diagnostics(folded, 'EV201 to disappear', function(codes)
    return not codes.EV201
  end)
end

--- Diagnostics with Neovim's own defaults (it pulls whenever the server offers pull
--- diagnostics): before and after an edit that moves them down two lines.
function scenarios.default_diagnostics()
  step('open missing-fields.md')
  local bufnr = open_page('missing-fields.md')
  -- The expected set, exactly: what arrives once both kinds of reports had time to arrive.
  local function settle(expected, timeout)
    local deadline = vim.uv.now() + timeout
    local seen
    repeat
      sleep(100)
      seen = diagnostics(bufnr)
      local keys = vim.tbl_map(function(d)
        return ('%s:%d:%d'):format(d.code, d.lnum, d.col)
      end, seen)
      table.sort(keys)
      if table.concat(keys, ' ') == expected then
        sleep(300) -- and it stays so
        return diagnostics(bufnr)
      end
    until vim.uv.now() > deadline
    return seen
  end
  report.before = settle('EV104:3:0 EV104:3:0 EV300:7:21', 4000)
  step('insert two lines above the link')
  local link = position_of(bufnr, 'This page links')
  vim.api.nvim_buf_set_lines(bufnr, link.line, link.line, false, { 'Inserted.', '' })
  report.after = settle('EV104:3:0 EV104:3:0 EV300:9:21', 4000)
end

--- Completion, hover and go-to-definition on a valid page.
function scenarios.navigation()
  step('open auth-architecture.md')
  local bufnr, client = open_page('auth-architecture.md')
  report.capabilities = {
    completion = client.server_capabilities.completionProvider ~= nil,
    hover = client.server_capabilities.hoverProvider or false,
    definition = client.server_capabilities.definitionProvider or false,
  }

  step('completion after [[')
  vim.api.nvim_buf_set_lines(bufnr, -1, -1, false, { '', 'Related: [[ses' })
  local last = vim.api.nvim_buf_line_count(bufnr) - 1
  local err, result = request(client, 'textDocument/completion', {
    textDocument = text_document(bufnr),
    position = { line = last, character = #'Related: [[ses' },
    context = { triggerKind = 1 },
  }, bufnr)
  report.completion_error = err and err.message or vim.NIL
  report.completion = completion_items(result)
  err, result = request(client, 'textDocument/completion', {
    textDocument = text_document(bufnr),
    position = { line = last, character = #'Related: [[' },
    context = { triggerKind = 2, triggerCharacter = '[' },
  }, bufnr)
  report.completion_all = completion_items(result)
  vim.api.nvim_buf_set_lines(bufnr, last - 1, -1, false, {})

  step('hover on [[session-tokens]]')
  local link = position_of(bufnr, '[[session-tokens]]', 4)
  err, result = request(client, 'textDocument/hover', {
    textDocument = text_document(bufnr),
    position = link,
  }, bufnr)
  report.hover_error = err and err.message or vim.NIL
  report.hover = hover_text(result) or vim.NIL

  step('definition of [[session-tokens]] and [[session-tokens#Token lifetime]]')
  err, result = request(client, 'textDocument/definition', {
    textDocument = text_document(bufnr),
    position = link,
  }, bufnr)
  report.definition_error = err and err.message or vim.NIL
  report.definition = locations(result)
  local heading = position_of(bufnr, '#Token lifetime', 3)
  err, result = request(client, 'textDocument/definition', {
    textDocument = text_document(bufnr),
    position = heading,
  }, bufnr)
  report.heading_definition = locations(result)

  step('vim.lsp.buf.definition() jumps')
  vim.api.nvim_win_set_cursor(0, { heading.line + 1, heading.character })
  vim.lsp.buf.definition()
  wait_for('the jump to session-tokens.md', function()
    return vim.api.nvim_buf_get_name(0):match('session%-tokens%.md$')
  end)
  report.jump = { file = vim.fs.basename(vim.api.nvim_buf_get_name(0)), cursor = vim.api.nvim_win_get_cursor(0) }
end

--- Built-in completion (vim.lsp.completion with autotrigger) driven by typed keys.
function scenarios.builtin_completion()
  require('echoes_lsp').setup({ completion = true })
  vim.opt.completeopt = { 'menuone', 'noselect', 'popup' }
  step('open auth-architecture.md')
  local bufnr = open_page('auth-architecture.md')
  step('type [[ses in insert mode')
  vim.api.nvim_win_set_cursor(0, { vim.api.nvim_buf_line_count(bufnr), 0 })
  vim.api.nvim_feedkeys(vim.keycode('oSee [['), 'nt', false)
  local words = wait_for('the completion menu after [[', function()
    if vim.fn.pumvisible() == 1 then
      local info = vim.fn.complete_info({ 'items' })
      if #info.items > 0 then
        return vim.tbl_map(function(item)
          return item.word
        end, info.items)
      end
    end
    return nil
  end)
  report.menu = words
  step('narrow with ses, take the first match')
  vim.api.nvim_feedkeys(vim.keycode('ses'), 'nt', false)
  sleep(300)
  vim.api.nvim_feedkeys(vim.keycode('<C-n><C-y><Esc>'), 'nt', false)
  wait_for('insert mode to end', function()
    return vim.api.nvim_get_mode().mode == 'n'
  end)
  report.line = vim.api.nvim_get_current_line()
end

--- Built-in completion of a block without an id: choosing it inserts the link with a fresh id,
--- and Neovim runs the item's command, which adds the id to the target page on disk.
function scenarios.block_id_completion()
  require('echoes_lsp').setup({ completion = true })
  vim.opt.completeopt = { 'menuone', 'noselect', 'popup' }
  step('open auth-architecture.md')
  local bufnr = open_page('auth-architecture.md')
  step('type [[session-tokens#^ in insert mode')
  vim.api.nvim_win_set_cursor(0, { vim.api.nvim_buf_line_count(bufnr), 0 })
  vim.api.nvim_feedkeys(vim.keycode('oSee [[session-tokens#^'), 'nt', false)
  local labels = wait_for('the block menu after #^', function()
    if vim.fn.pumvisible() == 1 then
      local info = vim.fn.complete_info({ 'items' })
      if #info.items > 0 then
        return vim.tbl_map(function(item)
          return item.abbr ~= '' and item.abbr or item.word
        end, info.items)
      end
    end
    return nil
  end)
  report.menu = labels
  local wanted = 'Refresh tokens rotate on every use.'
  local index = nil
  for position, label in ipairs(labels) do
    if label == wanted then
      index = position
    end
  end
  assert(index, 'no item for ' .. wanted)
  step('select it and accept')
  vim.api.nvim_feedkeys(vim.keycode(string.rep('<C-n>', index) .. '<C-y><Esc>'), 'nt', false)
  wait_for('insert mode to end', function()
    return vim.api.nvim_get_mode().mode == 'n'
  end)
  report.line = vim.api.nvim_get_current_line()
  step('wait for the id in session-tokens.md')
  report.target = wait_for('the id written to session-tokens.md', function()
    local text = read_file(pages .. '/session-tokens.md')
    return text and text:find(wanted .. ' %^') and text or nil
  end)
end

--- :EchoesStatus, :EchoesSearch and the statusline item.
function scenarios.commands()
  step('open session-tokens.md')
  local bufnr = open_page('session-tokens.md')
  local echoes = require('echoes_lsp')
  local events = {}
  vim.api.nvim_create_autocmd('User', {
    pattern = 'EchoesStatusChanged',
    callback = function(args)
      table.insert(events, args.data)
    end,
  })
  step('wait for echoes/statusChanged')
  wait_for('an echoes/statusChanged notification', function()
    return echoes.statusline(bufnr) ~= ''
  end)
  report.statusline = echoes.statusline(bufnr)
  report.status_notification = echoes.last_status

  step(':EchoesStatus')
  vim.cmd('EchoesStatus')
  report.status_card = wait_for('the status float', float_lines)
  vim.cmd('fclose!')

  step(':EchoesSearch token')
  vim.cmd('EchoesSearch token')
  local qf = wait_for('quickfix results', function()
    local list = vim.fn.getqflist({ items = 0, title = 0 })
    return #list.items > 0 and list or nil
  end)
  report.quickfix_title = qf.title
  report.quickfix = vim.tbl_map(function(item)
    return { file = vim.api.nvim_buf_get_name(item.bufnr), lnum = item.lnum, text = item.text }
  end, qf.items)
  report.quickfix_open = vim.fn.getqflist({ winid = 0 }).winid ~= 0
  report.status_events = #events
end

--- The statusline names its two counts: once the vault is loaded, then after an edit that adds
--- a broken link (one problem in an open file, which leaves the vault's files as they were).
function scenarios.status_counts()
  step('open session-tokens.md')
  local bufnr = open_page('session-tokens.md')
  local echoes = require('echoes_lsp')
  local function status()
    return echoes.last_status or {}
  end
  step('wait for the loaded vault')
  wait_for('a status of the loaded vault', function()
    return status().ready
  end)
  report.loaded_status = status()
  report.loaded_statusline = echoes.statusline(bufnr)
  step('add a broken link')
  vim.api.nvim_buf_set_lines(bufnr, -1, -1, false, { '', 'See [[no-such-page]].' })
  wait_for('a status counting the open problem', function()
    return (tonumber(status().openProblemCount) or 0) > 0
  end)
  report.edited_status = status()
  report.edited_statusline = echoes.statusline(bufnr)
end

--- :EchoesSave of an edited page: written through the runtime, buffer reloaded and clean.
function scenarios.save()
  step('open session-tokens.md')
  local bufnr = open_page('session-tokens.md')
  local index_before = read_file(workspace .. '/EchoesVault/index.md')
  step('edit the summary and body')
  local summary = position_of(bufnr, 'summary:')
  vim.api.nvim_buf_set_lines(bufnr, summary.line, summary.line + 1, false, {
    'summary: Session storage, token lifetime, rotation and revocation.',
  })
  vim.api.nvim_buf_set_lines(bufnr, -1, -1, false, { '', '## Revocation', '', 'Logout revokes every token.' })
  report.modified_before = vim.bo[bufnr].modified
  step(':EchoesSave')
  vim.cmd('EchoesSave')
  wait_for('the save to finish', function()
    return notified('updated') or notified('created') or notified('failed') or notified('EV')
  end)
  wait_for('the buffer to be clean', function()
    return not vim.bo[bufnr].modified
  end)
  report.disk = read_file(pages .. '/session-tokens.md')
  report.buffer = buffer_text(bufnr)
  report.modified_after = vim.bo[bufnr].modified
  report.index_before = index_before
  report.index_after = read_file(workspace .. '/EchoesVault/index.md')
  sleep(300)
  report.diagnostics = diagnostics(bufnr)
end

--- The stale save: refused with EV701 (disk untouched) until the user explicitly overwrites.
function scenarios.stale()
  step('open session-tokens.md')
  local path = pages .. '/session-tokens.md'
  local bufnr = open_page('session-tokens.md')
  step('change the file on disk behind the editor')
  local behind = read_file(path):gsub('Refresh tokens rotate on every use%.', 'Refresh tokens rotate daily (changed by another writer).')
  write_file(path, behind)
  report.behind = behind
  step('edit the buffer')
  vim.api.nvim_buf_set_lines(bufnr, -1, -1, false, { '', 'Edited in Neovim.' })

  step(':EchoesSave, then cancel')
  table.insert(select_answers, choose(require('echoes_lsp').stale_choices.cancel))
  vim.cmd('EchoesSave')
  wait_for('the cancellation', function()
    return notified('save cancelled')
  end)
  report.refused = {
    disk = read_file(path),
    modified = vim.bo[bufnr].modified,
    diagnostics = wait_diagnostics(bufnr, 'EV701 on the buffer', function(codes)
      return codes.EV701
    end),
  }

  step(':EchoesSave, then overwrite after confirming')
  table.insert(select_answers, choose(require('echoes_lsp').stale_choices.overwrite))
  vim.cmd('EchoesSave')
  wait_for('the confirmed overwrite', function()
    return not vim.bo[bufnr].modified
  end)
  report.overwritten = {
    disk = read_file(path),
    buffer = buffer_text(bufnr),
    modified = vim.bo[bufnr].modified,
    diagnostics = wait_diagnostics(bufnr, 'EV701 to clear', function(codes)
      return not codes.EV701
    end),
  }
end

--- The code actions offered on EV701: the disk version opened by `window/showDocument`, and the
--- overwrite that the server confirms with `window/showMessageRequest` (Neovim's default handlers).
function scenarios.stale_actions()
  step('open session-tokens.md')
  local path = pages .. '/session-tokens.md'
  local bufnr = open_page('session-tokens.md')
  local behind = read_file(path):gsub('Refresh tokens rotate on every use%.', 'Refresh tokens rotate weekly.')
  write_file(path, behind)
  vim.api.nvim_buf_set_lines(bufnr, -1, -1, false, { '', 'Edited in Neovim.' })
  step('a plain :EchoesSave is refused')
  table.insert(select_answers, choose(require('echoes_lsp').stale_choices.cancel))
  vim.cmd('EchoesSave')
  wait_diagnostics(bufnr, 'EV701 on the buffer', function(codes)
    return codes.EV701
  end)
  local ev701 = position_of(bufnr, '---')
  vim.api.nvim_win_set_cursor(0, { ev701.line + 1, 0 })
  local titles = {}
  local function run_action(title)
    vim.lsp.buf.code_action({
      apply = true,
      filter = function(action)
        titles[action.title] = true
        return action.title == title
      end,
    })
  end

  step('code action: open the disk version (window/showDocument)')
  run_action('Open the disk version beside the buffer')
  local disk_buf = wait_for('the disk version buffer', function()
    local current = vim.api.nvim_get_current_buf()
    return current ~= bufnr and current or nil
  end)
  report.disk_version = { name = vim.api.nvim_buf_get_name(disk_buf), text = buffer_text(disk_buf) }
  vim.api.nvim_set_current_buf(bufnr)

  step('code action: overwrite, declined in the server prompt (window/showMessageRequest)')
  table.insert(select_answers, choose('Cancel'))
  run_action('Overwrite the disk version with this buffer (asks to confirm)')
  wait_for('the declined overwrite', function()
    return notified('cancelled')
  end)
  report.declined = { disk = read_file(path), modified = vim.bo[bufnr].modified }

  step('code action: overwrite, confirmed in the server prompt')
  table.insert(select_answers, choose('Overwrite'))
  run_action('Overwrite the disk version with this buffer (asks to confirm)')
  wait_for('the confirmed overwrite', function()
    return not vim.bo[bufnr].modified
  end)
  report.confirmed = {
    disk = read_file(path),
    buffer = buffer_text(bufnr),
    modified = vim.bo[bufnr].modified,
    diagnostics = wait_diagnostics(bufnr, 'EV701 to clear', function(codes)
      return not codes.EV701
    end),
  }
  report.action_titles = vim.tbl_keys(titles)
end

--- Which buffers the server attaches to: anything inside EchoesVault/, however deep; nothing else.
function scenarios.roots()
  step('open a daily entry deep inside the vault')
  local daily = daily_files()[1]
  vim.cmd.edit(vim.fn.fnameescape(daily))
  local daily_buf = vim.api.nvim_get_current_buf()
  local client = wait_for('echoes_lsp on the daily entry', function()
    local c = client_for(daily_buf)
    return c and c.initialized and c or nil
  end)
  report.daily = { file = daily, root = client.root_dir, client_id = client.id }
  step('open a page: the same client')
  local page_buf, page_client = open_page('auth-architecture.md')
  report.page = { root = page_client.root_dir, client_id = page_client.id }
  step('open Markdown outside the vault: no client')
  vim.cmd.edit(vim.fn.fnameescape(workspace .. '/README.md'))
  local readme = vim.api.nvim_get_current_buf()
  sleep(500)
  report.readme = { filetype = vim.bo[readme].filetype, clients = #vim.lsp.get_clients({ bufnr = readme }) }
  report.root_of = {
    page = require('echoes_lsp').root_dir(page_buf),
    readme = require('echoes_lsp').root_dir(readme) or vim.NIL,
    vault_dir = require('echoes_lsp').find_workspace(workspace .. '/EchoesVault') or vim.NIL,
  }
  report.clients = #vim.lsp.get_clients({ name = 'echoes_lsp' })
end

--- A page deleted by another program: the server notices it without any editor event.
function scenarios.watch()
  step('open auth-architecture.md')
  local bufnr, client = open_page('auth-architecture.md')
  report.watched_files_dynamic = vim.tbl_get(client.capabilities, 'workspace', 'didChangeWatchedFiles', 'dynamicRegistration') or false
  if report.watched_files_dynamic then
    -- the server registers its watcher right after `initialized`: wait for it, not for a time
    wait_for('the file watcher registration', function()
      return client.dynamic_capabilities:get('workspace/didChangeWatchedFiles')
    end)
  end
  report.registered = client.dynamic_capabilities:get('workspace/didChangeWatchedFiles') ~= nil
  report.before = diagnostics(bufnr)
  step('delete database-access.md on disk')
  local started = vim.uv.now()
  os.remove(pages .. '/database-access.md')
  report.after = wait_diagnostics(bufnr, 'EV300 for the deleted page', function(codes)
    return codes.EV300
  end, 15000)
  report.noticed_after_ms = vim.uv.now() - started
end

--- :EchoesAppend (text and range) and :EchoesEnd (declined, then confirmed).
function scenarios.journal()
  step('open database-access.md')
  local bufnr = open_page('database-access.md')
  local echoes = require('echoes_lsp')
  local existing = {}
  for _, file in ipairs(daily_files()) do
    existing[file] = true
  end
  local function new_entries()
    return vim.tbl_filter(function(file)
      return not existing[file]
    end, daily_files())
  end
  step(':EchoesAppend text')
  vim.cmd('EchoesAppend Decided to keep repositories thin.')
  wait_for('the append', function()
    return notified('appended') or notified('failed')
  end)
  step(':EchoesAppend on a range')
  local body = position_of(bufnr, 'Queries live')
  vim.cmd(('%d,%dEchoesAppend'):format(body.line + 1, body.line + 2))
  wait_for('the second append', function()
    return #new_entries() >= 2 or notified('failed')
  end)
  step(':EchoesAppend on a charwise visual selection')
  vim.api.nvim_win_set_cursor(0, { body.line + 1, 0 })
  vim.api.nvim_feedkeys(vim.keycode('veee<Esc>'), 'nx', false)
  vim.cmd("'<,'>EchoesAppend")
  wait_for('the third append', function()
    return #new_entries() >= 3 or notified('failed')
  end)
  report.appended = {}
  for _, file in ipairs(new_entries()) do
    table.insert(report.appended, { file = file, text = read_file(file) })
  end

  step(':EchoesEnd, declined')
  table.insert(input_answers, 'Repository layer decisions recorded.')
  table.insert(select_answers, choose(echoes.end_choices.no))
  vim.cmd('EchoesEnd')
  wait_for('the decline', function()
    return notified('session not ended')
  end)
  report.after_decline = #new_entries()

  step(':EchoesEnd, confirmed')
  table.insert(input_answers, 'Repository layer decisions recorded.')
  table.insert(select_answers, choose(echoes.end_choices.yes))
  vim.cmd('EchoesEnd')
  wait_for('the session to be saved', function()
    return notified('session saved') or notified('failed')
  end)
  report.after_end = {}
  for _, file in ipairs(new_entries()) do
    table.insert(report.after_end, { file = file, text = read_file(file) })
  end
end

--- The lines of `:checkhealth echoes_lsp` (run for the current buffer), its buffer closed after.
local function checkhealth()
  vim.cmd('checkhealth echoes_lsp')
  local lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  vim.cmd('tabclose')
  return lines
end

--- No server can start (`echoes-lsp` missing, `python3 -m echoes_lsp` failing): one message,
--- however many pages are opened, and `:checkhealth echoes_lsp` says why.
function scenarios.no_server()
  for _, name in ipairs({ 'auth-architecture.md', 'session-tokens.md', 'database-access.md' }) do
    step('open ' .. name)
    vim.cmd.edit(vim.fn.fnameescape(pages .. '/' .. name))
  end
  -- Starting (or not) happens in the FileType autocommands of `:edit`; what they schedule runs
  -- before this resumes.
  sleep(200)
  report.clients = #vim.lsp.get_clients({ name = 'echoes_lsp' })
  step(':checkhealth echoes_lsp')
  report.health = checkhealth()
end

--- `echoes-lsp` is not on PATH but `python3 -m echoes_lsp` works: the default cmd uses it.
function scenarios.python_fallback()
  step('open auth-architecture.md')
  open_page('auth-architecture.md')
  report.resolved_cmd = require('echoes_lsp').resolve_cmd()
  step(':checkhealth echoes_lsp')
  report.health = checkhealth()
end

--- `:checkhealth echoes_lsp` with a running server attached to the page.
function scenarios.health()
  step('open session-tokens.md')
  open_page('session-tokens.md')
  step(':checkhealth echoes_lsp')
  report.health = checkhealth()
end

--- `setup({ completion = true })` alone (no completeopt of the user's): typing `[[sto` then `q`
--- leaves `[[stoq`; the menu opened after `[[` never inserts an item by itself.
function scenarios.completion_no_insert()
  report.completeopt_global = vim.o.completeopt
  require('echoes_lsp').setup({ completion = true })
  step('open auth-architecture.md')
  local bufnr = open_page('auth-architecture.md')
  vim.api.nvim_win_set_cursor(0, { vim.api.nvim_buf_line_count(bufnr), 0 })
  step('type o, then [[')
  vim.api.nvim_feedkeys(vim.keycode('o[['), 'nt', false)
  report.menu = wait_for('the completion menu after [[', function()
    if vim.fn.pumvisible() == 1 then
      local info = vim.fn.complete_info({ 'items' })
      if #info.items > 0 then
        return vim.tbl_map(function(item)
          return item.word
        end, info.items)
      end
    end
    return nil
  end)
  report.line_with_menu = vim.api.nvim_get_current_line()
  step('type sto')
  vim.api.nvim_feedkeys('sto', 'nt', false)
  wait_for('sto to be typed', function()
    return #vim.api.nvim_get_current_line() >= #report.line_with_menu + 3
  end)
  report.line_after_sto = vim.api.nvim_get_current_line()
  step('type q, leave insert mode')
  vim.api.nvim_feedkeys(vim.keycode('q<Esc>'), 'nt', false)
  wait_for('insert mode to end', function()
    return vim.api.nvim_get_mode().mode == 'n'
  end)
  report.line = vim.api.nvim_get_current_line()
  report.completeopt = vim.bo[bufnr].completeopt
end

--- The semantic-token highlight groups at a position (vim.inspect_pos).
local function token_groups(bufnr, pos)
  local groups = {}
  local found = vim.inspect_pos(bufnr, pos.line, pos.character, { semantic_tokens = true })
  for _, token in ipairs(found.semantic_tokens or {}) do
    table.insert(groups, token.opts.hl_group)
  end
  table.sort(groups)
  return groups
end

--- Semantic tokens and inlay hints, as Neovim 0.11 asks for and shows them.
function scenarios.views()
  step('open auth-architecture.md and add links')
  local bufnr, client = open_page('auth-architecture.md')
  report.capabilities = {
    semantic_tokens = client.server_capabilities.semanticTokensProvider ~= nil,
    inlay_hint = client.server_capabilities.inlayHintProvider ~= nil,
  }
  vim.api.nvim_buf_set_lines(bufnr, -1, -1, false, { 'Rotation: [[session-tokens#^rotation]] and [[nowhere]].' })

  step('semantic tokens arrive')
  local target = position_of(bufnr, '[[session-tokens]]', 3)
  local missing = position_of(bufnr, '[[nowhere]]', 3)
  local block = position_of(bufnr, '#^rotation', 2)
  wait_for('semantic tokens on [[nowhere]]', function()
    return #token_groups(bufnr, missing) > 0 and #token_groups(bufnr, block) > 0
  end)
  report.target_groups = token_groups(bufnr, target)
  report.missing_groups = token_groups(bufnr, missing)
  report.block_groups = token_groups(bufnr, block)
  report.key_groups = token_groups(bufnr, { line = 1, character = 1 })
  report.unresolved_link = vim.api.nvim_get_hl(0, { name = '@lsp.mod.unresolved' }).link or vim.NIL

  step('inlay hints arrive')
  vim.lsp.inlay_hint.enable(true, { bufnr = bufnr })
  local hints = wait_for('an inlay hint', function()
    local found = vim.lsp.inlay_hint.get({ bufnr = bufnr })
    return #found > 0 and found or nil
  end)
  report.hints = {}
  for _, item in ipairs(hints) do
    local label = item.inlay_hint.label
    if type(label) == 'table' then
      local parts = {}
      for _, part in ipairs(label) do
        table.insert(parts, part.value)
      end
      label = table.concat(parts)
    end
    table.insert(report.hints, { line = item.inlay_hint.position.line, character = item.inlay_hint.position.character, label = label })
  end
  report.hint_enabled = vim.lsp.inlay_hint.is_enabled({ bufnr = bufnr })
  report.line_text = vim.api.nvim_buf_get_lines(bufnr, -2, -1, false)[1]
  report.line_count = vim.api.nvim_buf_line_count(bufnr)
end

-- Run ----------------------------------------------------------------------------------------------

--- Folding through `vim.lsp.foldexpr()` and document highlights on a page.
function scenarios.structure()
  step('open session-tokens.md')
  local bufnr, client = open_page('session-tokens.md')
  report.capabilities = {
    folding = client.server_capabilities.foldingRangeProvider or false,
    highlight = client.server_capabilities.documentHighlightProvider or false,
  }
  vim.api.nvim_buf_set_lines(bufnr, -1, -1, false, { 'Again [[auth-architecture]] here.' })

  step('fold with vim.lsp.foldexpr()')
  local win = vim.api.nvim_get_current_win()
  vim.wo[win].foldmethod = 'expr'
  vim.wo[win].foldexpr = 'v:lua.vim.lsp.foldexpr()'
  vim.wo[win].foldlevel = 99
  wait_for('folds from the server', function()
    return vim.fn.foldlevel(1) > 0 and vim.fn.foldlevel(13) > 1
  end)
  local count = vim.api.nvim_buf_line_count(bufnr)
  report.foldlevels = {}
  for lnum = 1, count do
    table.insert(report.foldlevels, vim.fn.foldlevel(lnum))
  end
  vim.cmd('normal! zM')
  report.closed = {}
  for lnum = 1, count do
    table.insert(report.closed, vim.fn.foldclosed(lnum))
  end
  vim.cmd('normal! zR')
  local ok = pcall(vim.lsp.foldclose, 'imports', win)
  report.imports_closed = ok and { vim.fn.foldclosed(1), vim.fn.foldclosed(8) } or vim.NIL

  step('vim.lsp.buf.document_highlight() on [[auth-architecture]]')
  local link = position_of(bufnr, '[[auth-architecture]]', 3)
  vim.api.nvim_win_set_cursor(win, { link.line + 1, link.character })
  vim.lsp.buf.document_highlight()
  local spaces = vim.api.nvim_get_namespaces()
  local ns = spaces['nvim.lsp.references'] or spaces['vim_lsp_references']
  report.highlights = wait_for('document highlights', function()
    local marks = vim.api.nvim_buf_get_extmarks(bufnr, ns or -1, 0, -1, { details = true })
    if #marks < 2 then
      return nil
    end
    local found = {}
    for _, mark in ipairs(marks) do
      table.insert(found, { line = mark[2], col = mark[3], group = mark[4].hl_group })
    end
    return found
  end)
end

local scenario = scenarios[scenario_name]
if not scenario then
  finish('unknown scenario ' .. scenario_name)
  return
end
co = coroutine.create(scenario)
resume()
