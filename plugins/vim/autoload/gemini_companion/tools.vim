vim9script
# The editor tools (docs/editor-tools.md): the sidecar's editor/* requests,
# answered from what Vim knows. With ALE (Debian's vim-ale): its
# diagnostics, and its language servers for definitions, references,
# hover, outlines and workspace symbols. Without: the quickfix and location
# lists for diagnostics, tags for definitions and outlines. Positions on
# the link are 1-based lines and 1-based columns in characters; Vim counts
# bytes, a language server UTF-16 units: everything is converted here.

import autoload 'gemini_companion/link.vim'
import autoload 'gemini_companion/util.vim'

const NOT_AVAILABLE = -32010
const DEADLINE_PASSED = -32011
const INVALID_PARAMS = -32602

const SEVERITY_RANK = {error: 1, warning: 2, info: 3, hint: 4}
const KINDS = ['file', 'module', 'namespace', 'package', 'class', 'method', 'property',
  'field', 'constructor', 'enum', 'interface', 'function', 'variable',
  'constant', 'string', 'number', 'boolean', 'array', 'object', 'key',
  'null', 'enumMember', 'struct', 'event', 'operator', 'typeParameter']
# ctags kinds (single letters, or full names with --fields=+K) by name.
const TAG_KINDS = {
  f: 'function', function: 'function', func: 'function', m: 'method', method: 'method',
  member: 'field', field: 'field', v: 'variable', variable: 'variable', c: 'class', class: 'class',
  s: 'struct', struct: 'struct', t: 'class', type: 'class', typedef: 'class', i: 'interface', interface: 'interface',
  e: 'enumMember', enumerator: 'enumMember', g: 'enum', enum: 'enum', n: 'namespace', namespace: 'namespace',
  p: 'package', package: 'package', constant: 'constant', const: 'constant', d: 'constant', macro: 'constant',
}

# A failure to answer with: raise it with Fail(), caught by Handle().
def Fail(code: number, message: string)
  throw 'gemini-tools:' .. code .. ':' .. message
enddef

def Name(path: string): string
  return fnamemodify(path, ':t')
enddef

# --- Positions ----------------------------------------------------------

# Characters (code points) in the first `byte` bytes of line.
export def ByteToChar(line: string, byte: number): number
  if byte <= 0
    return 0
  endif
  return strchars(strpart(line, 0, byte), 1)
enddef

# The byte offset of the character at 0-based index `char` of line
# (clamped to the line).
export def CharToByte(line: string, char: number): number
  if char <= 0
    return 0
  endif
  var b = byteidxcomp(line, char)
  return b < 0 ? len(line) : b
enddef

# UTF-16 code units in the first `byte` bytes of line.
export def ByteToUtf16(line: string, byte: number): number
  var units = 0
  for c in str2list(strpart(line, 0, byte))
    units += c > 0xFFFF ? 2 : 1
  endfor
  return units
enddef

# The byte offset of UTF-16 unit index `units` of line (clamped).
export def Utf16ToByte(line: string, units: number): number
  var seen = 0
  var byte = 0
  for c in str2list(line)
    if seen >= units
      break
    endif
    seen += c > 0xFFFF ? 2 : 1
    byte += len(list2str([c]))
  endfor
  return byte
enddef

# Lines of a file for converting positions: a loaded buffer's (unsaved
# changes included), else the file's; cached in `cache` by path.
def Lines(cache: dict<any>, path: string): list<string>
  if !has_key(cache, path)
    var buf = FindBuffer(path)
    if buf > 0 && bufloaded(buf)
      cache[path] = getbufline(buf, 1, '$')
    else
      try
        cache[path] = readfile(path)
      catch
        cache[path] = []
      endtry
    endif
  endif
  return cache[path]
enddef

# A position on the link from 0-based row and a 0-based index counted in
# bytes ('byte') or UTF-16 units ('utf-16') of that line.
def ToLink(lines: list<string>, row: number, index: number, unit: string): dict<number>
  var line = row >= 0 && row < len(lines) ? lines[row] : ''
  var byte = unit == 'utf-16' ? Utf16ToByte(line, index) : min([max([index, 0]), len(line)])
  return {line: row + 1, character: ByteToChar(line, byte) + 1}
enddef

