vim9script
# The editor link: the gemini-ide-companion sidecar as a job, spoken to in
# JSON-RPC with LSP framing over its stdin/stdout (Vim's own "lsp" channel
# mode), started, restarted per the sidecar's policy, and stopped.
# Every other module talks to the sidecar through Request, Notify and On.

import autoload 'gemini_companion/util.vim'

# How long the sidecar gets to answer initialize, and to exit on shutdown.
const INIT_TIMEOUT_MS = 15000
const STOP_TIMEOUT_MS = 2000

# status: stopped | starting | running | stopping
var state: dict<any> = {
  status: 'stopped', pid: 0, path: '', info: {}, last_error: '',
  stderr: [], restarts: [], restarted: false,
}
var job: job
var generation = 0
var next_id = 1
var pending: dict<func> = {}       # request id -> callback(err, result)
var handlers: dict<list<func>> = {} # method -> handlers
var ready_handlers: list<func> = []  # called with true / false on start / stop
var start_waiters: list<func> = []
var stop_waiters: list<func> = []
var policy: dict<any> = deepcopy(util.DEFAULT_POLICY)
var restart_timer = 0
var more_capabilities: dict<bool> = {}

# Capabilities a module adds to initialize's (the editor tools' features);
# they apply from the next start.
export def AddCapabilities(caps: dict<bool>)
  extend(more_capabilities, caps)
enddef

# State for :GeminiStatus and tests (a copy).
export def State(): dict<any>
  return extend(deepcopy(state), {policy: deepcopy(policy)})
enddef

export def Running(): bool
  return state.status == 'running'
enddef

# The policy the sidecar gave (or the defaults): restart, limits, messages.
export def Policy(): dict<any>
  return policy
enddef

# Registers a handler for a sidecar notification (Fn(params)) or request
# (Fn(params, Reply) where Reply(err, result) answers, err a dict with
# code and message or {} for success). Several handlers may share a
# notification; a request has one.
export def On(method: string, Fn: func)
  handlers[method] = get(handlers, method, []) + [Fn]
enddef

# Fn(up: bool) runs after every successful start (true) and every stop or
# death of the sidecar (false).
export def OnReady(Fn: func)
  add(ready_handlers, Fn)
enddef

def Send(msg: dict<any>): bool
  if job_status(job) != 'run' || ch_status(job) != 'open'
    return false
  endif
  try
    ch_sendexpr(job, msg)
    return true
  catch
    util.Notify('cannot send ' .. get(msg, 'method', 'a reply') .. ' to the sidecar: ' .. v:exception, 'error')
    return false
  endtry
enddef

def SendRequest(method: string, params: any, Cb: func)
  var id = next_id
  next_id += 1
  pending[id] = Cb
  # Send's job_status() runs OnExit when it finds the job dead, and OnExit
  # has then answered every pending request already.
  if !Send({jsonrpc: '2.0', id: id, method: method, params: params}) && has_key(pending, id)
    remove(pending, id)
    Cb({code: -32000, message: 'the sidecar is not running'}, null)
  endif
enddef

# Sends a request; Cb(err, result) runs later (err is {} on success).
export def Request(method: string, params: any, Cb: func)
  if state.status != 'running'
    Cb({code: -32000, message: 'the sidecar is not running'}, null)
    return
  endif
  SendRequest(method, params, Cb)
enddef

# Sends a notification; false (dropped) unless the sidecar is running.
export def Notify(method: string, params: any): bool
  return state.status == 'running' && Send({jsonrpc: '2.0', method: method, params: params})
enddef

def Reply(id: any, gen: number, err: dict<any>, result: any)
  if gen == generation
    Send(empty(err) ? {jsonrpc: '2.0', id: id, result: result}
      : {jsonrpc: '2.0', id: id, error: {code: get(err, 'code', -32603), message: get(err, 'message', 'error')}})
  endif
enddef

def OnMessage(gen: number, ch: channel, msg: any)
  if gen != generation || type(msg) != v:t_dict
    return
  endif
  if has_key(msg, 'method')
    var method: string = msg.method
    var params = type(get(msg, 'params', 0)) == v:t_dict ? msg.params : {}
    var fns = get(handlers, method, [])
    if has_key(msg, 'id')
      var id = msg.id
      if empty(fns)
        Reply(id, gen, {code: -32601, message: 'method not found: ' .. method}, null)
        return
      endif
      var answered = false
      var Answer = (err: dict<any>, result: any) => {
        if !answered
          answered = true
          Reply(id, gen, err, result)
        endif
      }
      try
        fns[0](params, Answer)
      catch
        Answer({code: -32603, message: v:exception}, null)
      endtry
    else
      for F in fns
        try
          F(params)
        catch
          util.Notify('error handling ' .. method .. ': ' .. v:exception, 'error')
        endtry
      endfor
    endif
  elseif has_key(msg, 'id') && type(msg.id) == v:t_number && has_key(pending, msg.id)
    var Cb = remove(pending, msg.id)
    var err = get(msg, 'error', {})
    Cb(type(err) == v:t_dict ? err : {}, get(msg, 'result', null))
  endif
