vim9script
# Helpers the Go tests call through the control channel (sourced by the
# test vimrc): what a user sees, gathered in one call.

# The diff tab of path: its two windows' buffers, texts and diff flags.
def g:GicDiffTab(path: string): dict<any>
  var out: dict<any> = {found: false, tabs: tabpagenr('$'), current_buf: bufnr()}
  for tab in range(1, tabpagenr('$'))
    var bufs = tabpagebuflist(tab)
    var wins = gettabinfo(tab)[0].windows
    if len(bufs) == 2 && bufname(bufs[1]) ==# 'gemini://proposal/' .. path
      out.found = true
      out.tab = tab
      out.diff = [getwinvar(wins[0], '&diff'), getwinvar(wins[1], '&diff')]
      out.left = getbufline(bufs[0], 1, '$')
      out.left_modifiable = getbufvar(bufs[0], '&modifiable')
      out.right = getbufline(bufs[1], 1, '$')
      out.right_buf = bufs[1]
      out.right_statusline = getwinvar(wins[1], '&statusline')
      out.state = getbufvar(bufs[1], 'gemini_diff', {})
    endif
  endfor
  return out
enddef
