-- echoes-lsp: the EchoesVault language server.
--
-- A `lsp/*.lua` config (Neovim 0.11+): with this directory on 'runtimepath',
-- `vim.lsp.enable('echoes_lsp')` starts the server for Markdown files inside an `EchoesVault/`.
-- Override any field with `vim.lsp.config('echoes_lsp', { ... })`.

---@type vim.lsp.Config
return {
  -- `echoes-lsp serve` when `echoes-lsp` is on PATH, else `python3 -m echoes_lsp serve` when that
  -- works; when neither does, one message says how to install the server. Replace it with a list
  -- to choose the command, e.g. `{ '/path/to/venv/bin/echoes-lsp', 'serve' }`.
  cmd = require('echoes_lsp').cmd,
  filetypes = { 'markdown' },

  -- Documentation only: `root_dir` below wins. The workspace is the directory that holds
  -- `EchoesVault/`; pages may sit deep inside it (pages/, daily/YYYY-MM-DD/, raw/...).
  root_markers = { 'EchoesVault' },

  -- Attach only to files inside an `EchoesVault/` folder, with the folder's parent as the root.
  root_dir = function(bufnr, on_dir)
    local echoes = require('echoes_lsp')
    local root = echoes.root_dir(bufnr)
    if root and echoes.check_server() then
      on_dir(root)
    end
  end,

  -- Answered to the server's `workspace/configuration` requests (section `echoes`).
  settings = {
    echoes = {
      runtime = {
        -- python = '/usr/bin/python3', -- interpreter for the project runtime (default: the server's)
        timeout = 30, -- seconds
      },
      diagnostics = {
        debounce = 150, -- milliseconds
        -- severity = { EV301 = 'hint', EV402 = 'off' },
        maxPerDocument = 1000, -- diagnostics per document, the most severe first (0 = no limit)
      },
      secrets = { enabled = true },
      exclude = {}, -- globs relative to the vault
      agent = 'echoes-lsp', -- agent name recorded by the runtime
      watch = { pollInterval = 2 }, -- seconds between disk checks (0 = off)
      index = { hydrateOnSave = true }, -- refresh index.md through the runtime after a save
      inlayHints = {
        blockText = true, -- after [[page#^block]], the first line of that block
        deprecated = true, -- after a link to a deprecated page, `deprecated → replacement`
      },
    },
  },

  -- Sent in `initialize`. Left empty, the settings above are sent instead (see `before_init`), so
  -- the server has them before it scans the vault.
  init_options = {},

  before_init = function(params, config)
    if vim.tbl_isempty(params.initializationOptions or {}) then
      params.initializationOptions = vim.deepcopy(config.settings or {})
    end
  end,

  -- Diagnostics arrive by push. echoes-lsp uses pull diagnostics only with clients that it can ask
  -- to re-pull (`workspace/diagnostic/refresh`), which Neovim 0.11 cannot: pages that link to a
  -- changed page would otherwise keep stale diagnostics. Should a server offer pull diagnostics
  -- anyway, Neovim would pull on every edit and keep those results in a second namespace, showing
  -- each diagnostic twice; this keeps Neovim to the pushed ones whenever it cannot re-pull.
  on_init = function(client)
    require('echoes_lsp').prefer_push_diagnostics(client)
  end,

  handlers = {
    -- Status for `require('echoes_lsp').statusline()` and the `User EchoesStatusChanged` event.
    ['echoes/statusChanged'] = function(err, result, ctx)
      require('echoes_lsp').on_status(err, result, ctx)
    end,
    -- Shown as by default; remembered so that a failed command is not reported twice.
    ['window/showMessage'] = function(err, params, ctx)
      return require('echoes_lsp').on_show_message(err, params, ctx)
    end,
  },

  -- Code actions that save ("Save through EchoesVault", "Overwrite the disk version ...") run the
  -- same save as `:EchoesSave`, so the buffer is reloaded and clean afterwards.
  commands = {
    ['echoes.savePage'] = function(command, ctx)
      require('echoes_lsp').save_command(command, ctx)
    end,
  },
}
