//go:build linux

// Command editorbench measures what each editor plugin (Neovim, Vim, Emacs)
// costs while the user moves the cursor and selects, in the real editor
// with the real sidecar attached.
//
// Each editor runs twice, on pseudo-terminals of the driver's, as a user
// runs it: once with the plugin installed as its README says and once
// without it. The driver types keys into the terminal at a fixed pace (j/k
// in Vim and Neovim, C-n/C-p in Emacs; V or C-SPC first for a selection),
// so every move goes through the editor's own input, command loop and
// events (CursorMoved, post-command-hook) exactly as a keystroke does. It
// reads each editor's CPU time from /proc around every phase, and the
// sidecar is started through a tap (this binary's `tap` subcommand) that
// copies the editor's pipe to the sidecar unchanged and reports every
// message that crossed it. Runs with and without the plugin alternate,
// phase by phase, for several rounds; the report gives the median over the
// rounds with the range in brackets.
//
// It asserts nothing about speed: it exits non-zero only when something did
// not work (an editor not starting or not taking the keys, the final
// cursor or selection never reaching the sidecar, or reaching it before an
// older one).
//
// Usage:
//
//	editorbench --sidecar PATH [--editors nvim,vim,emacs] [--rounds N]
//	            [--moves N] [--selections N] [--repeat N] [--short]
//	            [--plugins DIR] [--json FILE] [--keep]
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "tap" {
		os.Exit(runTap(os.Args[2:]))
	}
	os.Exit(run())
}

// debounce is the sidecar's trailing debounce of context updates: the
// plugins should send at most one message per interval while the cursor
// moves.
const debounce = 50 * time.Millisecond

type options struct {
	sidecar    string
	plugins    string
	editors    []string
	phases     []string
	rounds     int
	moves      int
	movePace   time.Duration
	selections int
	selPace    time.Duration
	repeat     int
	repeatPace time.Duration
	settle     time.Duration
	jsonOut    string
	keep       bool
	short      bool
	restart    bool
	label      string
	extra      map[string]string
	baseline   map[string]string
}