enddef

# Keeps the last lines of the sidecar's stderr, to say why it exited.
def OnStderr(gen: number, ch: channel, line: string)
  if gen == generation && line !~ '^\s*$'
    state.stderr = add(state.stderr, line)[-10 :]
  endif
enddef

# Calls the functions waiting for the start (with its error, '' when it
# succeeded), or for the stop (with none).
def FinishWaiters(err: string)
  var ws = start_waiters
  start_waiters = []
  for W in ws
    W(err)
  endfor
enddef

# A start that failed: the user is told why, and so are the waiters.
def Fail(why: string)
  state.last_error = why
  util.Notify(why, 'error')
  FinishWaiters(why)
enddef

def FinishStop()
  var ws = stop_waiters
  stop_waiters = []
  for W in ws
    W()
  endfor
enddef

def Ready(up: bool)
  for F in ready_handlers
    try
      F(up)
    catch
      util.Notify('error after the sidecar ' .. (up ? 'started' : 'stopped') .. ': ' .. v:exception, 'error')
    endtry
  endfor
  redrawstatus!
enddef

def Fill(text: string, reason: string, count: number): string
  return text->substitute('{reason}', escape(reason, '\&'), 'g')->substitute('{count}', string(count), 'g')
enddef

def OnExit(gen: number, j: job, code: number)
  if gen != generation
    return
  endif
  var was = state.status
  var info = state.info
  state.status = 'stopped'
  state.pid = 0
  state.info = {}
  var calls = values(pending)
  pending = {}
  for Cb in calls
    Cb({code: -32000, message: 'the sidecar exited'}, null)
  endfor
  if was == 'running' || was == 'stopping'
    Ready(false)
  endif
  if was == 'stopping'
    FinishStop()
    return
  endif
  var sig = job_info(j).termsig
  sig = string(get({hup: 1, int: 2, quit: 3, abrt: 6, kill: 9, segv: 11, term: 15}, tolower(sig), sig))
  var reason = code == -1 && sig != "''" ? 'signal ' .. trim(sig, "'") : 'exit code ' .. code
  if empty(state.stderr)
    # exit_cb can come before err_cb has had the last lines: read them.
    try
      state.stderr = split(ch_readraw(j, {part: 'err', timeout: 100}), "\n")[-5 :]
    catch
    endtry
  endif
  if !empty(state.stderr)
    reason ..= ': ' .. state.stderr[-1]
  endif
  if was == 'starting'
    Fail('gemini-ide-companion failed to start (' .. reason .. ')')
    return
  endif
  # It died while running: its discovery file (named after this Vim, which
  # lives on) would lead CLIs to a dead port.
  var file = get(info, 'discoveryFile', '')
  if type(file) == v:t_string && file != ''
    delete(file)
  endif
  var r = policy.restart
  var now = reltimefloat(reltime()) * 1000
  filter(state.restarts, (_, t) => now - t < r.windowMs)
  if len(state.restarts) >= r.maxRestarts
    state.last_error = Fill(policy.messages.gaveUp, reason, len(state.restarts) + 1)
    util.Notify(state.last_error, 'error')
    return
  endif
  var delays: list<number> = r.delaysMs
  var delay = delays[min([len(state.restarts), len(delays) - 1])]
  add(state.restarts, now)
  util.Notify(Fill(policy.messages.restarting, reason, len(state.restarts)), 'warn')
  state.restarted = true
  restart_timer = timer_start(delay, (_) => {
    restart_timer = 0
    if state.status == 'stopped'
      Start()
    endif
  })
enddef