def RangeToLink(lines: list<string>, r: dict<any>): dict<any>
  return {
    start: ToLink(lines, r.start.line, r.start.character, 'utf-16'),
    end: ToLink(lines, r.end.line, r.end.character, 'utf-16'),
  }
enddef

# --- Files and buffers --------------------------------------------------

def FindBuffer(path: string): number
  for info in getbufinfo()
    if info.name != '' && (info.name == path || util.RealPath(info.name) == path)
      return info.bufnr
    endif
  endfor
  return 0
enddef

# The loaded buffer of path, loaded now (hidden, unlisted) when it is not.
def LoadBuffer(path: string): number
  var buf = FindBuffer(path)
  if buf > 0 && bufloaded(buf)
    return buf
  endif
  if !filereadable(path)
    Fail(INVALID_PARAMS, path .. ' does not exist')
  endif
  if buf == 0
    buf = bufadd(path)
  endif
  bufload(buf)
  return buf
enddef

def CheckPosition(buf: number, path: string, p: dict<any>): string
  for k in ['line', 'character']
    if type(get(p, k, 0)) != v:t_number || p[k] < 1
      Fail(INVALID_PARAMS, k .. ' must be 1 or more')
    endif
  endfor
  var count = getbufinfo(buf)[0].linecount
  if p.line > count
    Fail(INVALID_PARAMS, printf('line %d is past the end of %s (%d lines)', p.line, Name(path), count))
  endif
  var line = get(getbufline(buf, p.line), 0, '')
  var chars = strchars(line, 1)
  if p.character > chars + 1
    Fail(INVALID_PARAMS, printf('character %d is past the end of line %d of %s (%d characters)', p.character, p.line, Name(path), chars))
  endif
  return line
enddef

def MaxResults(p: dict<any>): number
  var n = get(p, 'maxResults', 0)
  if type(n) != v:t_number || n <= 0
    n = get(link.Policy().limits, 'maxToolResults', 200)
  endif
  return n
enddef

# Milliseconds a language server gets, leaving the sidecar a margin.
def Budget(): number
  return max([get(link.Policy().limits, 'editorRequestTimeoutMs', 10000) - 1500, 100])
enddef

# --- ALE ----------------------------------------------------------------

def HasAle(): bool
  return exists('g:loaded_ale')
enddef

# ALE's language-server linters for buf's filetype.
def AleLspLinters(buf: number): list<dict<any>>
  if !HasAle()
    return []
  endif
  var ft = getbufvar(buf, '&filetype')
  if ft == ''
    return []
  endif
  return ale#linter#Get(ft)->filter((_, l) => type(get(l, 'lsp', '')) == v:t_string
    && get(l, 'lsp', '') != '' && l.lsp != 'tsserver')
enddef

def AleLinterIsLsp(name: string, buf: number): bool
  for l in AleLspLinters(buf)
    if l.name == name
      return true
    endif
  endfor
  return false
enddef

# The error for a file no language server answers for.
def NoServer(buf: number, path: string): dict<any>
  var why = HasAle() ? 'ALE has no language server for ' .. (getbufvar(buf, '&filetype') ?? 'its filetype') .. ' (g:ale_linters)'
    : 'install ALE (Debian: vim-ale, then packadd! ale in your vimrc)'
  return {code: NOT_AVAILABLE, message: 'Vim has no language server for ' .. Name(path) .. ': ' .. why}
enddef

var handlers: dict<func> = {}    # LSP request id -> handler(response)
var registered: dict<bool> = {}  # ALE connection ids whose responses come here

def OnAleMessage(conn_id: any, response: dict<any>)
  var id = get(response, 'id', 0)
  if !has_key(response, 'method') && type(id) == v:t_number && has_key(handlers, id)
    var H = remove(handlers, id)
    H(response)
  endif
enddef

