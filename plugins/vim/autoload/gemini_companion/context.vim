vim9script
# What the user looks at: the focused file, cursor and selection, closed
# and renamed files, the working directory, reported to the sidecar from
# autocommands through a timer, so typing never waits on it. The sidecar
# keeps the list, the timestamps, the limits and the pacing.

import autoload 'gemini_companion/link.vim'
import autoload 'gemini_companion/util.vim'

var reported: dict<string> = {}  # bufnr -> path the sidecar knows it by
var renaming: dict<string> = {}  # bufnr -> path before a rename
var entered: list<number> = []   # buffers entered since the last flush
var last: dict<any> = {}         # what was last sent about the active file
var sent_at: list<any> = []      # reltime() of the last cursor report
var moved_at: list<any> = []     # reltime() of the last move
var pending_at: list<any> = []   # reltime() of the first move not reported
var coalesce = 50                # coalesce_ms, read again at each report
var timer = 0
var did_setup = false

def MaxBytes(): number
  return link.Policy().limits.maxSelectionBytes
enddef

# Lines first..last_line of the current buffer, read in batches until the
# text is longer than the limit.
def CappedLines(first: number, last_line: number): list<string>
  var out: list<string> = []
  var size = 0
  var l = first
  while l <= last_line && size <= MaxBytes()
    for s in getline(l, min([last_line, l + 255]))
      add(out, s)
      size += len(s) + 1
    endfor
    l += 256
  endwhile
  return out
enddef

# The characters of line that overlap display columns left..right.
def BlockPart(line: string, left: number, right: number): string
  var out = ''
  var width = 0
  for ch in split(line, '\zs')
    var w = max([strdisplaywidth(ch, width), 1])
    if width + 1 > right
      break
    endif
    if width + w >= left
      out ..= ch
    endif
    width += strdisplaywidth(ch, width)
  endfor
  return out
enddef

# The first display column of the character at byte col of line lnum.
def StartCol(lnum: number, col: number): number
  return col > 1 ? virtcol([lnum, col - 1]) + 1 : 1
enddef

# The selected text in the current window for visual mode kind (v, V, ^V).
export def Selection(kind: string): string
  var p = getpos('v')
  var q = getpos('.')
  var [l1, c1, l2, c2] = [p[1], p[2], q[1], q[2]]
  if l1 > l2 || (l1 == l2 && c1 > c2)
    [l1, c1, l2, c2] = [l2, c2, l1, c1]
  endif
  var lines = CappedLines(l1, l2)
  # With 'selection' "exclusive" the character at the end is not selected.
  var exclusive = &selection ==# 'exclusive'
  var text = ''
  if kind ==# 'V'
    text = join(lines, "\n")
  elseif kind ==# 'v'
    var eol = false
    if len(lines) == l2 - l1 + 1
      var tail = lines[-1]
      eol = c2 > len(tail) && !exclusive
      if !eol
        lines[-1] = strpart(tail, 0, c2 - 1 + (exclusive ? 0 : len(strcharpart(strpart(tail, c2 - 1), 0, 1))))
      endif
    endif
    lines[0] = strpart(lines[0], c1 - 1)
    text = join(lines, "\n") .. (eol && l2 < line('$') ? "\n" : '')
  else
    var left = min([StartCol(p[1], p[2]), StartCol(q[1], q[2])])
    var right = exclusive ? max([StartCol(p[1], p[2]), StartCol(q[1], q[2])]) - 1
      : max([virtcol([p[1], p[2]]), virtcol([q[1], q[2]])])
    if getcurpos()[4] == v:maxcol
      right = v:maxcol
    endif
    text = join(mapnew(lines, (_, l) => BlockPart(l, left, right)), "\n")
  endif
  return util.Clip(text, MaxBytes())
enddef

# The cursor as the link wants it: {line, character} (UTF-16 units + 1).
export def Cursor(): dict<number>
  return {line: line('.'), character: util.Utf16Len(strpart(getline('.'), 0, col('.') - 1)) + 1}
enddef

def Send(method: string, params: dict<any>)
  link.Notify(method, params)
enddef

# Sends what changed since the last report about the current window.
export def Flush(...args: list<any>)
  timer = 0
  pending_at = []
  if !link.Running()
    return
  endif
  coalesce = util.Opt('coalesce_ms')
  var m = mode(1)
  if m ==# 'c' || m ==# 'cr' || m[0] == 'r' || m[: 1] == 'no'
    # Typing a command or answering a prompt: leaving it reports again.
    # (Ex mode, "cv" and "ce", is where the user works: it reports.)
    return
  endif
  var buf = bufnr()
  # Files passed through on the way (":e a | e b", scripts) are open too.
  var passed = entered
  entered = []
  for b in passed
    if b != buf && !has_key(reported, b)
      var p = util.FileOf(b)
      if p != ''
        reported[b] = p
        Send('context/fileFocused', {path: p})
        last = {path: p}
      endif
    endif
  endfor
  var path = get(reported, buf, '')
  if path == ''
    path = util.FileOf(buf)
    if path == ''
      # Not a file (the Gemini terminal, help, a diff): keep the last
      # file, cursor and selection, as an IDE does when its terminal
      # takes the focus.
      return
    endif
    reported[buf] = path
  endif
  var params: dict<any> = {path: path, cursor: Cursor()}
  # Select mode selects as visual mode does.
  var kind = m[0] ==# 's' ? 'v' : m[0] ==# 'S' ? 'V' : m[0] == "\<C-S>" ? "\<C-V>" : m[0]
  if index(['v', 'V', "\<C-V>"], kind) >= 0
    params.selectedText = Selection(kind)
  endif
  var sel = get(params, 'selectedText', null)
  var now = {path: path, line: params.cursor.line, character: params.cursor.character, sel: sel}
  if get(last, 'path', '') != path
    Send('context/fileFocused', params)
  elseif now != last
    Send('context/selectionChanged', params)
  else
    return
  endif
  sent_at = reltime()
  last = now
