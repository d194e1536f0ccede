" echoes-lsp for Vim with ALE: the functions behind the linter definition
" (`ale_linters/markdown/echoes_lsp.vim`) and the `:Echoes*` commands (`plugin/echoes_lsp.vim`).
" Requests go through ALE's connection to the server, so one server runs per workspace.

scriptencoding utf-8

let s:vault_dir = 'EchoesVault'
" Request id -> the function that takes (error, result).
let s:pending = {}
" The last `echoes/statusChanged` of the server, for echoes_lsp#statusline().
let s:status = {}
let s:warned_missing = 0

" Settings ---------------------------------------------------------------------------------------

" The server's settings with their defaults, as `g:echoes_lsp_settings` overrides them.
function! echoes_lsp#default_settings() abort
    return {
    \   'runtime': {'timeout': 30},
    \   'diagnostics': {'debounce': 150, 'maxPerDocument': 1000},
    \   'secrets': {'enabled': v:true},
    \   'exclude': [],
    \   'agent': 'echoes-lsp',
    \   'watch': {'pollInterval': 2},
    \   'index': {'hydrateOnSave': v:true},
    \   'inlayHints': {'blockText': v:true, 'deprecated': v:true},
    \}
endfunction

" `base` with `override` merged in, key by key (dictionaries are merged, anything else replaced).
function! s:merged(base, override) abort
    let l:result = deepcopy(a:base)

    for [l:key, l:Value] in items(a:override)
        if type(l:Value) is v:t_dict && type(get(l:result, l:key)) is v:t_dict
            let l:result[l:key] = s:merged(l:result[l:key], l:Value)
        else
            let l:result[l:key] = deepcopy(l:Value)
        endif
    endfor

    return l:result
endfunction