# Sends method with the params MakeParams(line) gives (line: the buffer's
# text at the position, or '') to the first language server of ALE for
# buf that has capability (ALE's name for it, or '' to skip the check);
# Done(result) with the answer, or Reply(err, null) when none answers.
def AleRequest(buf: number, path: string, method: string, capability: string, params: dict<any>, Reply: func, Done: func)
  var linters = AleLspLinters(buf)
  if empty(linters)
    Reply(NoServer(buf, path), null)
    return
  endif
  var linter = linters[0]
  var answered = false
  var Answer = (err: dict<any>, result: any) => {
    if !answered
      answered = true
      Reply(err, result)
    endif
  }
  var timer = timer_start(Budget(), (_) => {
    Answer({code: DEADLINE_PASSED, message: linter.name .. ' (through ALE) did not answer ' .. method
      .. ' in time; it may still be loading the workspace: try again'}, null)
  })
  var OnReady = (l: dict<any>, details: dict<any>) => {
    var conn = details.connection_id
    try
      if capability != '' && !ale#lsp#HasCapability(conn, capability)
        timer_stop(timer)
        Answer({code: NOT_AVAILABLE, message: 'Vim has no language server for ' .. Name(path) .. ' that answers '
          .. method .. ': ' .. linter.name .. ' does not offer it'}, null)
        return
      endif
      if !has_key(registered, conn)
        registered[conn] = true
        ale#lsp#RegisterCallback(conn, OnAleMessage)
      endif
      if buf > 0
        ale#lsp#OpenDocument(conn, buf, ale#linter#GetLanguage(buf, linter))
        ale#lsp#NotifyForChanges(conn, buf)
      endif
      var id = ale#lsp#Send(conn, [0, method, params])
      if id <= 0
        timer_stop(timer)
        Answer({code: -32603, message: 'ALE could not send ' .. method .. ' to ' .. linter.name}, null)
        return
      endif
      handlers[id] = (response: dict<any>) => {
        timer_stop(timer)
        if answered
          return
        endif
        if has_key(response, 'error') && type(response.error) == v:t_dict
          Answer({code: -32603, message: linter.name .. ': ' .. get(response.error, 'message', 'error')}, null)
          return
        endif
        try
          var res = Done(get(response, 'result', null))
          Answer({}, res)
        catch /^gemini-tools:/
          var parts = matchlist(v:exception, '^gemini-tools:\(-\?\d\+\):\(.*\)$')
          Answer({code: str2nr(parts[1]), message: parts[2]}, null)
        catch
          Answer({code: -32603, message: v:exception}, null)
        endtry
      }
    catch
      timer_stop(timer)
      Answer({code: -32603, message: v:exception}, null)
    endtry
  }
  try
    if ale#lsp_linter#StartLSP(buf > 0 ? buf : bufnr(), linter, OnReady) == 0
      timer_stop(timer)
      Answer({code: NOT_AVAILABLE, message: 'Vim has no language server for ' .. Name(path) .. ': ALE could not start '
        .. linter.name .. ' (is it installed? see :ALEInfo)'}, null)
    endif
  catch
    timer_stop(timer)
    Answer({code: -32603, message: v:exception}, null)
  endtry
enddef

# --- Diagnostics --------------------------------------------------------

def Severity(item: dict<any>): string
  var t = toupper(get(item, 'type', 'E'))
  return t == 'W' ? 'warning' : t == 'I' ? 'info' : t == 'N' || t == 'H' ? 'hint' : 'error'
enddef

# An ALE or quickfix item as a diagnostic; lsp: its columns are LSP's
# (ALE keeps a language server's UTF-16 indexes as they came).
def Diagnostic(cache: dict<any>, path: string, item: dict<any>, lsp: bool, source: string): dict<any>
  var lines = Lines(cache, path)
  var lnum = max([get(item, 'lnum', 1), 1])
  var col = max([get(item, 'col', 1), 1])
  var end_lnum = get(item, 'end_lnum', 0) > 0 ? item.end_lnum : lnum
  var end_col = get(item, 'end_col', 0)
  var first: dict<number>
  var after: dict<number>
  if lsp
    first = ToLink(lines, lnum - 1, col - 1, 'utf-16')
    after = end_col > 0 ? ToLink(lines, end_lnum - 1, end_col, 'utf-16') : first
  elseif end_col > 0
    first = ToLink(lines, lnum - 1, col - 1, 'byte')
    # Vim's end_col is the column of the last byte: the range ends after
    # the character there.
    var eline = get(lines, end_lnum - 1, '')
    var lastb = min([end_col - 1, len(eline)])
    after = {line: end_lnum, character: ByteToChar(eline, lastb + max([len(matchstr(eline, '.', lastb)), 1])) + 1}
  else
    first = ToLink(lines, lnum - 1, col - 1, 'byte')
    after = first
  endif
  var d: dict<any> = {path: path, range: {start: first, end: after}, severity: Severity(item),
    message: trim(get(item, 'text', ''))}
  var detail = get(item, 'detail', '')
  var src = source
  if lsp && type(detail) == v:t_string && detail =~ '^\[[^]]*\] '
    src = matchstr(detail, '^\[\zs[^]]*\ze\]')
    d.message = substitute(detail, '^\[[^]]*\] ', '', '')
  endif
  if src != ''
    d.source = src
  endif
  var code = get(item, 'code', get(item, 'nr', 0))
  if type(code) == v:t_string && code != '' || type(code) == v:t_number && code > 0
    d.code = string(code)->trim("'")
  endif
  return d
