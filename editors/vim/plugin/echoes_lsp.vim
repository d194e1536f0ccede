" echoes-lsp for Vim 9 with ALE: EchoesVault pages get the echoes-lsp language server.
"
" The linter is `ale_linters/markdown/echoes_lsp.vim` (ALE loads it for Markdown buffers); this
" file adds the commands and prepares vault buffers. Settings (all optional):
"   g:echoes_lsp_executable            the server program (default 'echoes-lsp')
"   g:echoes_lsp_command               its command line, %e = the executable (default '%e serve')
"   g:echoes_lsp_settings              server settings, merged over echoes_lsp#default_settings()
"   g:echoes_lsp_complete_on_brackets  typing [[ opens the page menu (default 1)
"   g:echoes_lsp_select_func           name of a function(prompt, items) -> index, for choices

if exists('g:loaded_echoes_lsp')
    finish
endif

let g:loaded_echoes_lsp = 1

command! -bar EchoesSave call echoes_lsp#save()
command! -bar EchoesCodeAction call echoes_lsp#code_action()
command! -bar EchoesStatus call echoes_lsp#status()
command! -bar EchoesDiffDisk call echoes_lsp#diff_with_disk()
command! -bar EchoesRebuildIndex call echoes_lsp#rebuild_index()

augroup echoes_lsp
    autocmd!
    " Registered after `filetype plugin on` (vimrc), so it runs after the Markdown ftplugins.
    autocmd FileType markdown call echoes_lsp#setup_buffer()
augroup END