func run() int {
	var o options
	var editorList, phaseList, nvimExtra, vimExtra, emacsExtra string
	short := flag.Bool("short", false, "one short round (CI smoke): 300 moves, 60 selection changes, 15 moves at key-repeat pace")
	flag.StringVar(&o.sidecar, "sidecar", "", "the gemini-ide-companion binary (required)")
	flag.StringVar(&o.plugins, "plugins", "", "the plugins/ folder to measure (default: this checkout's)")
	flag.StringVar(&editorList, "editors", "nvim,vim,emacs", "editors to measure, comma-separated")
	flag.StringVar(&phaseList, "phases", "moves,selections,repeat", "phases to run, comma-separated: moves, selections, repeat (moves at key-repeat pace)")
	flag.IntVar(&o.rounds, "rounds", 3, "rounds; each runs every phase with and without the plugin, in alternating order")
	flag.IntVar(&o.moves, "moves", 10000, "cursor moves per round")
	flag.DurationVar(&o.movePace, "move-pace", 2*time.Millisecond, "time between two cursor moves")
	flag.IntVar(&o.selections, "selections", 1000, "selection changes per round")
	flag.DurationVar(&o.selPace, "selection-pace", 4*time.Millisecond, "time between two selection changes")
	flag.IntVar(&o.repeat, "repeat", 600, "cursor moves per round at key-repeat pace")
	flag.DurationVar(&o.repeatPace, "repeat-pace", 33*time.Millisecond, "time between two moves at key-repeat pace (a held key repeats 25 to 40 times a second)")
	flag.DurationVar(&o.settle, "settle", 400*time.Millisecond, "time after the editor took the last key until the CPU time is read (the plugin's last report and the editor's idle work fall in it)")
	flag.BoolVar(&checkFinal, "check", true, "fail when the final cursor or selection does not reach the sidecar (false: for experiments with a plugin that sends nothing)")
	flag.StringVar(&o.jsonOut, "json", "", "also write the figures to this file as JSON")
	flag.BoolVar(&o.restart, "restart", false, "start the editors anew for every round (the figures then vary with the process as well as with the round)")
	flag.BoolVar(&o.keep, "keep", false, "keep the sandbox (init files, sidecar logs)")
	flag.StringVar(&o.label, "label", "", "a name for this run in the report (e.g. the commit measured)")
	flag.StringVar(&nvimExtra, "nvim-setup", "", `extra Lua fields for Neovim's setup(), e.g. "context = { coalesce_ms = 20 }"`)
	flag.StringVar(&vimExtra, "vim-config", "", `extra entries for g:gemini_companion, e.g. "'coalesce_ms': 30"`)
	flag.BoolVar(&emacsSource, "emacs-source", false, "load the Emacs package from its .el files instead of compiling it as its README says (to measure what compiling saves)")
	flag.StringVar(&emacsExtra, "emacs-config", "", `an extra form for Emacs before the mode starts, e.g. "(setq gemini-companion-context-delay 0.05)"`)
	o.baseline = map[string]string{}
	for _, name := range []string{"nvim", "vim", "emacs"} {
		flag.Func(name+"-baseline", "init code (in "+name+"'s language) for the "+name+" without the plugin, e.g. for Emacs \"(require 'jsonrpc)\"", func(v string) error {
			o.baseline[name] = v
			return nil
		})
	}
	flag.Parse()
	if *short {
		// A smoke run: every phase works and the final state arrives; the
		// figures mean little (Emacs's start-up work is not waited for).
		o.short = true
		o.rounds, o.moves, o.selections, o.repeat, o.settle = 1, 300, 60, 15, 250*time.Millisecond
	}
	o.phases = strings.Split(phaseList, ",")
	for _, p := range o.phases {
		if p != "moves" && p != "selections" && p != "repeat" {
			fmt.Fprintf(os.Stderr, "editorbench: unknown phase %q (moves, selections, repeat)\n", p)
			return 2
		}
	}
	if o.sidecar == "" {
		fmt.Fprintln(os.Stderr, "editorbench: --sidecar is required")
		return 2
	}
	o.editors = strings.Split(editorList, ",")
	o.extra = map[string]string{}
	if nvimExtra != "" {
		o.extra["nvim"] = ", " + nvimExtra
	}
	if vimExtra != "" {
		o.extra["vim"] = ", " + vimExtra
	}
	if emacsExtra != "" {
		o.extra["emacs"] = emacsExtra
	}
	for _, name := range o.editors {
		if editorNamed(name) == nil {
			fmt.Fprintf(os.Stderr, "editorbench: unknown editor %q (nvim, vim, emacs)\n", name)
			return 2
		}
	}
	if err := measure(o); err != nil {
		fmt.Fprintf(os.Stderr, "editorbench: %v\n", err)
		return 1
	}
	return 0
}

// live holds the running sessions, so that an interrupt stops them.
var live struct {
	sync.Mutex
	sessions map[*session]bool
}

func track(s *session, on bool) {
	live.Lock()
	defer live.Unlock()
	if live.sessions == nil {
		live.sessions = map[*session]bool{}
	}
	if on {
		live.sessions[s] = true
	} else {
		delete(live.sessions, s)
	}
}