enddef

# Milliseconds since the last cursor report (a large number before it).
def SinceSent(): float
  return empty(sent_at) ? 1.0e9 : reltimefloat(reltime(sent_at)) * 1000.0
enddef

# Reports soon: at once (from a timer) when nothing was reported for
# coalesce_ms, else when coalesce_ms have passed since the last report.
export def Schedule()
  if timer == 0 && link.Running()
    var ms = util.Opt('coalesce_ms')
    timer = timer_start(max([0, ms - float2nr(SinceSent())]), Flush)
  endif
enddef

# The cursor moved or the mode changed. This runs on every keystroke, so
# it reads the clock and, unless a report is due, only moves a timer:
# - the first move after a pause (none for coalesce_ms) is reported at
#   once (once the keys are handled), if nothing was reported in the last
#   coalesce_ms;
# - while the cursor keeps moving, a move reports when the first move not
#   reported is 4 × coalesce_ms old (the sidecar's own longest wait);
# - otherwise the timer reports coalesce_ms after the last move, that is,
#   once the cursor stopped: Vim is not woken up while it moves.
# So at most one report per coalesce_ms reaches the sidecar, and the last
# position at most coalesce_ms after the last move. A change of mode waits
# for the timer: leaving the command line for a command that opens the
# CLI's terminal (:'<,'>GeminiCli) must not report the selection gone on
# the way there.
def Moved(mode_changed = false)
  if coalesce <= 0
    Schedule()
    return
  endif
  var paused = empty(moved_at) || reltimefloat(reltime(moved_at)) * 1000.0 >= coalesce
  moved_at = reltime()
  if timer != 0
    timer_stop(timer)
    timer = 0
  endif
  if !mode_changed && ((paused && (empty(sent_at) || reltimefloat(reltime(sent_at)) * 1000.0 >= coalesce))
      || (!empty(pending_at) && reltimefloat(reltime(pending_at)) * 1000.0 >= 4 * coalesce))
    pending_at = []
    # Once the keys that moved it are handled: ending Visual mode to go to
    # another window (the CLI's terminal) must not report on the way.
    timer = timer_start(0, Flush)
  else
    if empty(pending_at)
      pending_at = moved_at
    endif
    timer = timer_start(coalesce, Flush)
  endif
enddef

def Closed(buf: number)
  if !has_key(reported, buf)
    return
  endif
  var path = remove(reported, buf)
  Send('context/fileClosed', {path: path})
  if get(last, 'path', '') == path
    last = {}
  endif
enddef

def Renamed(buf: number)
  var old = has_key(renaming, buf) ? remove(renaming, buf) : ''
  var new = util.FileOf(buf)
  if old != '' && new != '' && old != new
    reported[buf] = new
    Send('context/fileRenamed', {oldPath: old, newPath: new})
    if get(last, 'path', '') == old
      last.path = new
    endif
  elseif old != '' && new == ''
    # Renamed to a name with no file yet: reported again once written.
    reported[buf] = old
    Closed(buf)
  endif
  Schedule()
enddef

def Renaming(buf: number)
  renaming[buf] = get(reported, buf, '')
enddef

def Entered(buf: number)
  if !has_key(reported, buf)
    add(entered, buf)
  endif
  Schedule()
enddef

# Everything the sidecar should know after it (re)started: the open files,
# least recently used first, then the current one with its cursor.
def Resync()
  reported = {}
  last = {}
  entered = []
  var infos = getbufinfo({buflisted: 1, bufloaded: 1})
  sort(infos, (a, b) => a.lastused - b.lastused)
  for info in infos
    if info.bufnr != bufnr()
      var p = util.FileOf(info.bufnr)
      if p != ''
        reported[info.bufnr] = p
        Send('context/fileFocused', {path: p})
      endif
    endif
  endfor
  Flush()
enddef

export def Setup()
  if did_setup
    return
  endif
  did_setup = true
  coalesce = util.Opt('coalesce_ms')
  augroup GeminiCompanionContext
    autocmd!
    autocmd BufEnter * Entered(str2nr(expand('<abuf>')))
    autocmd CursorMoved,CursorMovedI * Moved()
    autocmd ModeChanged * Moved(true)
    autocmd WinEnter,BufWritePost,FocusGained * Schedule()
    autocmd BufDelete,BufWipeout * Closed(str2nr(expand('<abuf>')))
    autocmd BufFilePre * Renaming(str2nr(expand('<abuf>')))
    autocmd BufFilePost * Renamed(str2nr(expand('<abuf>')))
    autocmd DirChanged global link.Notify('workspace/foldersChanged', {workspaceFolders: [util.Cwd()]})
  augroup END
  link.OnReady((up) => {
    if up
      Resync()
    else
      reported = {}
      last = {}
    endif
  })
enddef
