vim9script
# Options, messages and small text helpers shared by the other modules.

const DEFAULTS = {
  # Path of gemini-ide-companion; '': <plugin>/bin, then $PATH.
  sidecar: '',
  # Sidecar log level (debug, info, warn, error) and optional log file.
  log_level: 'warn',
  log_file: '',
  # Start the sidecar when Vim starts (true) or on the first command.
  auto_start: true,
  # The Gemini CLI command run by :GeminiCli (its arguments are appended).
  cli: ['gemini'],
  # Where :GeminiCli opens: 'right', 'left', 'bottom', 'top' or 'tab'; and
  # the split size in cells (0: half).
  position: 'right',
  size: 0,
  # Extra environment variables for the CLI.
  env: {},
  # Jump to the diff tab when Gemini proposes a change.
  diff_focus: true,
  # Messages from the sidecar below this level are not shown.
  notify_level: 'info',
  # At most one cursor/selection report per this many milliseconds; the
  # first change after a pause is sent at once (0: every change).
  coalesce_ms: 50,
  # Answer the editor tools (diagnostics, definitions, references, hover,
  # outlines, workspace symbols, open files) for the agents that call them,
  # from ALE, the quickfix list and tags. See :help gemini-companion-tools.
  tools: true,
}

const TYPES = {
  sidecar: v:t_string, log_level: v:t_string, log_file: v:t_string,
  auto_start: v:t_bool, cli: v:t_list, position: v:t_string, size: v:t_number,
  env: v:t_dict, diff_focus: v:t_bool, notify_level: v:t_string, coalesce_ms: v:t_number, tools: v:t_bool,
}

# The sidecar's policy as the plugin uses it until a sidecar answered
# initialize (editor link v2): restart pacing, limits and the texts shown.
export const DEFAULT_POLICY = {
  restart: {delaysMs: [100, 500, 1000, 2000, 5000], windowMs: 60000, maxRestarts: 5},
  limits: {maxSelectionBytes: 65552, maxOpenFiles: 10, maxSelectedTextUtf16: 16384, maxMessageBytes: 268435456},
  messages: {
    restarting: 'gemini-ide-companion exited ({reason}); restarting it. Gemini CLI sessions reconnect with /ide enable.',
    gaveUp: 'gemini-ide-companion exited {count} times in a minute ({reason}); not restarting it. Run :GeminiRestart to try again.',
    restarted: 'gemini-ide-companion restarted; Gemini CLI sessions reconnect with /ide enable.',
  },
}

const LEVELS = {debug: 0, info: 1, warn: 2, error: 3}

var warned: dict<bool> = {}

# The value of option name: g:gemini_companion[name] when it is valid,
# else the default (with a warning, once, for a wrong type).
export def Opt(name: string): any
  var user = get(g:, 'gemini_companion', {})
  if type(user) != v:t_dict || !has_key(user, name)
    return DEFAULTS[name]
  endif
  var v = user[name]
  var want = TYPES[name]
  if type(v) == want || (want == v:t_bool && type(v) == v:t_number && (v == 0 || v == 1))
    if name == 'position' && index(['right', 'left', 'bottom', 'top', 'tab'], v) < 0
    elseif name =~ 'level$' && !has_key(LEVELS, v)
    else
      return v
    endif
  endif
  if !has_key(warned, name)
    warned[name] = true
    Notify('g:gemini_companion.' .. name .. ' = ' .. string(v) .. ' is not valid; using ' .. string(DEFAULTS[name]), 'warn')
  endif
  return DEFAULTS[name]
enddef

# Unknown keys in g:gemini_companion (typos), for :GeminiDoctor.
export def UnknownOptions(): list<string>
  var user = get(g:, 'gemini_companion', {})
  return type(user) == v:t_dict ? keys(user)->filter((_, k) => !has_key(DEFAULTS, k)) : []
enddef

# Shows a message: in :messages, and in a popup for warnings and errors.
export def Notify(msg: string, level: string = 'info')
  if get(LEVELS, level, 1) < get(LEVELS, Opt('notify_level'), 1)
    return
  endif
  var hl = level == 'error' ? 'ErrorMsg' : level == 'warn' ? 'WarningMsg' : 'None'
  execute 'echohl ' .. hl
  echomsg 'Gemini: ' .. msg
  echohl None
  if level == 'warn' || level == 'error'
    popup_notification('Gemini: ' .. msg, {highlight: hl, time: 6000, maxwidth: max([30, &columns - 10])})
  endif
enddef

const PLUGIN_DIR = resolve(expand('<sfile>:p'))->fnamemodify(':h:h:h')

# The plugin's folder (holding plugin/, autoload/, doc/).
export def PluginDir(): string
  return PLUGIN_DIR
enddef

# The binary to run, or ''.
export def Binary(): string
  var cmd = Opt('sidecar')
  if cmd != ''
    return executable(expand(cmd)) ? exepath(expand(cmd)) : ''
  endif
  var built = PluginDir() .. '/bin/gemini-ide-companion'
  return executable(built) ? built : exepath('gemini-ide-companion')
enddef

# Why Binary() found nothing.
export def BinaryProblem(): string
  if Opt('sidecar') != ''
    return "g:gemini_companion.sidecar is '" .. Opt('sidecar') .. "', which is not an executable"
  endif
  return 'gemini-ide-companion is not on PATH nor in ' .. PluginDir() .. '/bin (go install ./cmd/gemini-ide-companion in the checkout, or set g:gemini_companion.sidecar)'
enddef

export def Cwd(): string
  return RealPath(getcwd())
enddef

# An absolute path with symlinks resolved and no trailing slash.
export def RealPath(path: string): string
  var p = resolve(fnamemodify(path, ':p'))
  return p =~ '.\+/$' ? p[: -2] : p
enddef

# The file on disk buffer buf stands for, or '' (terminals, help, scratch
# and diff buffers, files not written yet).
export def FileOf(buf: number): string
  if !bufexists(buf) || getbufvar(buf, '&buftype') != ''
    return ''
  endif
  var name = bufname(buf)
  if name == '' || name =~ '^\a\+://' || !filereadable(name)
    return ''
  endif
  return RealPath(name)
enddef

# The text of buffer buf as one string (with a final newline when
# 'endofline' is set).
export def BufText(buf: number): string
  var text = join(getbufline(buf, 1, '$'), "\n")
  return getbufvar(buf, '&endofline') ? text .. "\n" : text
enddef

# Sets the text of buffer buf ('endofline' says whether it ends in a
# newline).
export def SetBufText(buf: number, text: string)
  var lines = split(text, "\n", true)
  var eol = len(lines) > 1 && lines[-1] == ''
  if eol
    remove(lines, -1)
  endif
  var ma = getbufvar(buf, '&modifiable')
  setbufvar(buf, '&modifiable', 1)
  deletebufline(buf, 1, '$')
  setbufline(buf, 1, lines)
  setbufvar(buf, '&endofline', eol)
  setbufvar(buf, '&fixendofline', 0)
  setbufvar(buf, '&modifiable', ma)
enddef

# text cut to at most max bytes, never inside a character.
export def Clip(text: string, max: number): string
  if len(text) <= max
    return text
  endif
  return strpart(text, 0, byteidx(text, charidx(text, max)))
enddef

# UTF-16 code units in text.
export def Utf16Len(text: string): number
  if strlen(text) == strchars(text)
    return strlen(text)
  endif
  var n = 0
  for c in str2list(text)
    n += c > 0xFFFF ? 2 : 1
  endfor
  return n
enddef
