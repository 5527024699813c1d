vim9script
# Proposals: the CLI's change to a file, shown as a `diffthis` pair in a
# tab of its own: the file as it is on the left (read-only), the proposal
# on the right, editable. `:w` in the proposal accepts it with the user's
# edits, `:q` (or closing the tab) rejects it.

import autoload 'gemini_companion/link.vim'
import autoload 'gemini_companion/util.vim'

# How long to watch for the CLI writing an accepted file.
const RELOAD_WATCH_MS = 30000

var views: dict<dict<any>> = {}  # filePath -> view
var sent: dict<dict<any>> = {}   # filePath -> last accept, until taken
var did_setup = false

# Paths with an open proposal, oldest first.
export def Paths(): list<string>
  return values(views)->sort((a, b) => a.seq - b.seq)->mapnew((_, v) => v.path)
enddef

# The view shown in buffer buf (either side), or {}.
def ViewOf(buf: number): dict<any>
  for v in values(views)
    if v.prop == buf || v.orig == buf
      return v
    endif
  endfor
  return {}
enddef

def Forget(view: dict<any>)
  if has_key(views, view.path) && views[view.path] is view
    remove(views, view.path)
  endif
  redrawstatus!
enddef

def FileType(path: string, buf: number): string
  var ft = ''
  if exists('#filetypedetect')
    var win = bufwinid(buf)
    if win > 0
      win_execute(win, 'silent! doautocmd filetypedetect BufRead ' .. fnameescape(path))
      ft = getbufvar(buf, '&filetype')
    endif
  endif
  return ft
enddef

def Wipe(buf: number)
  if bufexists(buf)
    execute 'silent! bwipeout! ' .. buf
  endif
enddef

# Closes the view's tab and buffers; nothing is sent to the sidecar.
def Teardown(view: dict<any>)
  view.done = true
  Forget(view)
  execute 'silent! autocmd! GeminiCompanionDiff * <buffer=' .. view.prop .. '>'
  if view.popup > 0
    popup_close(view.popup)
  endif
  var here = index([view.prop, view.orig], bufnr()) >= 0
  var wins = win_findbuf(view.prop) + win_findbuf(view.orig)
  if !empty(wins)
    var tabnr = win_id2tabwin(wins[0])[0]
    if tabpagenr('$') > 1
      execute 'silent! tabclose! ' .. tabnr
    else
      # The diff is the only tab: keep one window, showing something else.
      win_gotoid(wins[0])
      silent! only!
      diffoff
      enew!
    endif
  endif
  Wipe(view.prop)
  Wipe(view.orig)
  if here && win_gotoid(view.origin_win) && view.origin_mode == 't' && &buftype == 'terminal'
    # Back in the CLI's terminal, ready to type (Terminal-Job mode).
    if mode() == 'n'
      normal! i
    endif
  endif
enddef

# The lines of file path, [] when it is missing or cannot be read (it
# may go and come back while the CLI writes it).
def ReadLines(path: string): list<string>
  try
    return filereadable(path) ? readfile(path, 'b') : []
  catch
    return []
  endtry
enddef

# Reloads the unmodified buffers of path once the file on disk changed
# (the CLI writes an accepted file itself), so the user sees what it wrote.
# A write seen half done is followed: after a reload the file is watched
# two seconds more.
def ReloadWhenWritten(path: string)
  var loaded = ReadLines(path)
  var previous = loaded
  var Now = () => reltimefloat(reltime()) * 1000
  var deadline = Now() + RELOAD_WATCH_MS
  timer_start(50, (t) => {
    var now = ReadLines(path)
    # Changed, and the same on two looks in a row.
    var settled = now != loaded && now == previous
    previous = now
    if settled
      loaded = now
      if Now() + 2000 < deadline
        deadline = Now() + 2000
      endif
      Reload(path)
    endif
    if Now() > deadline
      timer_stop(t)
    endif
  }, {repeat: -1})
enddef

def Reload(path: string)
  for info in getbufinfo({bufloaded: 1})
    if util.FileOf(info.bufnr) != path
      continue
    endif
    if info.changed
      util.Notify(fnamemodify(path, ':~:.') .. ' was changed by Gemini CLI, but has unsaved changes here; :e! loads the new version', 'warn')
    elseif !empty(info.windows)
      win_execute(info.windows[0], 'silent! edit!')
    else
      setbufvar(info.bufnr, '&autoread', 1)
      execute 'silent! checktime ' .. info.bufnr
      setbufvar(info.bufnr, '&autoread', -1)
    endif
  endfor
