vim9script
# g:gemini_companion: defaults, validation (a wrong value is reported once
# and the default used), and the commands and mappings the plugin defines.

import autoload 'gemini_companion/util.vim'

def g:Test_options_fall_back_to_defaults_with_one_warning()
  var saved = deepcopy(g:gemini_companion)
  try
    # Only warnings and errors are shown: the message below is one.
    g:gemini_companion.notify_level = 'warn'
    g:gemini_companion.position = 'diagonal'
    g:gemini_companion.size = 'big'
    g:gemini_companion.typo = 1
    assert_equal('right', util.Opt('position'))
    assert_equal('right', util.Opt('position'))
    assert_equal(0, util.Opt('size'))
    var notes = g:GicMessages()->filter((_, m) => m =~ 'g:gemini_companion.position')
    assert_equal(1, len(notes), 'one warning, not one per use')
    assert_equal(['typo'], util.UnknownOptions())
    g:gemini_companion.position = 'bottom'
    assert_equal('bottom', util.Opt('position'))
    assert_equal(['gemini'], util.Opt('cli'))
  finally
    g:gemini_companion = saved
  endtry
enddef

def g:Test_commands_and_plug_mappings_exist()
  for cmd in ['GeminiCli', 'GeminiToggle', 'GeminiAccept', 'GeminiReject', 'GeminiStatus', 'GeminiDoctor', 'GeminiStart', 'GeminiStop', 'GeminiRestart']
    assert_equal(2, exists(':' .. cmd), cmd)
  endfor
  for name in ['GeminiCli', 'GeminiToggle', 'GeminiAccept', 'GeminiReject', 'GeminiStatus']
    assert_notequal('', maparg('<Plug>(' .. name .. ')', 'n'), name)
  endfor
  assert_notequal('', maparg('<Plug>(GeminiToggle)', 't'))
  # Nothing is mapped for the user.
  assert_equal('', mapcheck('<Leader>g', 'n'))
enddef

def g:Test_text_helpers()
  assert_equal('ab', util.Clip('abc', 2))
  # Never inside a character: é is two bytes.
  assert_equal('a', util.Clip("a\u00e9", 2))
  assert_equal("a\u00e9", util.Clip("a\u00e9", 3))
  assert_equal(4, util.Utf16Len("a\u00e9\U0001F600"))
  enew!
  util.SetBufText(bufnr(), "x\ny\n")
  assert_equal(['x', 'y'], getline(1, '$'))
  assert_equal("x\ny\n", util.BufText(bufnr()))
  util.SetBufText(bufnr(), "no newline")
  assert_equal('no newline', util.BufText(bufnr()))
  util.SetBufText(bufnr(), '')
  assert_equal('', util.BufText(bufnr()))
enddef
