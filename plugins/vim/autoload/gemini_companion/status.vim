vim9script
# What the companion is doing: the sidecar's status and log texts (shown
# as the sidecar words them), :GeminiStatus, the statusline item, and
# :GeminiDoctor.

import autoload 'gemini_companion/link.vim'
import autoload 'gemini_companion/util.vim'
import autoload 'gemini_companion/diff.vim'
import autoload 'gemini_companion/terminal.vim'

var connected = 0
var text = ''  # the sidecar's status line ("Gemini: 1 CLI connected")
var did_setup = false

# A short text for a statusline: the sidecar's own when it gives one.
export def Line(): string
  var st = link.State().status
  if st == 'starting'
    return 'Gemini: starting'
  elseif st != 'running'
    return 'Gemini: off'
  endif
  # The sidecar's words; before its first status, only that it runs.
  var line = text != '' ? text : 'Gemini: running'
  var n = len(diff.Paths())
  return n > 0 ? printf('%s | %d proposal%s', line, n, n == 1 ? '' : 's') : line
enddef

export def Connected(): number
  return connected
enddef

# The lines :GeminiStatus shows; Cb(lines) once the sidecar answered.
export def Lines(Cb: func)
  var s = link.State()
  var out = [printf('sidecar: %s%s', s.status, s.pid > 0 ? printf(' (pid %d, %s)', s.pid, s.path) : '')]
  var Finish = () => {
    var paths = diff.Paths()
    add(out, 'open proposals: ' .. (empty(paths) ? 'none' : join(paths, ', ')))
    add(out, 'Gemini CLI terminal: ' .. (terminal.Buffer() > 0 ? 'running' : 'not running'))
    Cb(out)
  }
  if s.status != 'running'
    if s.last_error != ''
      add(out, 'last error: ' .. s.last_error)
    endif
    Finish()
    return
  endif
  link.Request('status/get', {}, (err, st) => {
    var i = s.info
    var r = type(st) == v:t_dict ? st : {}
    if !empty(err)
      add(out, 'status/get failed: ' .. get(err, 'message', '?'))
    endif
    add(out, 'status: ' .. Line())
    add(out, 'version: ' .. get(r, 'serverVersion', get(i, 'serverVersion', '?')))
    add(out, 'port: ' .. get(r, 'port', get(i, 'port', '?')))
    var file = get(r, 'discoveryFile', get(i, 'discoveryFile', ''))
    add(out, 'discovery file: ' .. (file != '' ? file : '(none)'))
    add(out, 'IDE pid: ' .. get(r, 'idePid', get(i, 'idePid', '?')))
    add(out, 'workspace: ' .. join(get(r, 'workspaceFolders', []), ', '))
    add(out, 'connected Gemini CLI sessions: ' .. get(r, 'connectedClients', connected))
    Finish()
  })
enddef

# :GeminiStatus. What a channel callback echoes is lost, so the command
# itself waits for the sidecar's answer (Vim runs callbacks while it
# sleeps; a local sidecar answers in milliseconds), then echoes the lines:
# on screen (with the hit-enter prompt) and in :messages.
export def Show()
  var shown: list<string> = []
  var done = false
  Lines((lines) => {
    shown = lines
    done = true
  })
  var start = reltime()
  while !done && reltimefloat(reltime(start)) < 3.0
    sleep 10m
  endwhile
  if !done
    var s = link.State()
    shown = [printf('sidecar: %s%s', s.status, s.pid > 0 ? printf(' (pid %d, %s)', s.pid, s.path) : ''),
      'status/get: no answer from the sidecar within 3 s']
  endif
  for line in shown
    echomsg line
  endfor
enddef

# :GeminiDoctor: the plugin's own checks, then `gemini-ide-companion
# doctor` run with the environment a CLI opened by :GeminiCli gets, in a
# scratch window. b:gemini_doctor is 'running', then 'done'.
export def Doctor()
  var lines = ['gemini-companion for Vim', '']
  var Ok = (good: bool, msg: string) => add(lines, (good ? 'OK    ' : 'ERROR ') .. msg)
  Ok(v:version >= 900, 'Vim ' .. v:version / 100 .. '.' .. v:version % 100 .. ' (9.0 or newer needed)')
  for f in ['job', 'channel', 'terminal', 'popupwin', 'vim9script', 'diff']
    Ok(has(f) == 1, '+' .. f)
  endfor
  var unknown = util.UnknownOptions()
  Ok(empty(unknown), empty(unknown) ? 'g:gemini_companion options' : 'unknown g:gemini_companion options: ' .. join(unknown, ', '))
  var bin = util.Binary()
  Ok(bin != '', bin != '' ? 'sidecar binary: ' .. bin : util.BinaryProblem())
  var s = link.State()
  Ok(s.status == 'running', 'sidecar ' .. s.status .. (s.last_error != '' ? ' (last error: ' .. s.last_error .. ')' : ''))
  if s.status == 'running'
    var file = get(s.info, 'discoveryFile', '')
    Ok(file != '' && filereadable(file), 'discovery file: ' .. (file != '' ? file : '(none)'))
  endif
  var cli = util.Opt('cli')
  Ok(!empty(cli) && executable(cli[0]) == 1, 'Gemini CLI: ' .. (!empty(cli) && executable(cli[0]) ? exepath(cli[0]) : string(cli) .. ' is not an executable (npm install -g @google/gemini-cli)'))
  add(lines, '')
  tabnew
  setlocal buftype=nofile bufhidden=wipe noswapfile nobuflisted
  silent! file gemini://doctor
  b:gemini_doctor = 'running'
  var buf = bufnr()
  setline(1, lines)
  if bin == ''
    b:gemini_doctor = 'done'
    return
  endif
  appendbufline(buf, '$', ['gemini-ide-companion doctor (would a gemini started by :GeminiCli connect?)', ''])
  # Done once the job exited and all its output is in (either comes first).
  var code = -1
  var closed = false
  var Done = () => {
    if code >= 0 && closed && bufexists(buf)
      appendbufline(buf, '$', ['', printf('(doctor exited with code %d)', code)])
      setbufvar(buf, 'gemini_doctor', 'done')
    endif
  }
  var OnExit = (_, c) => {
    code = c
    Done()
  }
  var OnClose = (_) => {
    closed = true
    Done()
  }
  var Run = (env: dict<any>) => {
    job_start([bin, 'doctor', '--workspace', util.Cwd()], {
      env: terminal.CliEnv(env), in_io: 'null', out_io: 'buffer', out_buf: buf, err_io: 'out',
      exit_cb: OnExit, close_cb: OnClose})
  }
  if s.status == 'running'
    link.TerminalEnv((err, result) => Run(err == '' ? get(result, 'env', {}) : {}))
  else
    Run({})
  endif
enddef

export def Setup()
  if did_setup
    return
  endif
  did_setup = true
  link.On('status', (params) => {
    if type(get(params, 'connectedClients', '')) == v:t_number
      connected = params.connectedClients
    endif
    if type(get(params, 'text', 0)) == v:t_string
      text = params.text
    endif
    redrawstatus!
  })
  link.On('log', (params) => {
    if type(get(params, 'message', 0)) == v:t_string
      util.Notify(params.message, get(params, 'level', 'info'))
    endif
  })
  link.OnReady((up) => {
    # A sidecar may give the status with its initialize result.
    var st = up ? get(link.State().info, 'status', {}) : {}
    connected = type(st) == v:t_dict && type(get(st, 'connectedClients', '')) == v:t_number ? st.connectedClients : 0
    text = type(st) == v:t_dict && type(get(st, 'text', 0)) == v:t_string ? st.text : ''
  })
enddef