enddef

def GetDiagnostics(p: dict<any>, Reply: func)
  var min_rank = get(SEVERITY_RANK, get(p, 'severity', 'hint'), 4)
  var want = get(p, 'path', '')
  var out: list<dict<any>> = []
  var cache: dict<any> = {}
  var sources = 0
  if HasAle() && exists('g:ale_buffer_info')
    sources += 1
    for [b, info] in items(g:ale_buffer_info)
      var buf = str2nr(b)
      var path = util.FileOf(buf)
      if path == '' && bufname(buf) != ''
        path = util.RealPath(fnamemodify(bufname(buf), ':p'))
      endif
      if path == '' || want != '' && path != want
        continue
      endif
      for item in get(info, 'loclist', [])
        if get(item, 'bufnr', buf) != buf
          continue
        endif
        var linter = get(item, 'linter_name', '')
        add(out, Diagnostic(cache, path, item, AleLinterIsLsp(linter, buf), linter))
      endfor
    endfor
  else
    # No ALE: what :make, :grep or a linter put into the quickfix list and
    # the windows' location lists.
    var lists = [getqflist({items: 1, title: 1})]
    for w in getwininfo()
      if !w.quickfix
        add(lists, getloclist(w.winid, {items: 1, title: 1}))
      endif
    endfor
    var seen: dict<bool> = {}
    for l in lists
      var title = trim(substitute(get(l, 'title', ''), '^:', '', ''))
      for item in get(l, 'items', [])
        if get(item, 'bufnr', 0) <= 0 || !get(item, 'valid', 1)
          continue
        endif
        sources += 1
        var path = util.RealPath(fnamemodify(bufname(item.bufnr), ':p'))
        var key = path .. ':' .. item.lnum .. ':' .. item.col .. ':' .. item.text
        if want != '' && path != want || has_key(seen, key)
          continue
        endif
        seen[key] = true
        add(out, Diagnostic(cache, path, item, false, title))
      endfor
    endfor
    if sources == 0
      Reply({code: NOT_AVAILABLE, message: 'Vim has no diagnostics' .. (want != '' ? ' for ' .. Name(want) : '')
        .. ': install ALE (Debian: vim-ale, then packadd! ale in your vimrc), or fill the quickfix list with :make'}, null)
      return
    endif
  endif
  filter(out, (_, d) => SEVERITY_RANK[d.severity] <= min_rank)
  sort(out, (a, b) => SEVERITY_RANK[a.severity] != SEVERITY_RANK[b.severity] ? SEVERITY_RANK[a.severity] - SEVERITY_RANK[b.severity]
    : a.path != b.path ? (a.path < b.path ? -1 : 1)
    : a.range.start.line != b.range.start.line ? a.range.start.line - b.range.start.line
    : a.range.start.character - b.range.start.character)
  var max = MaxResults(p)
  var res: dict<any> = {diagnostics: out}
  if len(out) > max
    res.diagnostics = out[: max - 1]
    res.truncated = true
  endif
  Reply({}, res)
enddef

# --- Definitions, references, hover -------------------------------------