enddef

# Records the user's decision, tells the sidecar, and closes the view.
def Decide(view: dict<any>, accepted: bool)
  if view.done
    return
  endif
  if accepted && view.disk != 'unchangedOnDisk' && !view.confirmed
    # The file changed (or went) on disk: overwriting it takes a second,
    # explicit accept.
    view.confirmed = true
    setbufvar(view.prop, '&modified', 1)
    util.Notify(printf('%s %s on disk since Gemini proposed this change; :w again overwrites it with the proposal, :q rejects',
      fnamemodify(view.path, ':~:.'), view.disk == 'deletedOnDisk' ? 'was deleted' : 'changed'), 'warn')
    return
  endif
  view.done = true
  Forget(view)
  if accepted
    var content = util.BufText(view.prop)
    setbufvar(view.prop, '&modified', 0)
    ReloadWhenWritten(view.path)
    sent[view.path] = {content: content, diffId: view.diffId}
    var params: dict<any> = {filePath: view.path, content: content}
    if view.diffId >= 0
      params.diffId = view.diffId
    endif
    if view.confirmed
      params.overDiskChange = true
    endif
    link.Notify('diff/accepted', params)
  else
    var params: dict<any> = {filePath: view.path}
    if view.diffId >= 0
      params.diffId = view.diffId
    endif
    link.Notify('diff/rejected', params)
  endif
  # Later: this may run in an autocommand, where windows cannot close.
  timer_start(0, (_) => Teardown(view))
enddef

def OnWrite(buf: number)
  var view = ViewOf(buf)
  if !empty(view)
    Decide(view, true)
  endif
enddef

# Rejects a view whose proposal no longer shows in any window.
def CheckGone(buf: number)
  var view = ViewOf(buf)
  if !empty(view) && !view.done && (!bufexists(view.prop) || empty(win_findbuf(view.prop)))
    Decide(view, false)
  endif
enddef

# The view's status lines and b:gemini_diff (for statuslines and scripts).
def Label(view: dict<any>)
  var parts: list<string> = []
  if view.outside
    add(parts, 'outside the workspace')
  endif
  if view.orphaned
    add(parts, 'ORPHANED: its Gemini CLI is gone, accepting writes nothing')
  endif
  if view.disk == 'changedOnDisk'
    add(parts, 'CHANGED ON DISK')
  elseif view.disk == 'deletedOnDisk'
    add(parts, 'DELETED ON DISK')
  endif
  if view.queued > 0
    add(parts, printf('%d more proposal%s queued', view.queued, view.queued == 1 ? '' : 's'))
  endif
  var rel = fnamemodify(view.path, ':~:.')
  var note = empty(parts) ? '' : ' [' .. join(parts, '] [') .. ']'
  var who = view.owner != '' ? '  (CLI ' .. view.owner .. ')' : ''
  var on_disk = view.disk != 'unchangedOnDisk'
  var Esc = (s: string): string => substitute(s, '%', '%%', 'g')
  for w in win_findbuf(view.prop)
    # The keys first: a narrow window cuts what follows %<, not them.
    setwinvar(w, '&statusline', ':w accepts  :q rejects  %<' .. Esc(rel .. ' (proposed by Gemini)' .. who) .. '%#WarningMsg#' .. Esc(note) .. '%*')
  endfor
  for w in win_findbuf(view.orig)
    setwinvar(w, '&statusline', Esc(on_disk ? 'On disk now: ' .. rel .. ' (read-only)' : rel .. ' (now, read-only)'))
  endfor
  setbufvar(view.prop, 'gemini_diff', {diff_id: view.diffId, owner: view.owner, outside_workspace: view.outside,
    orphaned: view.orphaned, disk: view.disk, queued: view.queued, label: 'Gemini proposal' .. who .. note})
enddef

var seq = 0

