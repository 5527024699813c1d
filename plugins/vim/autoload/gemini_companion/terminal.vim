vim9script
# Gemini CLI in a :terminal window, started with the environment the
# sidecar gives for terminals (terminal/env), so its /ide connects here.

import autoload 'gemini_companion/link.vim'
import autoload 'gemini_companion/util.vim'

var term_buf = 0
var term_gen = 0  # bumped per CLI started; a stale exit_cb compares it
var term_cwd = '' # the CLI's working directory (resolved)
var ready = false # the CLI has shown its prompt: it reads what is typed

# The CLI's terminal buffer while its job runs, else 0.
export def Buffer(): number
  if term_buf > 0 && bufexists(term_buf) && term_getstatus(term_buf) =~ 'running'
    return term_buf
  endif
  return 0
enddef

# A window of the terminal in the current tab, or 0.
def Window(): number
  for w in win_findbuf(term_buf)
    if win_id2tabwin(w)[0] == tabpagenr()
      return w
    endif
  endfor
  return 0
enddef

# Opens a window where g:gemini_companion.position says; it is current.
def Split()
  var pos = util.Opt('position')
  if pos == 'tab'
    tabnew
    return
  endif
  var vertical = pos == 'right' || pos == 'left'
  execute (pos == 'right' || pos == 'bottom' ? 'botright ' : 'topleft ') .. (vertical ? 'vertical ' : '') .. 'new'
  var size = util.Opt('size')
  if size > 0
    execute (vertical ? 'vertical ' : '') .. 'resize ' .. size
  endif
enddef

# The environment of a CLI started here: the sidecar's terminal env (all
# it takes to connect, in a container too) and g:gemini_companion.env.
export def CliEnv(env: dict<any>): dict<any>
  return extend(copy(env), util.Opt('env'))
enddef

def Launch(args: list<string>, env: dict<any>): bool
  var cmd: list<string> = util.Opt('cli') + args
  if empty(cmd) || !executable(cmd[0])
    util.Notify(printf("cannot start Gemini CLI: '%s' is not an executable (set g:gemini_companion.cli, or npm install -g @google/gemini-cli)", get(cmd, 0, '')), 'error')
    return false
  endif
  Split()
  term_gen += 1
  var gen = term_gen
  var scratch = bufnr()
  var buf = term_start(cmd, {
    curwin: true, env: CliEnv(env), cwd: getcwd(),
    term_name: 'Gemini CLI', term_kill: 'term', norestore: true,
    exit_cb: (job, code) => {
      if gen != term_gen
        return
      endif
      var b = term_buf
      term_buf = 0
      # A clean exit closes the terminal; a failure stays readable.
      if code == 0 && bufexists(b)
        timer_start(0, (_) => {
          if bufexists(b)
            execute 'silent! bwipeout! ' .. b
          endif
        })
      endif
    },
  })
  if buf <= 0
    util.Notify('cannot start Gemini CLI: ' .. join(cmd), 'error')
    return false
  endif
  if scratch != buf && bufexists(scratch) && bufname(scratch) == '' && !getbufvar(scratch, '&modified')
    execute 'silent! bwipeout ' .. scratch
  endif
  setbufvar(buf, '&buflisted', 0)
  setbufvar(buf, 'gemini_companion_terminal', 1)
  term_buf = buf
  term_cwd = util.Cwd()
  ready = false
  return true
enddef

# Opens Gemini CLI (arguments appended to g:gemini_companion.cli), or
# shows and focuses the one running; force (:GeminiCli!) starts a new one.
# Then OnOpen() runs, with the CLI's window current.
export def Open(args: list<string>, force: bool = false, OnOpen: func = null_function)
  if force
    Close()
  endif
  if Buffer() > 0
    if !empty(args)
      util.Notify('Gemini CLI is already running; arguments ignored (:GeminiCli! restarts it with them)', 'warn')
    endif
    var w = Window()
    if w > 0
      win_gotoid(w)
    else
      Split()
      execute 'buffer ' .. term_buf
    endif
    if OnOpen != null_function
      OnOpen()
    endif
    return
  endif
  link.TerminalEnv((err, result) => {
    if err != ''
      util.Notify('the sidecar could not start (' .. err .. '); Gemini CLI runs without IDE integration. :GeminiDoctor says more.', 'error')
    endif
    if Buffer() == 0 && Launch(args, err == '' ? get(result, 'env', {}) : {}) && OnOpen != null_function
      OnOpen()
    endif
  })
enddef

# A path as the CLI's @-references want it: a backslash before blanks and
# the characters that end a reference.
def EscapeRef(path: string): string
  return escape(path, " \t()[]{};|*?$`'\"#&<>!~\\,")
enddef

# The @-reference to lines line1..line2 of the current buffer's file
# (relative to the CLI's working directory when under it), or '' when the
# buffer is not a file on disk.
export def Reference(line1: number, line2: number): string
  var path = util.FileOf(bufnr())
  if path == ''
    return ''
  endif
  var base = term_cwd != '' ? term_cwd : util.Cwd()
  var rel = stridx(path, base .. '/') == 0 ? path[len(base) + 1 :] : path
  return '@' .. EscapeRef(rel) .. (line1 == line2 ? printf('#L%d', line1) : printf('#L%d-%d', line1, line2))
enddef

# Whether the CLI in buf shows its prompt (it reads input only then).
def PromptShown(buf: number): bool
  for row in range(1, term_getsize(buf)[0])
    if stridx(term_getline(buf, row), 'Type your message') >= 0
      return true
    endif
  endfor
  return false
enddef

# Types text into the CLI: at once when it is reading, else once its
# prompt shows (20 s at most).
def Deliver(text: string)
  var buf = term_buf
  var gen = term_gen
  var start = reltime()
  var Try: func(number)
  Try = (_) => {
    if gen != term_gen || Buffer() != buf
      return
    endif
    if ready || PromptShown(buf) || reltimefloat(reltime(start)) > 20.0
      ready = true
      term_sendkeys(buf, text)
      return
    endif
    timer_start(100, Try)
  }
  Try(0)
enddef

# :[range]GeminiCli: opens (or focuses) the CLI and types the @-reference
# to lines line1..line2 of the current file at its prompt, for the user's
# question to follow.
export def OpenWithLines(args: list<string>, force: bool, line1: number, line2: number)
  var ref = Reference(line1, line2)
  if ref == ''
    util.Notify('the current buffer is not a file on disk: no lines to send to Gemini CLI', 'warn')
    Open(args, force)
    return
  endif
  Open(args, force, () => Deliver(ref .. ' '))
enddef

# Hides the CLI's windows in this tab if shown, else shows it.
export def Toggle()
  var w = Window()
  if w > 0 && winnr('$') > 1
    win_execute(w, 'hide')
  else
    Open([])
  endif
enddef

# Ends the CLI the plugin started, with what it started (a terminal job
# leads its own process group), and closes its windows.
export def Close()
  var b = Buffer()
  term_buf = 0
  term_gen += 1
  ready = false
  if b > 0
    job_stop(term_getjob(b), 'term')
    execute 'silent! bwipeout! ' .. b
  endif
enddef

# On VimLeavePre: stop the CLI and wait (briefly) until it is gone, so no
# Gemini CLI outlives this Vim.
export def StopOnExit()
  var b = Buffer()
  if b == 0
    return
  endif
  var j = term_getjob(b)
  job_stop(j, 'term')
  var start = reltime()
  while job_status(j) == 'run' && reltimefloat(reltime(start)) < 2.0
    sleep 10m
  endwhile
  if job_status(j) == 'run'
    job_stop(j, 'kill')
  endif
enddef
