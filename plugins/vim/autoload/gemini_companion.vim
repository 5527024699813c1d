vim9script
# gemini-companion: Vim as an IDE for Gemini CLI, through the
# gemini-ide-companion sidecar. See :help gemini-companion.
# The commands and mappings in plugin/gemini_companion.vim call these.

import autoload 'gemini_companion/link.vim'
import autoload 'gemini_companion/util.vim'
import autoload 'gemini_companion/context.vim'
import autoload 'gemini_companion/diff.vim'
import autoload 'gemini_companion/status.vim'
import autoload 'gemini_companion/terminal.vim'
import autoload 'gemini_companion/tools.vim'

# Wires the modules to the link once; the sidecar starts separately.
export def Setup()
  if get(g:, 'gemini_companion_active', 0)
    return
  endif
  g:gemini_companion_active = 1
  status.Setup()
  context.Setup()
  diff.Setup()
  tools.Setup()
  link.AddCapabilities(tools.Capabilities())
enddef

# On VimEnter: start the sidecar unless g:gemini_companion.auto_start is off.
export def AutoStart()
  if util.Opt('auto_start')
    Start()
  endif
enddef

export def Start()
  Setup()
  link.Start()
enddef

export def Stop()
  Setup()
  link.Stop()
enddef

export def Restart()
  Setup()
  link.Restart()
enddef

# :[range]GeminiCli[!] [args]: with a range (count > 0), the lines
# line1..line2 of the current file go to the CLI as an @-reference.
export def Cli(args: list<string>, force: bool, count: number = 0, line1: number = 0, line2: number = 0)
  Setup()
  if count > 0
    terminal.OpenWithLines(args, force, line1, line2)
  else
    terminal.Open(args, force)
  endif
enddef

export def Toggle()
  Setup()
  terminal.Toggle()
enddef

export def Accept(path: string = '')
  Setup()
  diff.Accept(path)
enddef

export def Reject(path: string = '')
  Setup()
  diff.Reject(path)
enddef

export def Status()
  Setup()
  status.Show()
enddef

export def Doctor()
  Setup()
  status.Doctor()
enddef

# The environment that connects a Gemini CLI started in a terminal of the
# user's own choosing (a tmux pane, another terminal) to this Vim:
# GEMINI_CLI_IDE_SERVER_PORT, GEMINI_CLI_IDE_WORKSPACE_PATH,
# GEMINI_CLI_IDE_AUTH_TOKEN and GEMINI_CLI_IDE_PID. Starts the sidecar if
# needed and waits for it (at most timeout_ms); {} when it cannot start.
export def TerminalEnv(timeout_ms: number = 15000): dict<string>
  Setup()
  var done = false
  var env: dict<string> = {}
  link.TerminalEnv((err, result) => {
    if err == '' && type(get(result, 'env', 0)) == v:t_dict
      env = result.env
    endif
    done = true
  })
  var start = reltime()
  while !done && reltimefloat(reltime(start)) * 1000 < timeout_ms
    sleep 10m
  endwhile
  return env
enddef

# For a statusline: %{gemini_companion#Statusline()}.
export def Statusline(): string
  return get(g:, 'gemini_companion_active', 0) ? status.Line() : ''
enddef

# Completion for :GeminiAccept and :GeminiReject: the open proposals.
export def CompleteProposals(lead: string, line: string, pos: number): list<string>
  return diff.Paths()->mapnew((_, p) => fnamemodify(p, ':.'))->filter((_, p) => stridx(p, lead) == 0)
enddef

# On VimLeavePre: end the CLI started here, then the sidecar (which
# deletes its discovery file).
export def Leave()
  terminal.StopOnExit()
  link.StopSync()
enddef
