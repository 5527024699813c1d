vim9script
# Runs the assert_* unit tests of a test file inside Vim; the Go test
# (unit_test.go) sources this and the test file, then calls GicRunTest()
# for each name GicTests() lists.

# Waits (processing timers, jobs and channels) until Cond() is true;
# reports a failure naming what after timeout_ms.
def g:GicWait(Cond: func, what: string, timeout_ms: number = 10000): bool
  var start = reltime()
  while !Cond()
    if reltimefloat(reltime(start)) * 1000 > timeout_ms
      assert_report('waited ' .. timeout_ms .. ' ms for ' .. what)
      return false
    endif
    sleep 10m
  endwhile
  return true
enddef

# The plugin's messages the user saw so far (its lines of :messages,
# without their "Gemini: " prefix), oldest first.
def g:GicMessages(): list<string>
  return split(execute('messages'), "\n")->filter((_, l) => l =~ '^Gemini: ')->mapnew((_, l) => l[8 :])
enddef

# The test functions defined so far (global functions named Test_*).
def g:GicTests(): list<string>
  return getcompletion('Test_', 'function')->map((_, n) => substitute(n, '(.*$', '', ''))->sort()
enddef

# Runs one test and returns its failures; the plugin is stopped and the
# windows reset afterwards, so tests do not see each other's state.
def g:GicRunTest(name: string): list<string>
  v:errors = []
  try
    call('g:' .. name, [])
  catch
    add(v:errors, 'exception: ' .. v:exception .. ' @ ' .. v:throwpoint)
  endtry
  try
    gemini_companion#link#Stop()
    g:GicWait(() => gemini_companion#link#State().status == 'stopped', 'the sidecar to stop')
    silent! tabonly!
    silent! only!
    silent! :%bwipeout!
  catch
    add(v:errors, 'cleanup: ' .. v:exception)
  endtry
  return v:errors
enddef
