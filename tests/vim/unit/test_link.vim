vim9script
# The link module against the real sidecar: the v2 handshake over LSP
# framing, requests, the policy, terminal env, restart after a crash, and
# a clean stop.

import autoload 'gemini_companion/link.vim'

def Start()
  gemini_companion#Setup()
  link.Start()
  g:GicWait(() => link.Running(), 'the sidecar to run')
enddef

def g:Test_handshake_v2_gives_policy_and_discovery_file()
  Start()
  var st = link.State()
  assert_equal('running', st.status)
  assert_true(st.pid > 0)
  var info = st.info
  assert_equal(2, info.protocolVersion)
  assert_true(filereadable(info.discoveryFile), 'discovery file ' .. info.discoveryFile)
  # The CLI shows "Connected to Vim".
  assert_equal('Vim', json_decode(join(readfile(info.discoveryFile), '')).ideInfo.displayName)
  assert_equal(string(info.port), info.env.GEMINI_CLI_IDE_SERVER_PORT)
  # The policy the sidecar sent is the one the plugin uses.
  assert_equal(info.policy.restart.delaysMs, link.Policy().restart.delaysMs)
  assert_match('exited', link.Policy().messages.restarting)
  assert_true(info.capabilities.terminalEnv)
enddef

def g:Test_requests_get_answers_and_errors()
  Start()
  var got: list<any> = []
  link.Request('status/get', {}, (err, result) => add(got, [err, result]))
  link.Request('no/such/method', {}, (err, result) => add(got, [err, result]))
  g:GicWait(() => len(got) == 2, 'two answers')
  assert_equal({}, got[0][0])
  assert_equal(0, got[0][1].connectedClients)
  assert_equal(-32601, got[1][0].code)
  # A request while stopped fails at once, with a reason.
  link.Stop()
  g:GicWait(() => link.State().status == 'stopped', 'the stop')
  var err: dict<any> = {}
  link.Request('status/get', {}, (e, r) => {
    err = e
  })
  assert_match('not running', err.message)
  assert_false(link.Notify('context/fileFocused', {path: '/x'}))
enddef

def g:Test_terminal_env_is_asked_each_time()
  var got: list<any> = []
  # Starts the sidecar when it is not running.
  link.TerminalEnv((err, result) => add(got, [err, result]))
  g:GicWait(() => len(got) == 1, 'the terminal env')
  assert_equal('', got[0][0])
  var env = got[0][1].env
  assert_equal(string(link.State().info.port), env.GEMINI_CLI_IDE_SERVER_PORT)
  assert_equal(getcwd()->resolve(), env.GEMINI_CLI_IDE_WORKSPACE_PATH)
  assert_true(filereadable(got[0][1].discoveryFile))
enddef

def g:Test_restarts_after_a_crash_per_policy()
  Start()
  var before = link.State()
  var file = before.info.discoveryFile
  var seen = len(g:GicMessages())
  var up: list<bool> = []
  link.OnReady((u) => add(up, u))
  system('kill -9 ' .. before.pid)
  g:GicWait(() => link.Running() && link.State().pid != before.pid, 'a new sidecar')
  # The dead one's discovery file is gone; the new one has its own.
  var now = link.State()
  assert_true(filereadable(now.info.discoveryFile))
  if now.info.discoveryFile != file
    assert_false(filereadable(file), 'stale discovery file ' .. file)
  endif
  assert_equal([false, true], up)
  assert_equal(1, len(now.restarts))
  # The texts are the sidecar's, with the reason filled in.
  var notes = g:GicMessages()[seen :]
  var restarting = filter(copy(notes), (_, m) => m =~ 'restarting it')
  assert_equal(1, len(restarting), string(notes))
  assert_match('(signal 9)', restarting[0])
  assert_notmatch('{reason}', restarting[0])
  assert_true(index(notes, 'Gemini: ' .. link.Policy().messages.restarted) >= 0 || index(notes, link.Policy().messages.restarted) >= 0, string(notes))
enddef

def g:Test_stop_shuts_down_and_removes_discovery_file()
  Start()
  var st = link.State()
  var stopped = false
  link.Stop(() => {
    stopped = true
  })
  g:GicWait(() => stopped, 'the stop callback')
  assert_equal('stopped', link.State().status)
  assert_false(filereadable(st.info.discoveryFile))
  # No restart follows a stop the user asked for.
  sleep 300m
  assert_equal('stopped', link.State().status)
enddef

def g:Test_a_sidecar_that_cannot_start_says_why()
  var saved = g:gemini_companion.sidecar
  g:gemini_companion.sidecar = '/nonexistent/gemini-ide-companion'
  var err = ''
  link.Start((e) => {
    err = e
  })
  g:gemini_companion.sidecar = saved
  assert_match('not an executable', err)
  assert_equal('stopped', link.State().status)
enddef

def g:Test_a_sidecar_that_dies_at_once_is_reported_with_its_last_words()
  # Whether Vim sees it die before or after initialize is written to it,
  # the user is told it failed to start, and why; it is not restarted.
  var script = tempname()
  writefile(['#!/bin/sh', "echo 'boom: bad flag' >&2", 'exit 2'], script)
  setfperm(script, 'rwx------')
  var saved = g:gemini_companion.sidecar
  g:gemini_companion.sidecar = script
  # (No closure over a variable declared in the loop: Vim 9.0.1378
  # crashes on that.)
  var errs: list<string> = []
  for n in range(5)
    link.Start((e) => {
      add(errs, e)
    })
    g:GicWait(() => len(errs) > n, 'the failure, try ' .. (n + 1))
    assert_match('failed to start (exit code 2: boom: bad flag)', errs[n])
    g:GicWait(() => link.State().status == 'stopped', 'the stopped state')
    assert_equal([], link.State().restarts)
  endfor
  g:gemini_companion.sidecar = saved
enddef

def g:Test_gives_up_after_max_restarts_with_the_sidecars_text()
  Start()
  var r = link.Policy().restart
  # Each crash is restarted after the policy's delay, until maxRestarts
  # within windowMs; one more crash and the plugin stops trying.
  for n in range(r.maxRestarts)
    var pid = link.State().pid
    system('kill -9 ' .. pid)
    g:GicWait(() => link.Running() && link.State().pid != pid, 'restart ' .. (n + 1), 15000)
  endfor
  var files = glob($TMPDIR .. '/gemini/ide/*.json', 0, 1)
  system('kill -9 ' .. link.State().pid)
  g:GicWait(() => link.State().status == 'stopped' && link.State().last_error != '', 'the give-up')
  sleep 200m
  assert_equal('stopped', link.State().status)
  var gave_up = link.State().last_error
  assert_match('exited ' .. (r.maxRestarts + 1) .. ' times in a minute (signal 9)', gave_up)
  assert_match(':GeminiRestart', gave_up)
  assert_equal([], glob($TMPDIR .. '/gemini/ide/*.json', 0, 1), 'stale discovery files')
  # :GeminiRestart starts it again, with a fresh count.
  GeminiRestart
  g:GicWait(() => link.Running(), 'the restart')
  assert_equal([], link.State().restarts)
enddef
