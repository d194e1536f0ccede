-- `:checkhealth echoes_lsp`: what the EchoesVault setup needs, each with ok/warn/error and advice.
--
-- The buffer checked is the last file buffer entered before `:checkhealth` opened its own.

local M = {}

local health = vim.health

--- Runs `cmd` and returns its trimmed stdout, or nil and the reason.
---@param cmd string[]
---@return string?, string?
local function output(cmd)
  local ok, done = pcall(function()
    return vim.system(cmd, { text = true }):wait(15000)
  end)
  if not ok then
    return nil, tostring(done)
  end
  if done.code ~= 0 then
    local err = vim.trim(done.stderr or '')
    return nil, ('exit %d%s'):format(done.code, err ~= '' and (': ' .. err:match('[^\n]*$')) or '')
  end
  return vim.trim(done.stdout or ''), nil
end

--- The interpreter that runs a server command: the Python of `python -m echoes_lsp`, else the
--- `#!` line of the `echoes-lsp` script.
---@param cmd string[]
---@return string?
local function python_of(cmd)
  if cmd[2] == '-m' then
    return vim.fn.exepath(cmd[1]) ~= '' and vim.fn.exepath(cmd[1]) or cmd[1]
  end
  local script = vim.fn.exepath(cmd[1])
  local ok, lines = pcall(vim.fn.readfile, script, '', 1)
  local shebang = ok and lines[1] or ''
  return shebang:match('^#!%s*(%S*python[%w.]*)%s*$')
end

---@return integer?
local function checked_buffer()
  local candidates = { vim.g.echoes_lsp_last_buffer, vim.fn.bufnr('#'), vim.api.nvim_get_current_buf() }
  for _, bufnr in ipairs(candidates) do
    if type(bufnr) == 'number' and bufnr > 0 and vim.api.nvim_buf_is_valid(bufnr) and vim.bo[bufnr].buftype == '' then
      if vim.api.nvim_buf_get_name(bufnr) ~= '' then
        return bufnr
      end
    end
  end
  return nil
end

local function check_neovim()
  health.start('Neovim')
  local v = vim.version()
  local text = ('Neovim %d.%d.%d'):format(v.major, v.minor, v.patch)
  if vim.fn.has('nvim-0.11') == 1 then
    health.ok(text)
  else
    health.error(text .. ': echoes_lsp needs Neovim 0.11 or newer', { 'Upgrade Neovim (https://neovim.io).' })
  end
end

