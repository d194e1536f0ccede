" echoes-lsp: the EchoesVault language server, as an ALE linter for Markdown.
"
" ALE loads this file when it first lists the linters of a Markdown buffer. The server starts
" only for files inside an `EchoesVault/` folder: elsewhere the project root is empty, and ALE
" starts nothing. Settings: `g:echoes_lsp_executable`, `g:echoes_lsp_command`,
" `g:echoes_lsp_settings` (see `plugin/echoes_lsp.vim`).

call ale#linter#Define('markdown', {
\   'name': 'echoes_lsp',
\   'lsp': 'stdio',
\   'executable': {buffer -> echoes_lsp#executable(buffer)},
\   'command': {buffer -> echoes_lsp#command(buffer)},
\   'project_root': {buffer -> echoes_lsp#root(buffer)},
\   'language': 'markdown',
\   'initialization_options': {buffer -> echoes_lsp#lsp_config(buffer)},
\   'lsp_config': {buffer -> echoes_lsp#lsp_config(buffer)},
\})