# Shows a proposal for path; returns its view.
def Open(path: string, new_content: string, original: any, req: dict<any>): dict<any>
  # A newer proposal for the same file replaces the shown one, silently
  # (from the user's view of it, back where the user came from).
  var old = get(views, path, {})
  if !empty(old)
    Teardown(old)
  endif
  var origin_win = win_getid()
  var origin_mode = mode()
  if origin_mode =~# "^[vVsS\<C-V>\<C-S>]"
    execute "normal! \<Esc>"
  endif
  for name in ['gemini://original/' .. path, 'gemini://proposal/' .. path]
    if bufexists(name)
      Wipe(bufnr(name))
    endif
  endfor
  var orig = bufadd('gemini://original/' .. path)
  var prop = bufadd('gemini://proposal/' .. path)
  setbufvar(orig, '&buftype', 'nofile')
  setbufvar(prop, '&buftype', 'acwrite')
  for b in [orig, prop]
    setbufvar(b, '&swapfile', 0)
    setbufvar(b, '&bufhidden', 'wipe')
    bufload(b)
  endfor
  util.SetBufText(orig, type(original) == v:t_string ? original : '')
  setbufvar(orig, '&modifiable', 0)
  setbufvar(orig, '&readonly', 1)
  util.SetBufText(prop, new_content)
  setbufvar(prop, '&modified', 0)

  execute 'tab sbuffer ' .. orig
  var orig_win = win_getid()
  execute 'vertical rightbelow sbuffer ' .. prop
  var prop_win = win_getid()
  var ft = FileType(path, prop)
  if ft != ''
    setbufvar(orig, '&filetype', ft)
  endif
  win_execute(orig_win, 'diffthis')
  win_execute(prop_win, 'diffthis')
  settabvar(tabpagenr(), 'gemini_diff_path', path)

  seq += 1
  var view: dict<any> = {
    seq: seq, path: path, orig: orig, prop: prop, origin_win: origin_win, origin_mode: origin_mode,
    done: false, confirmed: false, disk: 'unchangedOnDisk', orphaned: false, popup: 0,
    diffId: type(get(req, 'diffId', '')) == v:t_number ? req.diffId : -1,
    owner: type(get(req, 'owner', 0)) == v:t_string ? req.owner : '',
    outside: get(req, 'outsideWorkspace', false) == true,
    queued: type(get(req, 'queued', '')) == v:t_number ? req.queued : 0,
  }
  execute printf('autocmd GeminiCompanionDiff BufWriteCmd <buffer=%d> OnWrite(%d)', prop, prop)
  execute printf('autocmd GeminiCompanionDiff BufWinLeave <buffer=%d> timer_start(0, (_) => CheckGone(%d))', prop, prop)
  views[path] = view
  Label(view)
  # The keys, in a popup over the proposal while this tab shows.
  var [row, col] = win_screenpos(prop_win)
  view.popup = popup_create([' :w accept (with your edits) ', ' :q reject '], {
    line: row, col: col + winwidth(prop_win) - 1, pos: 'topright', tabpage: 0,
    highlight: 'PmenuSel', padding: [0, 1, 0, 1], zindex: 50})
  if type(get(req, 'notice', 0)) == v:t_string && req.notice != ''
    util.Notify(req.notice, 'warn')
  endif
  var rel = fnamemodify(path, ':~:.')
  if util.Opt('diff_focus')
    util.Notify(printf('Gemini proposes a change to %s: :w accepts (with your edits), :q rejects', rel))
  else
    var tab = tabpagenr()
    win_gotoid(origin_win)
    if origin_mode == 't' && &buftype == 'terminal' && mode() == 'n'
      normal! i
    endif
    util.Notify(printf('Gemini proposes a change to %s (tab %d): :GeminiAccept or :GeminiReject', rel, tab))
  endif
  redrawstatus!
  return view
enddef

# The view a command acts on: the one for path, else the one in the
# current buffer, else the newest.
def Target(path: string): dict<any>
  if path != ''
    var full = util.RealPath(path)
    var view = get(views, full, get(views, path, {}))
    if empty(view)
      util.Notify('no Gemini proposal is open for ' .. path, 'warn')
    endif
    return view
  endif
  var view = ViewOf(bufnr())
  var paths = Paths()
  if empty(view) && !empty(paths)
    view = views[paths[-1]]
  endif
  if empty(view)
    util.Notify('no Gemini proposal is open', 'warn')
  endif
  return view
enddef

export def Accept(path: string = '')
  var view = Target(path)
  if !empty(view)
    Decide(view, true)
  endif
enddef

export def Reject(path: string = '')
  var view = Target(path)
  if !empty(view)
    Decide(view, false)
  endif
enddef

# Shows text the user accepted that was not written (its CLI is gone, or
# the proposal expired) in a new buffer, to be saved by hand.
def KeepText(path: string, content: string)
  tabnew
  util.SetBufText(bufnr(), content)
  setlocal modified
  b:gemini_unwritten = path
  &l:statusline = '%#WarningMsg#Not written by Gemini CLI: ' .. substitute(fnamemodify(path, ':~:.'), '%', '%%', 'g') .. '%* (:w {file} saves it)'