func measure(o options) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	sidecar, err := filepath.Abs(o.sidecar)
	if err != nil {
		return err
	}
	plugins := o.plugins
	if plugins == "" {
		plugins = filepath.Join(filepath.Dir(self), "..", "plugins")
		if wd, err := os.Getwd(); err == nil {
			plugins = filepath.Join(wd, "plugins")
		}
	}
	plugins, err = filepath.Abs(plugins)
	if err != nil {
		return err
	}
	root, err := os.MkdirTemp("", "gic-ebench")
	if err != nil {
		return err
	}
	if o.keep {
		fmt.Fprintf(os.Stderr, "editorbench: sandbox kept in %s\n", root)
	} else {
		defer os.RemoveAll(root)
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		live.Lock()
		for s := range live.sessions {
			s.Close()
		}
		live.Unlock()
		if !o.keep {
			os.RemoveAll(root)
		}
		os.Exit(130)
	}()

	known := map[string]phase{
		"moves":      {Name: "cursor moves", Count: o.moves, Pace: o.movePace},
		"selections": {Name: "selection changes", Count: o.selections, Pace: o.selPace, Select: true},
		"repeat":     {Name: "moves at key-repeat pace", Count: o.repeat, Pace: o.repeatPace},
	}
	var phases []phase
	for _, name := range o.phases {
		phases = append(phases, known[name])
	}
	rep := report{Label: o.label, Rounds: o.rounds, Started: time.Now(), Phases: phases, Sidecar: sidecar}
	for _, name := range o.editors {
		ed := editorNamed(name)
		res, err := measureEditor(o, ed, phases, plugins, sidecar, self, filepath.Join(root, name))
		if err != nil {
			return err
		}
		rep.Editors = append(rep.Editors, res)
	}
	rep.print(os.Stdout)
	if o.jsonOut != "" {
		data, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(o.jsonOut, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func editorVersion(program string) string {
	out, err := exec.Command(program, "--version").Output()
	if err != nil {
		return program + " (version unknown)"
	}
	line, _, _ := strings.Cut(string(out), "\n")
	return strings.TrimSpace(line)
}

// The text the editors open: 2,000 lines of about 60 characters.
func benchText() string {
	var b strings.Builder
	for i := 1; i <= 2000; i++ {
		fmt.Fprintf(&b, "line %4d: the quick brown fox jumps over the lazy dog, twice.\n", i)
	}
	return b.String()
}

func measureEditor(o options, ed *editor, phases []phase, plugins, sidecar, self, dir string) (editorResult, error) {
	res := editorResult{Editor: ed.Name, Version: editorVersion(ed.Program)}
	ws := filepath.Join(dir, "workspace")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		return res, err
	}
	file := filepath.Join(ws, "bench.txt")
	if err := os.WriteFile(file, []byte(benchText()), 0o644); err != nil {
		return res, err
	}
	sessions := map[bool]*session{}
	stop := func() {
		for plugin, s := range sessions {
			s.Close()
			track(s, false)
			delete(sessions, plugin)
		}
	}
	defer stop()
	// start starts both sessions (again, in the same sandboxes: Emacs finds
	// what it compiled the first time) and waits for their start-up work.
	start := func() error {
		for _, plugin := range []bool{true, false} {
			name := "without"
			if plugin {
				name = "with"
			}
			fmt.Fprintf(os.Stderr, "editorbench: starting %s %s the plugin\n", ed.Name, name)
			s, err := startSession(ed, plugin, sessionConfig{
				Root: filepath.Join(dir, name), PluginDir: filepath.Join(plugins, ed.Name), Sidecar: sidecar,
				Self: self, File: file, Workspace: ws, Extra: o.extra[ed.Name], Baseline: o.baseline[ed.Name], Rows: 40, Cols: 120,
			})
			if err != nil {
				return err
			}
			track(s, true)
			sessions[plugin] = s
		}
		for _, s := range sessions {
			if s.ed.Settled == "" || o.short {
				continue
			}
			started := time.Now()
			if err := s.settle(10 * time.Minute); err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "editorbench: %s finished its start-up work in %v\n", s, time.Since(started).Round(time.Second))
		}
		return nil
	}
	if err := start(); err != nil {
		return res, err
	}
	res.Phases = make([]phaseSummary, len(phases))
	for i, p := range phases {
		res.Phases[i].Phase = p.Name
		res.Phases[i].Count = p.Count
		res.Phases[i].Pace = p.Pace
	}
	for round := 0; round < o.rounds; round++ {
		if o.restart && round > 0 {
			// New processes each round: what differs between two editor
			// processes (where the heap lies, what the cache holds) then
			// shows in the range instead of in every round alike.
			stop()
			if err := start(); err != nil {
				return res, err
			}
		}
		for i, p := range phases {
			fmt.Fprintf(os.Stderr, "editorbench: round %d/%d, %s with and without the plugin: %s\n", round+1, o.rounds, ed.Name, p.Name)
			order := []*session{sessions[true], sessions[false]}
			if round%2 == 1 {
				order = []*session{sessions[false], sessions[true]}
			}
			rs, err := runTogether(p, order, o.settle)
			if err != nil {
				return res, err
			}
			if round%2 == 1 {
				rs[0], rs[1] = rs[1], rs[0]
			}
			res.Phases[i].add(p, rs[0], rs[1])
		}
	}
	return res, nil
}