" Section `echoes`, sent as initializationOptions and in workspace/didChangeConfiguration (ALE
" answers no workspace/configuration request).
function! echoes_lsp#lsp_config(buffer) abort
    let l:own = getbufvar(a:buffer, 'echoes_lsp_settings', get(g:, 'echoes_lsp_settings', {}))

    return {'echoes': s:merged(echoes_lsp#default_settings(), l:own)}
endfunction

function! echoes_lsp#executable(buffer) abort
    return getbufvar(a:buffer, 'echoes_lsp_executable', get(g:, 'echoes_lsp_executable', 'echoes-lsp'))
endfunction

function! echoes_lsp#command(buffer) abort
    return getbufvar(a:buffer, 'echoes_lsp_command', get(g:, 'echoes_lsp_command', '%e serve'))
endfunction

" Where a buffer belongs -------------------------------------------------------------------------

" The workspace of a file inside an `EchoesVault/` folder (the directory that holds the innermost
" one), else ''. ALE starts no server where this is empty.
function! echoes_lsp#root(buffer) abort
    if !empty(getbufvar(a:buffer, '&buftype'))
        return ''
    endif

    let l:name = bufname(a:buffer)

    if empty(l:name) || l:name =~# '^\a[[:alnum:]+.-]*://'
        return ''
    endif

    let l:path = fnamemodify(l:name, ':p')

    return matchstr(l:path, '\V\^\.\*\ze/' . s:vault_dir . '/')
endfunction

" Make a vault buffer ready: ALE's omnifunc replaced by ours (Vim's html ftplugin, which the
" markdown one loads, sets its own), and `[[` opening the completion menu. Runs after ftplugins.
function! echoes_lsp#setup_buffer() abort
    let l:buffer = bufnr('')

    if empty(echoes_lsp#root(l:buffer))
        return
    endif

    setlocal omnifunc=echoes_lsp#complete

    if get(g:, 'echoes_lsp_complete_on_brackets', 1)
        inoremap <buffer> [[ [[<C-x><C-o>
    endif

    if s:server_can_start(l:buffer)
        " Hear the server's status from the start, not only after a first command.
        call ale#lsp_linter#StartLSP(l:buffer, s:linter(l:buffer), function('s:listen'))
    endif
endfunction

" Whether ALE can start the server for `buffer`; says once what keeps it from starting.
function! s:server_can_start(buffer) abort
    if !exists('g:loaded_ale')
        let l:problem = 'ALE is not loaded (packadd! ale, or your plugin manager): no language server'
    elseif !executable(echoes_lsp#executable(a:buffer))
        let l:problem = printf('%s is not executable: install the server (pipx install echoes-lsp) '
        \   . 'or set g:echoes_lsp_executable', echoes_lsp#executable(a:buffer))
    else
        " Left out of g:ale_linters on purpose, or ready.
        return !empty(s:linter(a:buffer))
    endif

    if !s:warned_missing
        let s:warned_missing = 1
        call s:warn(l:problem)
    endif

    return 0
endfunction

function! s:listen(linter, details) abort
    call ale#lsp#RegisterCallback(a:details.connection_id, 'echoes_lsp#on_message')
endfunction

" Messages ---------------------------------------------------------------------------------------

function! s:info(message) abort
    echomsg 'EchoesVault: ' . a:message
endfunction

function! s:warn(message) abort
    echohl WarningMsg
    echomsg 'EchoesVault: ' . a:message
    echohl None
endfunction

function! s:error(message) abort
    echohl ErrorMsg
    echomsg 'EchoesVault: ' . a:message
    echohl None
endfunction

function! s:error_text(error) abort
    return type(a:error) is v:t_dict ? get(a:error, 'message', string(a:error)) : string(a:error)
endfunction

" A choice among `items`: `g:echoes_lsp_select_func` (a function name) when set, else a numbered
" list. Returns the 0-based index, -1 for none.
function! s:select(prompt, items) abort
    let l:Func = get(g:, 'echoes_lsp_select_func', '')

    if !empty(l:Func)
        return call(l:Func, [a:prompt, a:items])
    endif

    let l:lines = [a:prompt] + map(copy(a:items), {index, item -> (index + 1) . '. ' . item})
    let l:choice = inputlist(l:lines)

    return l:choice >= 1 && l:choice <= len(a:items) ? l:choice - 1 : -1
endfunction

" Requests through ALE ---------------------------------------------------------------------------

function! s:linter(buffer) abort
    for l:linter in ale#linter#Get(getbufvar(a:buffer, '&filetype'))
        if l:linter.name is# 'echoes_lsp'
            return l:linter
        endif
    endfor

    return {}
endfunction

" Send `method` with `params` to the buffer's server (ALE starts it when needed) and call
" `Callback(error, result)` with the answer. Returns 0 when no server can run for the buffer.
function! echoes_lsp#request(buffer, method, params, Callback) abort
    if empty(echoes_lsp#root(a:buffer))
        call s:error('this buffer is not inside an EchoesVault/ folder')

        return 0
    endif

    let l:linter = s:linter(a:buffer)

    if empty(l:linter)
        call s:error('echoes-lsp is not an ALE linter for this buffer (is ALE loaded, and '
        \   . 'echoes_lsp in g:ale_linters.markdown?)')

        return 0
    endif

    let l:Ready = function('s:send', [a:method, a:params, a:Callback])

    if !ale#lsp_linter#StartLSP(a:buffer, l:linter, l:Ready)
        call s:error('the server did not start for this buffer; :ALEInfo says why')

        return 0
    endif

    return 1
endfunction

function! s:send(method, params, Callback, linter, details) abort
    let l:connection = a:details.connection_id
    call ale#lsp#RegisterCallback(l:connection, 'echoes_lsp#on_message')
    " The server answers from the text it has: send the buffer's pending changes first.
    call ale#lsp#NotifyForChanges(l:connection, a:details.buffer)
    let l:id = ale#lsp#Send(l:connection, [0, a:method, a:params])

    if l:id > 0
        let s:pending[l:id] = a:Callback
    endif
endfunction

" Every message from the server, as ALE hands it on: answers to our requests, and the status.
function! echoes_lsp#on_message(connection, message) abort
    if get(a:message, 'method', '') is# 'echoes/statusChanged'
        let s:status = get(a:message, 'params', {})

        return
    endif

    if has_key(a:message, 'method') || !has_key(s:pending, get(a:message, 'id', -1))
        return
    endif

    let l:Callback = remove(s:pending, a:message.id)
    call l:Callback(get(a:message, 'error', v:null), get(a:message, 'result', v:null))
endfunction

function! s:uri(buffer) abort
    return ale#util#ToURI(expand('#' . a:buffer . ':p'))
endfunction

function! s:execute(buffer, command, argument, Callback) abort
    let l:params = {'command': a:command, 'arguments': [a:argument]}

    return echoes_lsp#request(a:buffer, 'workspace/executeCommand', l:params, a:Callback)
endfunction

" Completion -------------------------------------------------------------------------------------

" UTF-16 code units before byte column `col` (1-based) of `text`, as LSP counts characters.
function! s:utf16_units(text, col) abort
    let l:before = strpart(a:text, 0, a:col - 1)

    return strchars(l:before) + len(filter(str2list(l:before), 'v:val > 0xFFFF'))
endfunction

" The 0-based byte index of UTF-16 position `units` in `text`.
function! s:byte_index(text, units) abort
    let l:count = 0
    let l:index = 0

    for l:char in str2list(a:text)
        if l:count >= a:units
            break
        endif

        let l:count += l:char > 0xFFFF ? 2 : 1
        let l:index += len(list2str([l:char]))
    endfor

    return l:index
endfunction

function! s:completion_items(result) abort
    if type(a:result) is v:t_dict
        return get(a:result, 'items', [])
    endif

    return type(a:result) is v:t_list ? a:result : []
endfunction

function! s:on_completion(error, result) abort
    let s:completion = a:error is v:null ? s:completion_items(a:result) : []
endfunction

" The byte index where an item's text edit starts; `cursor` for an item without one.
function! s:edit_start(item, line, cursor) abort
    let l:range = get(get(a:item, 'textEdit', {}), 'range', {})

    return has_key(l:range, 'start') ? s:byte_index(a:line, l:range.start.character) : a:cursor
endfunction

" A Vim completion item that puts the item's text where its edit starts, written from `start`
" (the items' common start column) on.
function! s:vim_item(item, line, start, cursor) abort
    let l:text = get(get(a:item, 'textEdit', {}), 'newText', get(a:item, 'insertText', a:item.label))
    let l:at = s:edit_start(a:item, a:line, a:cursor)
    let l:doc = get(a:item, 'documentation', '')

    return {
    \   'word': strpart(a:line, a:start, l:at - a:start) . l:text,
    \   'abbr': a:item.label,
    \   'menu': get(a:item, 'detail', ''),
    \   'info': type(l:doc) is v:t_dict ? get(l:doc, 'value', '') : l:doc,
    \   'icase': 1,
    \   'dup': 1,
    \}
endfunction

" 'omnifunc' for vault buffers: the server's items placed where its text edits say (ALE's own
" omnifunc starts at the last word character, which cuts `[[session-to` after the `-`).
function! echoes_lsp#complete(findstart, base) abort
    if !a:findstart
        return s:completion_words
    endif

    let l:buffer = bufnr('')
    let l:line = getline('.')
    let l:position = {'line': line('.') - 1, 'character': s:utf16_units(l:line, col('.'))}
    let l:params = {'textDocument': {'uri': s:uri(l:buffer)}, 'position': l:position}
    let s:completion = v:null

    if !echoes_lsp#request(l:buffer, 'textDocument/completion', l:params, function('s:on_completion'))
        return -3
    endif

    let l:deadline = reltimefloat(reltime()) + get(g:, 'echoes_lsp_complete_timeout', 5000) / 1000.0

    while s:completion is v:null && reltimefloat(reltime()) < l:deadline
        sleep 10m
    endwhile

    let l:items = s:completion is v:null ? [] : s:completion

    if empty(l:items)
        return -3
    endif

    call sort(l:items, {a, b -> get(a, 'sortText', a.label) >? get(b, 'sortText', b.label) ? 1 : -1})
    let l:cursor = col('.') - 1
    let l:start = min(map(copy(l:items), {_, item -> s:edit_start(item, l:line, l:cursor)}))
    let s:completion_words = map(l:items, {_, item -> s:vim_item(item, l:line, l:start, l:cursor)})

    return l:start
endfunction

" Save through EchoesVault -----------------------------------------------------------------------

let g:echoes_lsp#stale_choices = [
\   'Overwrite the disk version with this buffer',
\   'Compare with the disk version (diff)',
\   'Reload the disk version (discard buffer changes)',
\   'Cancel (keep both as they are)',
\]

function! s:is_stale(error) abort
    if type(a:error) isnot v:t_dict
        return 0
    endif

    let l:data = get(a:error, 'data', {})

    return (type(l:data) is v:t_dict && get(l:data, 'code', '') is# 'EV701')
    \   || stridx(get(a:error, 'message', ''), 'EV701') >= 0
endfunction

" Run `command` in a window that shows `buffer` (the current one first).
function! s:in_buffer(buffer, command) abort
    if bufnr('') == a:buffer
        execute a:command
    elseif bufwinid(a:buffer) != -1
        call win_execute(bufwinid(a:buffer), a:command)
    else
        return 0
    endif

    return 1
endfunction

" `:EchoesSave`: write the buffer through the runtime (hash-checked upsert), then reload it so
" it is clean. `confirm` is v:true only after the person chose to overwrite a changed disk.
function! echoes_lsp#save(...) abort
    let l:buffer = get(a:000, 0, bufnr(''))
    let l:confirm = get(a:000, 1, v:null)
    let l:argument = {'uri': s:uri(l:buffer)}

    if l:confirm is v:true
        let l:argument.confirmOverwrite = v:true
    endif

    let l:Done = function('s:saved', [l:buffer, getbufvar(l:buffer, 'changedtick'), l:confirm])

    return s:execute(l:buffer, 'echoes.savePage', l:argument, l:Done)
endfunction

function! s:saved(buffer, tick, confirm, error, result) abort
    if a:error isnot v:null
        if s:is_stale(a:error) && a:confirm is v:null
            return s:offer_overwrite(a:buffer, a:error)
        endif

        return s:error('save failed: ' . s:error_text(a:error))
    endif

    let l:name = fnamemodify(bufname(a:buffer), ':t')
    let l:action = type(a:result) is v:t_dict ? get(a:result, 'action', 'saved') : 'saved'

    if getbufvar(a:buffer, 'changedtick') != a:tick
        return s:warn(printf('%s %s; the buffer changed meanwhile, so it was not reloaded',
        \   l:action, l:name))
    endif

    " The runtime wrote exactly the buffer's text: reload it so the buffer is not modified.
    if !s:in_buffer(a:buffer, 'silent edit!')
        call setbufvar(a:buffer, '&modified', 0)
    endif

    call s:info(printf('%s %s', l:action, l:name))
endfunction

function! s:offer_overwrite(buffer, error) abort
    let l:name = fnamemodify(bufname(a:buffer), ':t')
    call s:error(s:error_text(a:error))
    let l:prompt = printf('EV701: %s changed on disk since it was opened. What now?', l:name)
    let l:choice = s:select(l:prompt, g:echoes_lsp#stale_choices)

    if l:choice == 0
        " Explicit confirmation: the server replaces the disk version it finds now.
        call echoes_lsp#save(a:buffer, v:true)
    elseif l:choice == 1
        call echoes_lsp#diff_with_disk(a:buffer)
    elseif l:choice == 2
        call s:in_buffer(a:buffer, 'silent edit!')
    else
        call s:warn(printf('save cancelled; %s on disk was not changed', l:name))
    endif
endfunction

" The disk version of a page in a new window beside it, both in diff mode.
function! echoes_lsp#diff_with_disk(...) abort
    let l:buffer = get(a:000, 0, bufnr(''))
    let l:path = fnamemodify(bufname(l:buffer), ':p')
    let l:filetype = getbufvar(l:buffer, '&filetype')

    if bufwinid(l:buffer) != -1
        call win_gotoid(bufwinid(l:buffer))
    endif

    diffthis
    vertical new
    setlocal buftype=nofile bufhidden=wipe noswapfile
    call setline(1, filereadable(l:path) ? readfile(l:path) : [])
    setlocal nomodifiable
    let &l:filetype = l:filetype
    silent! execute 'file' fnameescape('echoes-disk://' . l:path)
    diffthis
endfunction

" Code actions -----------------------------------------------------------------------------------

" `:EchoesCodeAction`: the server's code actions at the cursor, chosen from a list. Saving
" actions run `:EchoesSave` (so the buffer is reloaded), the disk version (offered to ALE as a
" copy whose path is shown) opens in a diff, and the overwrite asks here: ALE answers neither
" window/showDocument nor window/showMessageRequest. Everything else is applied by ALE.
function! echoes_lsp#code_action() abort
    call ale#codefix#Execute(0, function('s:on_code_actions'))
endfunction

function! s:on_code_actions(data, items) abort
    let l:actions = map(filter(copy(a:items), 'v:val[0] is# ''lsp'''), 'v:val[1]')

    if empty(a:data) || empty(l:actions)
        return s:info('no code action here')
    endif

    let l:choice = s:select('Code actions:', map(copy(l:actions), 'v:val.title'))

    if l:choice >= 0
        call s:apply_action(a:data, l:actions[l:choice])
    endif
endfunction

function! s:apply_action(data, action) abort
    let l:command = get(a:action, 'command', {})
    let l:name = type(l:command) is v:t_dict ? get(l:command, 'command', '') : ''
    let l:argument = type(l:command) is v:t_dict ? get(get(l:command, 'arguments', []), 0, {}) : {}

    if l:name is# 'echoes.savePage'
        return s:save_action(a:data.buffer, get(l:argument, 'confirmOverwrite', v:null))
    elseif l:name is# 'echoes.showDiskVersion'
        return echoes_lsp#diff_with_disk(a:data.buffer)
    endif

    call ale#codefix#ApplyLSPCodeAction(a:data, a:action)
endfunction

" An overwrite chosen from the list is asked about once more here: the server takes the choice
" itself as the confirmation (ALE cannot be asked), and one keypress should not replace a page.
function! s:save_action(buffer, confirm) abort
    if a:confirm is# 'ask' || a:confirm is v:true
        let l:name = fnamemodify(bufname(a:buffer), ':t')
        let l:prompt = printf('%s changed on disk. Overwrite the disk version with your buffer?', l:name)

        if s:select(l:prompt, ['Overwrite', 'Cancel']) != 0
            return s:warn(printf('save cancelled; %s on disk was not changed', l:name))
        endif

        return echoes_lsp#save(a:buffer, v:true)
    endif

    return echoes_lsp#save(a:buffer, a:confirm is v:true ? v:true : v:null)
endfunction

" Status and other commands ----------------------------------------------------------------------

function! s:plural(count, one, many) abort
    return printf('%d %s', a:count, a:count == 1 ? a:one : a:many)
endfunction

" The last `echoes/statusChanged` the server sent (`integrity`, `issueCount`, `openProblemCount`,
" `pages`, ...); {} before any.
function! echoes_lsp#last_status() abort
    return deepcopy(s:status)
endfunction

" The vault's state for a statusline, each count named for what it counts as the other editors
" name it (docs/concepts.md): the diagnostics of the open pages and the vault files that need
" attention, e.g. "EchoesVault: 3 problems in open files · vault healthy"; '' before any status.
function! echoes_lsp#statusline() abort
    if empty(s:status)
        return ''
    endif

    let l:integrity = get(s:status, 'integrity', '?')

    if l:integrity is# 'read-only' || l:integrity is# 'uninitialized'
        return 'EchoesVault: ' . (l:integrity is# 'read-only' ? 'read-only' : 'not initialized')
    endif

    let l:problems = get(s:status, 'openProblemCount', 0)
    let l:issues = get(s:status, 'issueCount', 0)
    let l:vault = l:issues
    \   ? s:plural(l:issues, 'vault file needs', 'vault files need') . ' attention'
    \   : 'vault healthy'

    if l:problems
        return printf('EchoesVault: %s in open files · %s',
        \   s:plural(l:problems, 'problem', 'problems'), l:vault)
    endif

    return 'EchoesVault: ' . l:vault
    \   . (l:issues ? '' : ', ' . s:plural(get(s:status, 'pages', 0), 'page', 'pages'))
endfunction

function! s:show_markdown(title, error, result) abort
    if a:error isnot v:null
        return s:error(a:title . ' failed: ' . s:error_text(a:error))
    endif

    let l:text = type(a:result) is v:t_dict ? get(a:result, 'markdown', '') : ''

    if empty(l:text)
        return s:info(a:title . ': ' . json_encode(a:result))
    endif

    call ale#preview#Show(split(l:text, "\n"), {'filetype': 'markdown', 'stay_here': 1})
endfunction

" `:EchoesStatus`: the runtime's status card in the preview window.
function! echoes_lsp#status() abort
    let l:Show = function('s:show_markdown', ['status'])

    return s:execute(bufnr(''), 'echoes.status', {'format': 'card'}, l:Show)
endfunction

function! s:reported(title, error, result) abort
    if a:error isnot v:null
        return s:error(a:title . ' failed: ' . s:error_text(a:error))
    endif

    call s:info(a:title . ' done')
endfunction

" `:EchoesRebuildIndex`: regenerate index.md through the runtime.
function! echoes_lsp#rebuild_index() abort
    let l:buffer = bufnr('')
    let l:argument = {'workspace': ale#util#ToURI(echoes_lsp#root(l:buffer))}

    return s:execute(l:buffer, 'echoes.rebuildIndex', l:argument,
    \   function('s:reported', ['index rebuild']))
endfunction
