vim9script
# What the context module reports for the cursor and the selection, in
# every visual mode, with multibyte text, 'selection' exclusive and the
# size limit from the sidecar's policy.

import autoload 'gemini_companion/context.vim'

def Buffer(lines: list<string>)
  enew!
  setline(1, lines)
enddef

# Starts Visual mode kind at [l1, c1] and moves the cursor to [l2, c2].
def Select(kind: string, l1: number, c1: number, l2: number, c2: number)
  cursor(l1, c1)
  execute 'normal! ' .. kind
  cursor(l2, c2)
enddef

def g:Test_cursor_counts_utf16_units()
  Buffer(['first', "a\u00e9\U0001F600bc d"])
  # Byte 8 of line 2 is 'b': after a (1), é (1) and the emoji (2) units.
  cursor(2, 8)
  assert_equal({line: 2, character: 5}, context.Cursor())
  cursor(1, 1)
  assert_equal({line: 1, character: 1}, context.Cursor())
enddef

def g:Test_charwise_selection()
  Buffer(['first', "a\u00e9\U0001F600bc d"])
  Select('v', 2, 1, 2, 8)
  assert_equal("a\u00e9\U0001F600b", context.Selection('v'))
  execute "normal! \<Esc>"
  # Backwards over a line break: the text is the same either way.
  Select('v', 2, 8, 1, 5)
  assert_equal("t\na\u00e9\U0001F600b", context.Selection('v'))
  execute "normal! \<Esc>"
enddef

def g:Test_charwise_selection_exclusive()
  Buffer(['one', 'two', 'three'])
  set selection=exclusive
  try
    Select('v', 3, 1, 3, 6)
    assert_equal('three', context.Selection('v'))
    assert_equal({line: 3, character: 6}, context.Cursor())
    execute "normal! \<Esc>"
  finally
    set selection&
  endtry
enddef

def g:Test_linewise_and_blockwise_selection()
  Buffer(['abcdef', "\u03b1\u03b2\u03b3\u03b4\u03b5\u03b6", '123456'])
  Select('V', 1, 1, 2, 1)
  assert_equal("abcdef\n\u03b1\u03b2\u03b3\u03b4\u03b5\u03b6", context.Selection('V'))
  execute "normal! \<Esc>"
  # Columns 2-4 of three lines, one of them two bytes a character.
  Select("\<C-V>", 1, 2, 3, 4)
  assert_equal("bcd\n\u03b2\u03b3\u03b4\n234", context.Selection("\<C-V>"))
  execute "normal! \<Esc>"
enddef

def g:Test_selection_is_cut_to_the_policy_limit_on_a_character()
  var limit = gemini_companion#link#Policy().limits.maxSelectionBytes
  # Two-byte characters, one byte over the limit at the end.
  Buffer([repeat("\u00e9", limit / 2 + 10)])
  Select('V', 1, 1, 1, 1)
  var text = context.Selection('V')
  assert_true(len(text) <= limit, 'len ' .. len(text))
  assert_true(len(text) >= limit - 1, 'len ' .. len(text))
  assert_equal(strchars(text) * 2, len(text), 'cut inside a character')
  execute "normal! \<Esc>"
enddef