--- Checks the server command; returns the server's `--version` line when it runs.
---@return string?
local function check_server()
  local echoes = require('echoes_lsp')
  health.start('Server')
  local config = vim.lsp.config[echoes.name]
  if not config then
    health.error('no echoes_lsp config', {
      "Put the plugin on 'runtimepath' (it has lsp/echoes_lsp.lua), or define the config with vim.lsp.config('echoes_lsp', { ... }).",
    })
    return nil
  end
  if vim.lsp.is_enabled(echoes.name) then
    health.ok('the echoes_lsp config is enabled')
  else
    health.warn('the echoes_lsp config is not enabled', { "Call vim.lsp.enable('echoes_lsp') in your config." })
  end
  local problem = echoes.server_problem()
  if problem then
    health.error('the server cannot start: ' .. problem, { 'To fix it, ' .. echoes.install_hint .. '.' })
    health.info('PATH as Neovim sees it: ' .. (vim.env.PATH or ''))
    return nil
  end
  local cmd = config.cmd == echoes.cmd and echoes.resolve_cmd() or config.cmd
  if type(cmd) ~= 'table' then
    health.info('cmd is a function of your own: its command cannot be shown')
    return nil
  end
  local shown = table.concat(cmd, ' ')
  local version, err = nil, nil
  if cmd[#cmd] == 'serve' then
    local probe = vim.deepcopy(cmd)
    probe[#probe] = '--version'
    version, err = output(probe)
  end
  if version then
    health.ok(('server command: `%s` (%s)'):format(shown, version))
  elseif err then
    health.error(('server command: `%s`; `--version` failed: %s'):format(shown, err), { 'To fix it, ' .. echoes.install_hint .. '.' })
  else
    health.info(('server command: `%s` (its version is not asked: the command does not end in `serve`)'):format(shown))
  end
  local python = python_of(cmd)
  if python then
    local about = output({ python, '-c', 'import sys; print("%d.%d.%d" % sys.version_info[:3], sys.executable)' })
    local major, minor = (about or ''):match('^(%d+)%.(%d+)')
    if not about then
      health.warn(('the Python that runs it (%s) does not answer'):format(python))
    elseif tonumber(major) > 3 or (tonumber(major) == 3 and tonumber(minor) >= 9) then
      health.ok('Python that runs it: ' .. about)
    else
      health.error('Python that runs it: ' .. about .. ' (echoes-lsp needs 3.9 or newer)', { 'Install echoes-lsp with Python 3.9+.' })
    end
  else
    health.info('the Python that runs the server could not be told from its command')
  end
  return version
end

---@param server_version string?
local function check_buffer(server_version)
  local echoes = require('echoes_lsp')
  health.start('Current buffer')
  local bufnr = checked_buffer()
  if not bufnr then
    health.info('no file buffer: open a page of a vault, then run :checkhealth echoes_lsp again')
    return
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  local root = echoes.root_dir(bufnr)
  if not root then
    health.warn(('%s is not inside an EchoesVault/ folder'):format(vim.fn.fnamemodify(name, ':~')), {
      'The server attaches only to Markdown files inside EchoesVault/; open a page of a vault.',
    })
    return
  end
  local vault = vim.fs.joinpath(root, echoes.vault_dir)
  health.ok(('vault: %s (buffer %s)'):format(vim.fn.fnamemodify(vault, ':~'), vim.fn.fnamemodify(name, ':t')))
  local init_advice = 'Initialize the vault: `python3 .echoes-vault/echoes_vault.py --workspace . init`, or `echoes-lsp runtime --workspace . init`.'

  local marker_path = vim.fs.joinpath(vault, '.echoes-vault.json')
  local ok, marker = pcall(function()
    return vim.json.decode(table.concat(vim.fn.readfile(marker_path), '\n'))
  end)
  local server_protocol = (server_version or ''):match('Protocol ([%d.]+)')
  if not ok or type(marker) ~= 'table' then
    health.error('no readable marker EchoesVault/.echoes-vault.json: the vault is read-only (EV700)', { init_advice })
  else
    local protocol = tostring(marker.protocolVersion)
    if server_protocol and protocol ~= server_protocol then
      health.warn(('marker: protocol %s, the server implements %s: the vault is read-only (EV700)'):format(protocol, server_protocol), {
        'Use an echoes-lsp that implements protocol ' .. protocol .. ', or upgrade the vault explicitly.',
      })
    else
      health.ok(('marker: EchoesVault/.echoes-vault.json, protocol %s'):format(protocol))
    end
  end

  local runtime = vim.fs.joinpath(root, '.echoes-vault', 'echoes_vault.py')
  local rok, lines = pcall(vim.fn.readfile, runtime)
  local engine = rok and (table.concat(lines, '\n'):match('\nENGINE_VERSION = "([^"]+)"')) or nil
  local server_engine = (server_version or ''):match('engine ([%d.]+)')
  if not rok then
    health.error('no project runtime .echoes-vault/echoes_vault.py', { init_advice })
  elseif not engine then
    health.warn('project runtime .echoes-vault/echoes_vault.py: engine version not found', { init_advice })
  elseif server_engine and vim.version.lt(engine, server_engine) then
    health.warn(('project runtime: engine %s, older than the server\'s %s'):format(engine, server_engine), {
      'Upgrade it explicitly: `echoes-lsp runtime --workspace . upgrade`.',
    })
  else
    health.ok(('project runtime: .echoes-vault/echoes_vault.py, engine %s'):format(engine))
  end

  local client = vim.lsp.get_clients({ name = echoes.name, bufnr = bufnr })[1]
  if client then
    health.ok(('client attached: id %d, root %s'):format(client.id, vim.fn.fnamemodify(client.root_dir or '?', ':~')))
  else
    health.warn('no echoes_lsp client is attached to this buffer', {
      'Check the Server section above; `:set ft?` must be markdown; the LSP log: :lua vim.cmd.tabedit(vim.lsp.log.get_filename())',
    })
  end
end

function M.check()
  check_neovim()
  local version = check_server()
  check_buffer(version)
end

return M
