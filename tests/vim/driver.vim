" Runs one scenario ($ECHOES_TEST_SCENARIO) in real Vim + ALE + echoes-lsp and writes what it
" observed to $ECHOES_TEST_OUT as JSON, then quits. Each step waits for its effect with a
" deadline (a failure names what never happened); nothing is asserted here.

let s:report = {'steps': [], 'selects': [], 'error': v:null}
let s:answers = []
let s:timeout = str2float($ECHOES_TEST_TIMEOUT_MS ?? '60000') / 1000.0
let s:pages = getcwd() . '/EchoesVault/pages'

function! s:step(name) abort
    call add(s:report.steps, a:name)
endfunction

" Wait until Cond() is true, or fail naming `what`.
function! s:wait(what, Cond) abort
    let l:deadline = reltimefloat(reltime()) + s:timeout

    while !a:Cond()
        if reltimefloat(reltime()) > l:deadline
            throw 'timed out waiting for ' . a:what
        endif

        sleep 20m
    endwhile
endfunction

" The choice function of the plugin (g:echoes_lsp_select_func): answers from s:answers, each
" the start of the item to pick ('' picks none), and records every question.
function! DriverSelect(prompt, items) abort
    let l:answer = empty(s:answers) ? '' : remove(s:answers, 0)
    let l:index = -1

    for l:i in range(len(a:items))
        if !empty(l:answer) && stridx(a:items[l:i], l:answer) == 0
            let l:index = l:i
            break
        endif
    endfor

    call add(s:report.selects, {'prompt': a:prompt, 'items': a:items,
    \   'chosen': l:index >= 0 ? a:items[l:index] : v:null})

    return l:index
endfunction

