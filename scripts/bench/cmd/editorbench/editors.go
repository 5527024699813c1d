//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// An editor is how the benchmark runs one editor: its command line, the
// init file with and without the plugin, the keys a user types, and the
// expressions the control channel evaluates.
type editor struct {
	Name    string
	Program string
	// Down and Up move the cursor one line; SelectStart starts a selection
	// at the cursor (each move after it changes the selection); Reset ends
	// any selection and goes to line 1, column 1, in chunks typed with a
	// pause between them (a terminal reads ESC followed at once by a key as
	// Meta-key).
	Down, Up, SelectStart string
	Reset                 []string
	// Seq is the expression for the number of times the sentinel key (F12,
	// bound in the init file to count) was typed.
	Seq string
	// Settled, when set, is an expression that is true once the editor
	// has finished the work it does after start-up on its own (Emacs's
	// deferred native compilation of the libraries it loaded, in
	// processes whose output it reads): measuring starts then.
	Settled string
	// GC, when set, is the expression for [collections, seconds, bytes]:
	// how often and how long the editor's garbage collector ran so far,
	// and how much it allocated.
	GC string
	// args returns the command line after Program.
	args func(init, file string) []string
	// init returns the init file for a session.
	init func(s initParams) (name, text string)
	// install, when set, prepares the plugin as its README installs it,
	// before init, and returns the folder init is to load it from.
	install func(s initParams) (dir string, err error)
}

// emacsSource makes the benchmark load the Emacs package from its .el
// files, as it ran before its README had users compile it (--emacs-source).
var emacsSource bool

// installEmacs copies the package's .el files into the session's sandbox
// and compiles them there with the command of plugins/emacs/README.md, so
// that the checkout is left without .elc files. A session started again
// (--restart) finds them compiled.
func installEmacs(p initParams) (string, error) {
	if emacsSource {
		return p.PluginDir, nil
	}
	dir := filepath.Join(p.PackDir, "gemini-companion")
	if _, err := os.Stat(filepath.Join(dir, "gemini-companion.elc")); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	files, err := filepath.Glob(filepath.Join(p.PluginDir, "*.el"))
	if err != nil || len(files) == 0 {
		return "", fmt.Errorf("no .el files in %s", p.PluginDir)
	}
	args := []string{"--batch", "-L", dir, "-f", "batch-byte-compile"}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		to := filepath.Join(dir, filepath.Base(f))
		if err := os.WriteFile(to, b, 0o644); err != nil {
			return "", err
		}
		args = append(args, to)
	}
	if out, err := exec.Command("emacs", args...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("byte-compiling the Emacs package: %w\n%s", err, out)
	}
	return dir, nil
}

// sentinelKey is F12 as xterm sends it: the init files bind it, in every
// mode the benchmark types in, to a counter the driver reads back, so the
// driver knows when the editor has taken every key typed before it.
const sentinelKey = "\x1b[24~"

type initParams struct {
	Plugin     bool   // load the plugin as its README says
	PluginDir  string // plugins/<editor> of the checkout being measured
	PackDir    string // a directory the init may use for packages
	Sidecar    string // the sidecar command (the tap)
	CtlPort    int    // the driver's control port
	Workspace  string
	StateDir   string
	ExtraSetup string // added to the plugin's setup (Neovim) / config
	Baseline   string // init code for the session without the plugin
}

func luaString(s string) string { return strconv.Quote(s) }

func vimString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func elispString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

