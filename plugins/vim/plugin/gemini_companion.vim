" gemini-companion: Gemini CLI's IDE mode for Vim (open files, cursor,
" selection, proposed edits as native diffs), through gemini-ide-companion.
" See :help gemini-companion. The work is done in autoload/ (vim9script).
if exists('g:loaded_gemini_companion')
  finish
endif
let g:loaded_gemini_companion = 1
if v:version < 900 || !has('vim9script') || !has('job') || !has('channel') || !has('terminal') || !has('popupwin')
  echohl WarningMsg
  echomsg 'gemini-companion needs Vim 9.0 or newer with +job +channel +terminal +popupwin'
  echohl None
  finish
endif

command! -bar GeminiStart call gemini_companion#Start()
command! -bar GeminiStop call gemini_companion#Stop()
command! -bar GeminiRestart call gemini_companion#Restart()
command! -bar GeminiStatus call gemini_companion#Status()
command! -bar GeminiDoctor call gemini_companion#Doctor()
command! -bar -bang -range -nargs=* GeminiCli call gemini_companion#Cli([<f-args>], <bang>0, <range>, <line1>, <line2>)
command! -bar GeminiToggle call gemini_companion#Toggle()
command! -bar -nargs=? -complete=customlist,gemini_companion#CompleteProposals GeminiAccept call gemini_companion#Accept(<q-args>)
command! -bar -nargs=? -complete=customlist,gemini_companion#CompleteProposals GeminiReject call gemini_companion#Reject(<q-args>)

nnoremap <silent> <Plug>(GeminiCli) <Cmd>call gemini_companion#Cli([], 0)<CR>
xnoremap <silent> <Plug>(GeminiCli) :GeminiCli<CR>
tnoremap <silent> <Plug>(GeminiToggle) <Cmd>call gemini_companion#Toggle()<CR>
nnoremap <silent> <Plug>(GeminiToggle) <Cmd>call gemini_companion#Toggle()<CR>
nnoremap <silent> <Plug>(GeminiAccept) <Cmd>call gemini_companion#Accept()<CR>
nnoremap <silent> <Plug>(GeminiReject) <Cmd>call gemini_companion#Reject()<CR>
nnoremap <silent> <Plug>(GeminiStatus) <Cmd>call gemini_companion#Status()<CR>

augroup GeminiCompanion
  autocmd!
  autocmd VimEnter * call gemini_companion#AutoStart()
  autocmd VimLeavePre * if get(g:, 'gemini_companion_active', 0) | call gemini_companion#Leave() | endif
augroup END
" Loaded after startup (:packadd, a plugin manager's lazy load): start now.
if v:vim_did_enter
  call gemini_companion#AutoStart()
endif