function! s:codes(buffer) abort
    return sort(map(copy(ale#engine#GetLoclist(a:buffer)), {_, item -> '' . get(item, 'code', '')}))
endfunction

function! s:messages() abort
    return split(execute('messages'), "\n")
endfunction

function! s:said(text) abort
    return !empty(filter(s:messages(), {_, line -> stridx(line, a:text) >= 0}))
endfunction

function! s:read(path) abort
    return join(readfile(a:path, 'b'), "\n")
endfunction

function! s:open(name) abort
    execute 'edit' fnameescape(s:pages . '/' . a:name)
    let l:buffer = bufnr('')
    " The server is up and has the page once it answers a request about it.
    let s:answered = 0
    let l:params = {'textDocument': {'uri': ale#util#ToURI(expand('%:p'))}}
    call echoes_lsp#request(l:buffer, 'textDocument/documentSymbol', l:params,
    \   {error, result -> execute('let s:answered = 1')})
    call s:wait('echoes-lsp to answer about ' . a:name, {-> s:answered})

    return l:buffer
endfunction

function! s:wait_codes(buffer, what, Cond) abort
    call s:wait(a:what, {-> a:Cond(s:codes(a:buffer))})

    return s:codes(a:buffer)
endfunction

function! s:preview_windows() abort
    return filter(range(1, winnr('$')), 'getwinvar(v:val, ''&previewwindow'')')
endfunction

function! s:buffer_text(buffer) abort
    return join(getbufline(a:buffer, 1, '$'), "\n")
endfunction

" Scenarios ---------------------------------------------------------------------------------------

" A page with defects: diagnostics, the omnifunc after the ftplugins, completion, a code action.
function! s:scenario_defects() abort
    call s:step('open missing-fields.md')
    let l:buffer = s:open('missing-fields.md')
    let s:report.codes = s:wait_codes(l:buffer, 'EV300 on the page', {codes -> index(codes, 'EV300') >= 0})
    let s:report.loclist = ale#engine#GetLoclist(l:buffer)
    let s:report.omnifunc = &l:omnifunc
    let s:report.bracket_mapping = maparg('[[', 'i')

    call s:step('complete after [[session-to (a name with a hyphen)')
    call append('$', ['', 'See [[session-to'])
    call feedkeys("GA\<C-x>\<C-o>\<Esc>", 'xt')
    let s:report.completed_prefix = getline('$')

    call s:step('complete after non-ASCII text (LSP counts UTF-16 units, Vim bytes)')
    call append('$', ['', 'Café → 𝄞 [[session-to, then more'])
    call cursor(line('$'), 1)
    call search('session-t\zso', 'c', line('$'))
    call feedkeys("a\<C-x>\<C-o>\<Esc>", 'xt')
    let s:report.completed_after_unicode = getline('$')

    call s:step('type [[ (the insert-mode mapping opens the menu)')
    call feedkeys("o[[\<Esc>", 'xt')
    let s:report.completed_brackets = getline('$')

    call s:step('code action: insert the missing frontmatter fields')
    " EV104 is reported on the frontmatter's closing line.
    call cursor(s:report.loclist[0].lnum, 1)
    call add(s:answers, 'Insert the missing frontmatter fields')
    EchoesCodeAction
    call s:wait('the fields to be inserted', {-> s:buffer_text(l:buffer) =~# '\nstatus: '})
    let s:report.after_action = s:buffer_text(l:buffer)
endfunction

" Go to definition and hover on a wikilink, through ALE's own commands.
function! s:scenario_navigation() abort
    call s:step('open auth-architecture.md')
    let l:buffer = s:open('auth-architecture.md')
    call search('\[\[session-tokens\]\]')
    call cursor(line('.'), col('.') + 3)

    call s:step(':ALEHover')
    ALEHover
    call s:wait('the hover in the preview window', {-> !empty(s:preview_windows())})
    let s:report.hover = getbufline(winbufnr(s:preview_windows()[0]), 1, '$')
    pclose

    call s:step(':ALEGoToDefinition')
    ALEGoToDefinition
    call s:wait('session-tokens.md to open', {-> expand('%:t') is# 'session-tokens.md'})
    let s:report.definition = {'file': expand('%:p'), 'line': line('.')}
endfunction

" :EchoesSave writes through the runtime and leaves the buffer clean.
function! s:scenario_save() abort
    call s:step('open session-tokens.md')
    let l:buffer = s:open('session-tokens.md')
    let s:report.index_before = s:read(getcwd() . '/EchoesVault/index.md')
    call setline(search('^summary:'), 'summary: Session storage, token lifetime, rotation and revocation.')
    call append('$', ['', '## Revocation', '', 'Logout revokes every token.'])
    let s:report.modified_before = &modified

    call s:step(':EchoesSave')
    EchoesSave
    call s:wait('the buffer to be saved and clean', {-> !getbufvar(l:buffer, '&modified')})
    let s:report.buffer = s:buffer_text(l:buffer)
    let s:report.disk = s:read(s:pages . '/session-tokens.md')
    let s:report.index_after = s:read(getcwd() . '/EchoesVault/index.md')
    let s:report.modified_after = getbufvar(l:buffer, '&modified')
    let s:report.same_buffer = bufnr('') == l:buffer
    call s:wait('the saved message', {-> s:said('EchoesVault: updated session-tokens.md')})
    call s:wait('a status from the server', {-> !empty(echoes_lsp#statusline())})
    let s:report.statusline = echoes_lsp#statusline()

    call s:step(':EchoesStatus')
    EchoesStatus
    call s:wait('the status card in the preview window', {-> !empty(s:preview_windows())})
    let s:report.status_card = getbufline(winbufnr(s:preview_windows()[0]), 1, '$')
endfunction

" The statusline names its two counts: once the vault is loaded, then after an edit that adds a
" broken link (one problem in an open file, which leaves the vault's files as they were).
function! s:scenario_status_counts() abort
    call s:step('open session-tokens.md')
    let l:buffer = s:open('session-tokens.md')
    call s:wait('a status of the loaded vault', {-> get(echoes_lsp#last_status(), 'ready', v:false)})
    let s:report.loaded_status = echoes_lsp#last_status()
    let s:report.loaded_statusline = echoes_lsp#statusline()

    call s:step('add a broken link')
    call append('$', ['', 'See [[no-such-page]].'])
    " A request sends the buffer's changes to the server first.
    let s:answered = 0
    let l:params = {'textDocument': {'uri': ale#util#ToURI(expand('%:p'))}}
    call echoes_lsp#request(l:buffer, 'textDocument/documentSymbol', l:params,
    \   {error, result -> execute('let s:answered = 1')})
    call s:wait('a status counting the open problem',
    \   {-> get(echoes_lsp#last_status(), 'openProblemCount', 0) > 0})
    let s:report.edited_status = echoes_lsp#last_status()
    let s:report.edited_statusline = echoes_lsp#statusline()
endfunction

" The stale save: refused with EV701 until the person explicitly overwrites, by :EchoesSave and
" by the code action that asks first.
function! s:scenario_stale() abort
    call s:step('open session-tokens.md')
    let l:path = s:pages . '/session-tokens.md'
    let l:buffer = s:open('session-tokens.md')
    call s:step('change the file on disk behind the editor')
    let l:behind = substitute(s:read(l:path), 'Refresh tokens rotate on every use\.',
    \   'Refresh tokens rotate daily (changed by another writer).', '')
    call writefile(split(l:behind, "\n", 1), l:path, 'b')
    let s:report.behind = l:behind
    call append('$', ['', 'Edited in Vim.'])

    call s:step(':EchoesSave, then cancel')
    call add(s:answers, 'Cancel')
    EchoesSave
    call s:wait('the cancellation', {-> s:said('save cancelled')})
    let s:report.refused = {
    \   'disk': s:read(l:path),
    \   'modified': getbufvar(l:buffer, '&modified'),
    \   'codes': s:wait_codes(l:buffer, 'EV701 on the buffer', {codes -> index(codes, 'EV701') >= 0}),
    \   'messages': s:messages(),
    \}

    call s:step('code action: open the disk version beside the buffer')
    call cursor(1, 1)
    call add(s:answers, 'Copy the disk version')
    EchoesCodeAction
    call s:wait('the disk version window', {-> bufnr('') != l:buffer})
    let s:report.disk_version = {'name': bufname(''), 'text': s:buffer_text(bufnr('')),
    \   'diff': &l:diff, 'page_diff': getwinvar(bufwinid(l:buffer), '&diff'), 'modifiable': &l:modifiable}
    close
    call win_gotoid(bufwinid(l:buffer))
    diffoff

    call s:step('code action: overwrite, asked in Vim, declined')
    call cursor(1, 1)
    call extend(s:answers, ['Overwrite the disk version with this buffer', 'Cancel'])
    EchoesCodeAction
    call s:wait('the declined overwrite', {-> len(filter(s:messages(), 'v:val =~# ''save cancelled''')) >= 2})
    let s:report.declined = {'disk': s:read(l:path), 'modified': getbufvar(l:buffer, '&modified')}

    call s:step(':EchoesSave, then overwrite')
    call add(s:answers, 'Overwrite')
    EchoesSave
    call s:wait('the confirmed overwrite', {-> !getbufvar(l:buffer, '&modified')})
    let s:report.overwritten = {
    \   'disk': s:read(l:path),
    \   'buffer': s:buffer_text(l:buffer),
    \   'modified': getbufvar(l:buffer, '&modified'),
    \   'codes': s:wait_codes(l:buffer, 'EV701 to clear', {codes -> index(codes, 'EV701') < 0}),
    \}
endfunction

" No server to start, and a Markdown file outside any vault: messages, never an error.
function! s:scenario_no_server() abort
    let g:echoes_lsp_executable = '/nonexistent/echoes-lsp'
    call s:step('open a page without a server')
    execute 'edit' fnameescape(s:pages . '/session-tokens.md')
    let s:report.page = {'omnifunc': &l:omnifunc}
    EchoesSave
    let s:report.page.messages = s:messages()
    call s:step('open a second page')
    execute 'edit' fnameescape(s:pages . '/auth-architecture.md')
    call s:step('open README.md, outside EchoesVault/')
    edit README.md
    let s:report.outside = {'omnifunc': &l:omnifunc, 'mapping': maparg('[[', 'i')}
    EchoesSave
endfunction

" The documented vimrc alone: the plugin from `echoes-lsp editor-dir vim`, the server from PATH.
function! s:scenario_documented() abort
    call s:step('open missing-fields.md')
    let l:buffer = s:open('missing-fields.md')
    let s:report.codes = s:wait_codes(l:buffer, 'EV300 on the page', {codes -> index(codes, 'EV300') >= 0})
    let s:report.executable = exepath(echoes_lsp#executable(l:buffer))
    let s:report.plugin = globpath(&runtimepath, 'plugin/echoes_lsp.vim', 0, 1)
    let s:report.omnifunc = &l:omnifunc
endfunction

" Running ----------------------------------------------------------------------------------------

function! s:finish() abort
    let s:report.messages = s:messages()
    call writefile([json_encode(s:report)], $ECHOES_TEST_OUT)
    qall!
endfunction

function! s:drive(...) abort
    try
        call call('s:scenario_' . $ECHOES_TEST_SCENARIO, [])
    catch
        let s:report.error = v:exception . ' (' . v:throwpoint . ')'
    endtry

    call s:finish()
endfunction

autocmd VimEnter * call timer_start(0, function('s:drive'))