enddef

# A diff/state notification: something happened to a proposal.
export def OnState(p: dict<any>)
  var path: string = p.filePath
  var view = get(views, path, {})
  var diff_id: number = type(get(p, 'diffId', '')) == v:t_number ? p.diffId : -1
  if !empty(view) && diff_id >= 0 && view.diffId >= 0 && diff_id != view.diffId && p.state != 'queued'
    view = {}  # about another proposal for the same file
  endif
  var level = 'warn'
  var state = get(p, 'state', '')
  if state == 'queued'
    level = 'info'
    if !empty(view)
      view.queued = type(get(p, 'queued', '')) == v:t_number ? p.queued : view.queued + 1
    endif
  elseif state == 'orphaned'
    if !empty(view)
      view.orphaned = true
    endif
  elseif index(['changedOnDisk', 'deletedOnDisk', 'unchangedOnDisk'], state) >= 0
    if !empty(view)
      view.disk = state
      view.confirmed = false
      var disk = type(get(p, 'diskContent', 0)) == v:t_string ? p.diskContent : ''
      util.SetBufText(view.orig, disk)
      setbufvar(view.orig, '&modified', 0)
      for w in win_findbuf(view.orig)
        win_execute(w, 'diffupdate')
      endfor
    endif
    if state == 'unchangedOnDisk'
      level = 'info'
    endif
  elseif state == 'needsConfirmation'
    # The accept raced a change on disk: show the proposal again, as the
    # user left it, against the file as it is now.
    var last = get(sent, path, {})
    if empty(view) && !empty(last) && (last.diffId < 0 || last.diffId == diff_id)
      remove(sent, path)
      var exists = filereadable(path)
      view = Open(path, last.content, exists ? join(readfile(path, 'b'), "\n") : v:null, {diffId: diff_id})
      view.disk = exists ? 'changedOnDisk' : 'deletedOnDisk'
    endif
    if !empty(view)
      view.disk = view.disk == 'unchangedOnDisk' ? 'changedOnDisk' : view.disk
      view.confirmed = true
    endif
  elseif state == 'undelivered' || state == 'expired'
    if has_key(sent, path)
      remove(sent, path)
    endif
    if type(get(p, 'content', 0)) == v:t_string
      KeepText(path, p.content)
    endif
  endif
  if !empty(view)
    Label(view)
  endif
  if type(get(p, 'message', 0)) == v:t_string && p.message != ''
    util.Notify(p.message, level)
  endif
  redrawstatus!
enddef

def BadPath(params: dict<any>): string
  var p = get(params, 'filePath', 0)
  return type(p) != v:t_string || !isabsolutepath(p) ? 'filePath must be an absolute path' : ''
enddef

def OnOpen(params: dict<any>, Reply: func)
  var bad = BadPath(params)
  var original = get(params, 'originalContent', v:null)
  if bad == '' && type(get(params, 'newContent', 0)) != v:t_string
    bad = 'newContent must be a string'
  elseif bad == '' && type(original) != v:t_none && type(original) != v:t_string
    bad = 'originalContent must be a string or null'
  endif
  if bad != ''
    Reply({code: -32602, message: bad}, null)
    return
  endif
  try
    Open(params.filePath, params.newContent, original, params)
  catch
    Reply({code: -32603, message: 'cannot open the diff view: ' .. v:exception}, null)
    return
  endtry
  Reply({}, {})
enddef

def OnClose(params: dict<any>, Reply: func)
  var bad = BadPath(params)
  if bad != ''
    Reply({code: -32602, message: bad}, null)
    return
  endif
  var view = get(views, params.filePath, {})
  if empty(view)
    Reply({}, {content: null})
    return
  endif
  var content = util.BufText(view.prop)
  Teardown(view)
  Reply({}, {content: content})
enddef

# Closes every view without telling the sidecar (it is gone).
export def CloseAll()
  for view in values(views)
    Teardown(view)
  endfor
enddef

export def Setup()
  if did_setup
    return
  endif
  did_setup = true
  augroup GeminiCompanionDiff
    autocmd!
  augroup END
  link.On('diff/open', OnOpen)
  link.On('diff/close', OnClose)
  link.On('diff/state', (params) => {
    if BadPath(params) == ''
      OnState(params)
    endif
  })
  link.OnReady((up) => {
    if !up && !empty(views)
      CloseAll()
      util.Notify('the open Gemini proposals were closed: the sidecar stopped', 'warn')
    endif
  })
enddef