var editors = []*editor{
	{
		Name: "nvim", Program: "nvim",
		Down: "j", Up: "k", SelectStart: "V",
		Reset: []string{"\x1b", "gg0"},
		Seq:   "return vim.g.bench_seq",
		args: func(init, file string) []string {
			return []string{"--clean", "-u", init, "-i", "NONE", file}
		},
		init: func(p initParams) (string, string) {
			var b strings.Builder
			fmt.Fprintf(&b, `vim.o.swapfile = false
vim.o.ttimeoutlen = 10
vim.g.bench_seq = 0
vim.keymap.set({ "n", "x" }, "<F12>", function() vim.g.bench_seq = vim.g.bench_seq + 1 end)
local ctl, pending = vim.loop.new_tcp(), ""
ctl:connect("127.0.0.1", %d, function(err)
  if err then return end
  ctl:read_start(function(_, chunk)
    if not chunk then return end
    pending = pending .. chunk
    while true do
      local nl = pending:find("\n", 1, true)
      if not nl then break end
      local expr = pending:sub(1, nl - 1)
      pending = pending:sub(nl + 1)
      vim.schedule(function()
        local ok, value = pcall(function() return assert(loadstring(expr))() end)
        ctl:write(vim.json.encode({ ok, value == nil and vim.NIL or value }) .. "\n")
      end)
    end
  end)
end)
`, p.CtlPort)
			if p.Plugin {
				fmt.Fprintf(&b, `vim.opt.rtp:prepend(%s)
require("gemini_companion").setup({ sidecar = { cmd = %s }%s })
`, luaString(p.PluginDir), luaString(p.Sidecar), p.ExtraSetup)
			}
			if !p.Plugin {
				b.WriteString(p.Baseline + "\n")
			}
			return "init.lua", b.String()
		},
	},
	{
		Name: "vim", Program: "vim",
		Down: "j", Up: "k", SelectStart: "V",
		Reset: []string{"\x1b", "gg0"},
		Seq:   "g:bench_seq",
		args: func(init, file string) []string {
			return []string{"-u", init, "-i", "NONE", file}
		},
		init: func(p initParams) (string, string) {
			var b strings.Builder
			fmt.Fprintf(&b, `set nocompatible noswapfile shortmess+=I ttimeout ttimeoutlen=10
let g:bench_seq = 0
nnoremap <F12> <Cmd>let g:bench_seq += 1<CR>
xnoremap <F12> <Cmd>let g:bench_seq += 1<CR>
function! BenchCtl(ch, msg) abort
  try
    let l:answer = [1, eval(a:msg)]
  catch
    let l:answer = [0, v:exception]
  endtry
  call ch_sendraw(a:ch, json_encode(l:answer) .. "\n")
endfunction
let g:bench_ctl = ch_open('127.0.0.1:%d', {'mode': 'nl', 'callback': 'BenchCtl', 'waittime': 10000})
`, p.CtlPort)
			if p.Plugin {
				// Installed as the README says: a native package in
				// pack/*/start (here under a packpath of the sandbox).
				start := filepath.Join(p.PackDir, "pack", "gemini", "start")
				_ = os.MkdirAll(start, 0o755)
				_ = os.Symlink(p.PluginDir, filepath.Join(start, "gemini-companion"))
				fmt.Fprintf(&b, "set packpath^=%s\nlet g:gemini_companion = {'sidecar': %s%s}\n",
					p.PackDir, vimString(p.Sidecar), p.ExtraSetup)
			}
			if !p.Plugin {
				b.WriteString(p.Baseline + "\n")
			}
			return "vimrc", b.String()
		},
	},
	{
		Name: "emacs", Program: "emacs",
		Down: "\x0e", Up: "\x10", SelectStart: "\x00", // C-n, C-p, C-SPC
		// F11, bound in the init file to deactivate the mark and go to
		// the top (C-g quits, and a quit can drop keys typed after it).
		Reset: []string{"\x1b[23~"},
		Seq:   "bench-seq",
		Settled: "(or (not (featurep 'native-compile)) (not (fboundp 'comp-async-runnings))" +
			" (and (= (comp-async-runnings) 0) (null comp-files-queue)))",
		GC: "(let ((m (memory-use-counts))) (vector gcs-done gc-elapsed (+ (* 16 (nth 0 m)) (* 16 (nth 1 m)) (* 8 (nth 2 m))" +
			" (* 48 (nth 3 m)) (nth 4 m) (* 56 (nth 5 m)) (* 32 (nth 6 m)))))",
		args: func(init, file string) []string {
			return []string{"-nw", "-q", "--no-splash", "-l", init, file}
		},
		install: installEmacs,
		init: func(p initParams) (string, string) {
			var b strings.Builder
			fmt.Fprintf(&b, `;;; -*- lexical-binding: t -*-
(require 'json)
(setq xterm-extra-capabilities nil make-backup-files nil auto-save-default nil
      create-lockfiles nil ring-bell-function #'ignore)
(defvar bench-seq 0)
(global-set-key (kbd "<f12>") (lambda () (interactive) (setq bench-seq (1+ bench-seq))))
(global-set-key (kbd "<f11>") (lambda () (interactive) (deactivate-mark) (goto-char (point-min))))
(defvar bench-ctl-pending "")
(make-network-process
 :name "bench-ctl" :host "127.0.0.1" :service %d :noquery t
 :filter (lambda (proc chunk)
           (setq bench-ctl-pending (concat bench-ctl-pending chunk))
           (while (string-match "\n" bench-ctl-pending)
             (let ((expr (substring bench-ctl-pending 0 (match-beginning 0))))
               (setq bench-ctl-pending (substring bench-ctl-pending (match-end 0)))
               (process-send-string
                proc
                (concat (condition-case err
                            (json-encode (vector t (eval (read expr) t)))
                          (error (json-encode (vector :json-false (error-message-string err)))))
                        "\n"))))))
`, p.CtlPort)
			if p.Plugin {
				fmt.Fprintf(&b, `(add-to-list 'load-path %s)
(require 'gemini-companion)
(setq gemini-companion-sidecar-program %s)
%s
(gemini-companion-mode 1)
`, elispString(p.PluginDir), elispString(p.Sidecar), p.ExtraSetup)
			}
			if !p.Plugin {
				b.WriteString(p.Baseline + "\n")
			}
			return "init.el", b.String()
		},
	},
}

func editorNamed(name string) *editor {
	for _, e := range editors {
		if e.Name == name {
			return e
		}
	}
	return nil
}