def Spawn(path: string)
  generation += 1
  var gen = generation
  state.path = path
  state.stderr = []
  next_id = 1
  pending = {}
  var cmd = [path, '--stdio', '--framing=lsp', '--log-level', util.Opt('log_level')]
  if util.Opt('log_file') != ''
    cmd += ['--log-file', expand(util.Opt('log_file'))]
  endif
  job = job_start(cmd, {
    in_mode: 'lsp', out_mode: 'lsp', err_mode: 'nl', noblock: true,
    callback: function(OnMessage, [gen]),
    err_cb: function(OnStderr, [gen]),
    exit_cb: function(OnExit, [gen]),
    stoponexit: 'term',
  })
  # 'fail': it could not be run at all. One that ran and died at once
  # ('dead') is reported by OnExit, with its exit code and last words.
  if job_status(job) == 'fail'
    state.status = 'stopped'
    Fail('cannot run ' .. path)
    return
  endif
  state.pid = job_info(job).process
  var timer = timer_start(INIT_TIMEOUT_MS, (_) => {
    if gen == generation && state.status == 'starting'
      Fail('gemini-ide-companion did not answer initialize in time')
      Stop()
    endif
  })
  SendRequest('initialize', {
    protocolVersion: 2,
    ide: {name: 'vim', displayName: 'Vim', restartCommand: ':GeminiRestart'},
    processId: getpid(),
    workspaceFolders: [util.Cwd()],
    capabilities: extend({diff: true, diffStates: true, unifiedDiff: false, selection: true, terminal: true, diagnostics: false, agent: false},
      more_capabilities),
  }, (err, result) => {
    timer_stop(timer)
    if gen != generation || state.status != 'starting'
      return
    endif
    if !empty(err) || type(result) != v:t_dict
      if job_status(job) == 'dead'
        # It died, maybe before initialize was written to it: OnExit
        # reports that, with its last words.
        return
      endif
      Fail('gemini-ide-companion refused initialize: ' .. get(err, 'message', 'no result'))
      Stop()
      return
    endif
    state.info = result
    if type(get(result, 'policy', 0)) == v:t_dict
      policy = extend(deepcopy(util.DEFAULT_POLICY), result.policy)
    endif
    state.status = 'running'
    state.last_error = ''
    if state.restarted
      state.restarted = false
      util.Notify(policy.messages.restarted, 'info')
    endif
    Ready(true)
    FinishWaiters('')
  })
enddef

# Starts the sidecar unless it runs; Cb(err) once it answered initialize
# ('' on success) or failed.
export def Start(Cb: func = null_function)
  if Cb != null_function
    add(start_waiters, Cb)
  endif
  if state.status == 'running'
    FinishWaiters('')
  elseif state.status == 'stopping'
    add(stop_waiters, () => Start())
  elseif state.status == 'stopped'
    state.status = 'starting'
    var path = util.Binary()
    if path == ''
      state.status = 'stopped'
      Fail(util.BinaryProblem())
      return
    endif
    Spawn(path)
  endif
enddef

# Asks the sidecar to shut down (killing it if it lingers); Cb() once gone.
export def Stop(Cb: func = null_function)
  if restart_timer != 0
    timer_stop(restart_timer)
    restart_timer = 0
  endif
  if Cb != null_function
    add(stop_waiters, Cb)
  endif
  if state.status == 'stopped'
    FinishStop()
    return
  elseif state.status == 'stopping'
    return
  elseif state.status == 'starting'
    FinishWaiters('stopped')
  endif
  state.status = 'stopping'
  var j = job
  SendRequest('shutdown', null, (err, result) => {
    # End of stdin: a sidecar that answered but lingers exits on it.
    try
      ch_close_in(j)
    catch
    endtry
  })
  timer_start(STOP_TIMEOUT_MS, (_) => {
    if job_status(j) == 'run'
      job_stop(j, 'term')
    endif
  })
enddef

# Stops the sidecar and waits until it exited (for VimLeavePre).
export def StopSync()
  if state.status == 'stopped'
    return
  endif
  Stop()
  var start = reltime()
  while job_status(job) == 'run' && reltimefloat(reltime(start)) * 1000 < STOP_TIMEOUT_MS + 500
    sleep 10m
  endwhile
  if job_status(job) == 'run'
    job_stop(job, 'kill')
  endif
enddef

export def Restart(Cb: func = null_function)
  state.restarts = []
  Stop(() => Start(Cb))
enddef

# The environment for a terminal opened now: Cb(err, {env, discoveryFile}),
# asked of the sidecar every time (V2 section 3), started first if needed.
export def TerminalEnv(Cb: func)
  Start((err) => {
    if err != ''
      Cb(err, {})
      return
    endif
    Request('terminal/env', {}, (e, result) => {
      var ok = empty(e) && type(result) == v:t_dict && type(get(result, 'env', 0)) == v:t_dict
      # Without an answer: the env from initialize.
      Cb('', ok ? result : {env: get(state.info, 'env', {}), discoveryFile: get(state.info, 'discoveryFile', '')})
    })
  })
enddef