def PositionParams(buf: number, line: string, p: dict<any>): dict<any>
  return {
    textDocument: {uri: ale#util#ToURI(fnamemodify(bufname(buf), ':p'))},
    position: {line: p.line - 1, character: ByteToUtf16(line, CharToByte(line, p.character - 1))},
  }
enddef

def Locations(result: any, max: number): dict<any>
  var list = type(result) == v:t_dict ? [result] : type(result) == v:t_list ? result : []
  var cache: dict<any> = {}
  var out: list<dict<any>> = []
  var truncated = false
  for loc in list
    var uri = get(loc, 'uri', get(loc, 'targetUri', ''))
    var r = get(loc, 'range', get(loc, 'targetSelectionRange', {}))
    if uri == '' || empty(r)
      continue
    endif
    if len(out) >= max
      truncated = true
      break
    endif
    var path = util.RealPath(ale#util#ToResource(uri))
    var lines = Lines(cache, path)
    var rng = RangeToLink(lines, r)
    add(out, {path: path, range: rng, text: get(lines, rng.start.line - 1, '')})
  endfor
  return truncated ? {locations: out, truncated: true} : {locations: out}
enddef

# The keyword at the position, for tags.
def WordAt(line: string, p: dict<any>): string
  var byte = CharToByte(line, p.character - 1)
  var start = byte
  # Bytes (strpart), not characters (line[i] counts characters in Vim9).
  while start > 0 && strpart(line, start - 1, 1) =~ '\k'
    start -= 1
  endwhile
  return matchstr(line, '^\k\+', start)
enddef

# Where a tag points: its line in its file (a number, or a search pattern).
def TagLine(tag: dict<any>, lines: list<string>): number
  var cmd = get(tag, 'cmd', '')
  if cmd =~ '^\d\+$'
    return str2nr(cmd)
  endif
  var pat = matchstr(cmd, '^/\zs.*\ze/;\?"\?$')
  if pat == ''
    pat = matchstr(cmd, '^?\zs.*\ze?;\?"\?$')
  endif
  if pat == ''
    return get(tag, 'line', 1)
  endif
  pat = '\M' .. escape(substitute(pat, '\\\([/?]\)', '\1', 'g'), '~')
  var i = 0
  for l in lines
    i += 1
    if l =~# pat
      return i
    endif
  endfor
  return 1
enddef

def TagLocation(cache: dict<any>, tag: dict<any>): dict<any>
  var path = util.RealPath(fnamemodify(tag.filename, ':p'))
  var lines = Lines(cache, path)
  var lnum = TagLine(tag, lines)
  var text = get(lines, lnum - 1, '')
  var col = stridx(text, tag.name)
  var char = col < 0 ? 1 : ByteToChar(text, col) + 1
  return {path: path, range: {start: {line: lnum, character: char},
    end: {line: lnum, character: col < 0 ? 1 : char + strchars(tag.name, 1)}}, text: text}
enddef

def AtPosition(method: string, capability: string, p: dict<any>, Reply: func, extra: dict<any>, Done: func)
  var buf = LoadBuffer(p.path)
  var line = CheckPosition(buf, p.path, p)
  if empty(AleLspLinters(buf))
    Reply(NoServer(buf, p.path), null)
    return
  endif
  AleRequest(buf, p.path, method, capability, extend(PositionParams(buf, line, p), extra), Reply, Done)
enddef

def GetDefinition(p: dict<any>, Reply: func)
  var buf = LoadBuffer(p.path)
  var line = CheckPosition(buf, p.path, p)
  if empty(AleLspLinters(buf)) && !empty(tagfiles())
    # Tags: every tag of the word under the position.
    var word = WordAt(line, p)
    var cache: dict<any> = {}
    var tags = word == '' ? [] : taglist('^' .. escape(word, '\.*$^~[]') .. '$', p.path)
    var max = MaxResults(p)
    var res: dict<any> = {locations: tags[: max - 1]->mapnew((_, t) => TagLocation(cache, t))}
    if len(tags) > max
      res.truncated = true
    endif
    Reply({}, res)
    return
  endif
  var max = MaxResults(p)
  AtPosition('textDocument/definition', 'definition', p, Reply, {}, (result) => Locations(result, max))
enddef

def GetReferences(p: dict<any>, Reply: func)
  var max = MaxResults(p)
  AtPosition('textDocument/references', 'references', p, Reply, {context: {includeDeclaration: true}},
    (result) => Locations(result, max))
enddef

def HoverText(contents: any): string
  if type(contents) == v:t_string
    return contents
  elseif type(contents) == v:t_dict
    var value = get(contents, 'value', '')
    return has_key(contents, 'language') ? "```" .. contents.language .. "\n" .. value .. "\n```" : value
  elseif type(contents) == v:t_list
    return contents->mapnew((_, c) => HoverText(c))->filter((_, t) => t != '')->join("\n\n")
  endif
  return ''
enddef

def GetHover(p: dict<any>, Reply: func)
  AtPosition('textDocument/hover', 'hover', p, Reply, {}, (result) => {
    var res: dict<any> = {contents: ''}
    if type(result) != v:t_dict
      return res
    endif
    res.contents = HoverText(get(result, 'contents', ''))
    if type(get(result, 'range', 0)) == v:t_dict
      res.range = RangeToLink(Lines({}, p.path), result.range)
    endif
    return res
  })
enddef

# --- Outlines and workspace symbols -------------------------------------

def Kind(k: any): string
  return type(k) == v:t_number && k >= 1 && k <= len(KINDS) ? KINDS[k - 1] : 'other'
enddef

def GetDocumentSymbols(p: dict<any>, Reply: func)
  var buf = LoadBuffer(p.path)
  var max = MaxResults(p)
  if empty(AleLspLinters(buf)) && !empty(tagfiles())
    var cache: dict<any> = {}
    var tags = taglist('.', p.path)->filter((_, t) => util.RealPath(fnamemodify(t.filename, ':p')) == p.path)
    var syms = tags->mapnew((_, t) => ({name: t.name, kind: get(TAG_KINDS, get(t, 'kind', ''), 'other'),
      range: TagLocation(cache, t).range}))
    sort(syms, (a, b) => a.range.start.line - b.range.start.line)
    var res: dict<any> = {symbols: syms[: max - 1]}
    if len(syms) > max
      res.truncated = true
    endif
    Reply({}, res)
    return
  endif
  AleRequest(buf, p.path, 'textDocument/documentSymbol', '',
    {textDocument: {uri: ale#util#ToURI(fnamemodify(bufname(buf), ':p'))}}, Reply, (result) => {
      var lines = Lines({}, p.path)
      var count = 0
      var truncated = false
      var Convert: func
      Convert = (list: any): list<dict<any>> => {
        var out: list<dict<any>> = []
        for s in type(list) == v:t_list ? list : []
          if count >= max
            truncated = true
            break
          endif
          var r = get(s, 'range', get(get(s, 'location', {}), 'range', {}))
          if empty(r)
            continue
          endif
          count += 1
          var sym: dict<any> = {name: s.name, kind: Kind(get(s, 'kind', 0)), range: RangeToLink(lines, r)}
          if get(s, 'detail', '') != ''
            sym.detail = s.detail
          endif
          var children = Convert(get(s, 'children', []))
          if !empty(children)
            sym.children = children
          endif
          add(out, sym)
        endfor
        return out
      }
      var syms = Convert(result)
      if type(result) == v:t_list && !empty(result) && has_key(result[0], 'location')
        # Flat SymbolInformation (ALE does not ask for a hierarchy): a
        # symbol goes inside the one its containerName names.
        syms = Nest(syms, result)
      endif
      return truncated ? {symbols: syms, truncated: true} : {symbols: syms}
    })
enddef

# syms (converted from the flat list infos, in the same order) nested by
# their containerName: inside the nearest symbol before them of that name.
def Nest(syms: list<dict<any>>, infos: list<any>): list<dict<any>>
  var top: list<dict<any>> = []
  var byName: dict<dict<any>> = {}
  var i = 0
  for sym in syms
    var container = i < len(infos) ? get(infos[i], 'containerName', '') : ''
    i += 1
    if type(container) == v:t_string && container != '' && has_key(byName, container)
      var parent = byName[container]
      parent.children = get(parent, 'children', []) + [sym]
    else
      add(top, sym)
    endif
    byName[sym.name] = sym
  endfor
  return top
enddef

def SearchWorkspaceSymbols(p: dict<any>, Reply: func)
  var query = get(p, 'query', '')
  var max = MaxResults(p)
  # A buffer whose language server to ask: the current one, else any
  # loaded buffer ALE has a language server for.
  var buf = 0
  for b in [bufnr()] + getbufinfo({bufloaded: 1})->mapnew((_, i) => i.bufnr)
    if !empty(AleLspLinters(b))
      buf = b
      break
    endif
  endfor
  if buf == 0
    if !empty(tagfiles())
      var cache: dict<any> = {}
      var tags = taglist('\V' .. escape(query, '\'))
      var res: dict<any> = {symbols: tags[: max - 1]->mapnew((_, t) => {
        var loc = TagLocation(cache, t)
        return {name: t.name, kind: get(TAG_KINDS, get(t, 'kind', ''), 'other'), path: loc.path, range: loc.range}
      })}
      if len(tags) > max
        res.truncated = true
      endif
      Reply({}, res)
      return
    endif
    Reply({code: NOT_AVAILABLE, message: 'Vim has no language server open to search workspace symbols: '
      .. (HasAle() ? 'open a file of the project that ALE has a language server for' : 'install ALE (Debian: vim-ale, then packadd! ale in your vimrc)')
      .. ', or generate tags (ctags -R)'}, null)
    return
  endif
  AleRequest(buf, bufname(buf), 'workspace/symbol', 'symbol_search', {query: query}, Reply, (result) => {
    var cache: dict<any> = {}
    var out: list<dict<any>> = []
    var truncated = false
    for s in type(result) == v:t_list ? result : []
      var loc = get(s, 'location', {})
      if type(loc) != v:t_dict || get(loc, 'uri', '') == ''
        continue
      endif
      if len(out) >= max
        truncated = true
        break
      endif
      var path = util.RealPath(ale#util#ToResource(loc.uri))
      var r = get(loc, 'range', {start: {line: 0, character: 0}, end: {line: 0, character: 0}})
      var sym: dict<any> = {name: s.name, kind: Kind(get(s, 'kind', 0)), path: path, range: RangeToLink(Lines(cache, path), r)}
      if get(s, 'containerName', '') != ''
        sym.containerName = s.containerName
      endif
      add(out, sym)
    endfor
    return truncated ? {symbols: out, truncated: true} : {symbols: out}
  })
enddef

# --- Open files ---------------------------------------------------------

def GetOpenEditors(p: dict<any>, Reply: func)
  var max = MaxResults(p)
  var cur = bufnr()
  var active = util.FileOf(cur) != '' ? cur : 0
  if active == 0
    # In the CLI's terminal: the file of the previous window.
    var prev = winbufnr(winnr('#'))
    active = prev > 0 && util.FileOf(prev) != '' ? prev : 0
  endif
  var infos = getbufinfo({buflisted: 1, bufloaded: 1})
  sort(infos, (a, b) => b.lastused - a.lastused)
  var order = (active > 0 ? [active] : []) + infos->mapnew((_, i) => i.bufnr)->filter((_, b) => b != active)
  var out: list<dict<any>> = []
  var truncated = false
  for buf in order
    var path = util.FileOf(buf)
    if path == ''
      continue
    endif
    if len(out) >= max
      truncated = true
      break
    endif
    var win = buf == cur ? win_getid() : bufwinid(buf)
    var lnum: number
    var col: number
    if win > 0
      var pos = getcurpos(win)
      [lnum, col] = [pos[1], pos[2]]
    else
      var info = getbufinfo(buf)[0]
      [lnum, col] = [max([info.lnum, 1]), 1]
    endif
    var text = get(getbufline(buf, lnum), 0, '')
    var ed: dict<any> = {path: path, cursor: {line: lnum, character: ByteToChar(text, col - 1) + 1}}
    if buf == active
      ed.active = true
    endif
    if getbufvar(buf, '&modified')
      ed.dirty = true
    endif
    add(out, ed)
  endfor
  Reply({}, truncated ? {editors: out, truncated: true} : {editors: out})
enddef

var open_match: dict<number> = {}  # window -> match of the lines openFile marked
var open_at: dict<any> = {}        # that match: its window, id and line

def OpenFile(p: dict<any>, Reply: func)
  var path = p.path
  if !filereadable(path)
    Fail(INVALID_PARAMS, path .. ' does not exist')
  endif
  # A window for it: the current one unless it is a terminal or special,
  # else the previous one, else the first usable one, else a new split.
  var Usable = (w: number): bool => w > 0 && getwinvar(w, '&buftype') == '' && win_gettype(w) == ''
  var win = win_getid()
  if !Usable(win)
    var prev = win_getid(winnr('#'))
    win = Usable(prev) ? prev : 0
  endif
  if win == 0
    for w in gettabinfo(tabpagenr())[0].windows
      if Usable(w)
        win = w
        break
      endif
    endfor
  endif
  var back = win_getid()
  if win == 0
    aboveleft new
    win = win_getid()
  endif
  win_execute(win, 'hide edit ' .. fnameescape(path))
  var count = line('$', win)
  var lnum = get(p, 'line', 0)
  if type(lnum) == v:t_number && lnum > 0
    if lnum > count
      Fail(INVALID_PARAMS, printf('line %d is past the end of %s (%d lines)', lnum, Name(path), count))
    endif
    var last = min([max([get(p, 'endLine', lnum), lnum]), count])
    win_execute(win, 'cursor(' .. lnum .. ', 1) | normal! zz')
    if has_key(open_match, win)
      silent! matchdelete(open_match[win], win)
    endif
    open_match[win] = matchaddpos('Visual', range(lnum, last), 10, -1, {window: win})
    open_at = {win: win, id: open_match[win], line: lnum}
    # Cleared once the user moves away, in that window, from where it put
    # the cursor.
    augroup GeminiCompanionOpenFile
      autocmd!
      autocmd CursorMoved * ClearOpenMatch(false)
      autocmd InsertEnter,BufLeave * ClearOpenMatch(true)
    augroup END
  endif
  win_gotoid(back)
  Reply({}, {})
enddef

def ClearOpenMatch(always: bool)
  if empty(open_at) || win_getid() != open_at.win || !always && line('.') == open_at.line
    return
  endif
  silent! matchdelete(open_at.id, open_at.win)
  remove(open_match, open_at.win)
  open_at = {}
  augroup GeminiCompanionOpenFile
    autocmd!
  augroup END
enddef

# --- Wiring -------------------------------------------------------------

const HANDLERS = {
  'editor/getDiagnostics': ['diagnostics', GetDiagnostics],
  'editor/getDefinition': ['definition', GetDefinition],
  'editor/getReferences': ['references', GetReferences],
  'editor/getHover': ['hover', GetHover],
  'editor/getDocumentSymbols': ['documentSymbols', GetDocumentSymbols],
  'editor/searchWorkspaceSymbols': ['workspaceSymbols', SearchWorkspaceSymbols],
  'editor/getOpenEditors': ['openEditors', GetOpenEditors],
  'editor/openFile': ['openFile', OpenFile],
}

# Answers one editor/* request: Reply(err, result) as the link sends it.
export def Handle(method: string, params: dict<any>, Reply: func)
  if !has_key(HANDLERS, method)
    Reply({code: -32601, message: 'method not found: ' .. method}, null)
    return
  endif
  try
    if method =~ 'getDefinition\|getReferences\|getHover\|getDocumentSymbols\|openFile'
        && (type(get(params, 'path', 0)) != v:t_string || params.path == '')
      Fail(INVALID_PARAMS, 'path is missing')
    endif
    var F = HANDLERS[method][1]
    F(params, Reply)
  catch /^gemini-tools:/
    var parts = matchlist(v:exception, '^gemini-tools:\(-\?\d\+\):\(.*\)$')
    Reply({code: str2nr(parts[1]), message: parts[2]}, null)
  endtry
enddef

# The capabilities of the editor tools, for initialize.
export def Capabilities(): dict<bool>
  var on = util.Opt('tools')
  var caps: dict<bool> = {}
  for [method, h] in items(HANDLERS)
    caps[h[0]] = on
  endfor
  return caps
enddef

# The link's handler of one method (a function of its own: a closure made
# in a loop would share the loop's variable).
def Handler(method: string): func
  return (params: dict<any>, Reply: func) => {
    if !util.Opt('tools')
      Reply({code: NOT_AVAILABLE, message: 'the editor tools are off in Vim (g:gemini_companion.tools)'}, null)
      return
    endif
    Handle(method, params, Reply)
  }
enddef

export def Setup()
  for method in keys(HANDLERS)
    link.On(method, Handler(method))
  endfor
enddef
