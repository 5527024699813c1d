vim9script
# Helpers the Go tests call through the control channel (sourced by the
# test vimrc): what a user sees, gathered in one call.

# The diff tab of path: its two windows' buffers, texts and diff flags.
def g:GicDiffTab(path: string): dict<any>
  # Until the tab exists the fields read empty, so that a condition polled
  # on them is false rather than an error.
  var out: dict<any> = {found: false, tabs: tabpagenr('$'), current_buf: bufnr(),
    diff: [], left: [], right: [], state: {}}
  for tab in range(1, tabpagenr('$'))
    var bufs = tabpagebuflist(tab)
    var wins = gettabinfo(tab)[0].windows
    if len(bufs) == 2 && bufname(bufs[1]) ==# 'gemini://proposal/' .. path
      out.found = true
      out.tab = tab
      out.diff = [getwinvar(wins[0], '&diff'), getwinvar(wins[1], '&diff')]
      out.left = getbufline(bufs[0], 1, '$')
      out.left_modifiable = getbufvar(bufs[0], '&modifiable')
      out.right = getbufline(bufs[1], 1, '$')
      out.right_buf = bufs[1]
      out.right_statusline = getwinvar(wins[1], '&statusline')
      out.state = getbufvar(bufs[1], 'gemini_diff', {})
    endif
  endfor
  return out
enddef

# Byte column (1-based) of UTF-16 position character (1-based) in text.
def ByteCol(text: string, character: number): number
  var units = 0
  var col = 1
  for ch in split(text, '\zs')
    if units >= character - 1
      break
    endif
    units += char2nr(ch) > 0xFFFF ? 2 : 1
    col += len(ch)
  endfor
  return col
enddef

def LeaveVisual()
  if mode() =~# "^[vV\<C-V>]"
    execute "normal! \<Esc>"
  endif
enddef

# Does in the editor what makes the plugin send a context or workspace
# notification like params, as a user would (open, move, select, close,
# :cd). Returns false when it does not know how.
def g:GicUserAction(method: string, p: dict<any>): bool
  if method == 'context/fileFocused' || method == 'context/selectionChanged'
    var cursor = get(p, 'cursor', {line: 1, character: 1})
    LeaveVisual()
    if !filereadable(p.path)
      return false
    endif
    if expand('%:p') !=# p.path
      execute 'edit ' .. fnameescape(p.path)
    endif
    var text = getline(cursor.line)
    var col = ByteCol(text, cursor.character)
    if has_key(p, 'selectedText') && p.selectedText != ''
      var sel: string = p.selectedText
      # A one-line selection that ends where the cursor is (right after
      # it: 'selection' exclusive, as other editors select) or starts there.
      if sel =~ "\n"
        return false
      endif
      var before = strpart(text, 0, col - 1)
      if before =~ '\V' .. escape(sel, '\') .. '\$'
        &selection = 'exclusive'
        cursor(cursor.line, col - len(sel))
        normal! v
        cursor(cursor.line, col)
      elseif stridx(text, sel, col - 1) == col - 1
        &selection = 'inclusive'
        cursor(cursor.line, col + len(sel) - 1)
        normal! v
        cursor(cursor.line, col)
      else
        return false
      endif
    else
      cursor(cursor.line, col)
    endif
    gemini_companion#context#Schedule()
    return true
  elseif method == 'context/fileClosed'
    if bufnr(p.path) < 0
      return false
    endif
    LeaveVisual()
    execute 'bwipeout! ' .. bufnr(p.path)
    return true
  elseif method == 'workspace/foldersChanged'
    if len(p.workspaceFolders) != 1
      return false
    endif
    mkdir(p.workspaceFolders[0], 'p')
    execute 'cd ' .. fnameescape(p.workspaceFolders[0])
    return true
  endif
  return false
enddef

# The user's decision on the proposal for path, in its window: "accept"
# (:w), "acceptOverDiskChange" (:w twice), "reject" (:q), "close" (closing
# its tab), "edit" (replace the proposal's text with content).
def g:GicUserDiff(path: string, action: string, content: string): bool
  var buf = bufnr('gemini://proposal/' .. path)
  if buf < 0 || empty(win_findbuf(buf))
    return false
  endif
  win_gotoid(win_findbuf(buf)[0])
  if action == 'accept'
    write
  elseif action == 'acceptOverDiskChange'
    write
    write
  elseif action == 'reject'
    quit!
  elseif action == 'close'
    tabclose!
  elseif action == 'edit'
    var lines = split(content, "\n", true)
    if len(lines) > 1 && lines[-1] == ''
      remove(lines, -1)
    endif
    silent :%delete _
    setline(1, lines)
  else
    return false
  endif
  return true
enddef
