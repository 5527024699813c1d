package testkit

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A SpawnGate makes the moment between Gemini CLI's A2A server reporting a
// shell command "executing" and spawning it last until the client's cancel
// has reached the server, so that a test can cancel in that moment every
// time instead of now and then.
//
// In server 0.25.2 the shell tool checks that its turn is not aborted, then
// awaits the import of node-pty (its first command only: the module is
// cached afterwards), then spawns the command and adds the abort listener
// that would kill it. The gate, a Node preload given to the server through
// NODE_OPTIONS, holds that first import (a module resolve hook) until the
// turn's abort has run: the server aborts a turn from the close handler of
// the connection that started it (onClientEnd), which is what a client's
// cancel does. Only then does the command spawn, under an aborted turn;
// the gate notes the pid of the command it spawns (the first process whose
// command line holds the gate's marker, through node-pty or child_process).
type SpawnGate struct {
	dir string
	// Env is what the server's environment needs for the gate:
	// NODE_OPTIONS and the gate's folder.
	Env []string
}

const spawnGateCJS = `'use strict';
const dir = process.env.GIC_TEST_SPAWN_GATE;
const marker = process.env.GIC_TEST_SPAWN_GATE_MARKER || '';
delete process.env.GIC_TEST_SPAWN_GATE;
delete process.env.GIC_TEST_SPAWN_GATE_MARKER;
if (dir) {
  const fs = require('fs');
  const path = require('path');
  const { pathToFileURL } = require('url');
  require('module').register(pathToFileURL(path.join(dir, 'hooks.mjs')).href, { data: { dir } });
  const held = path.join(dir, 'held');
  const release = path.join(dir, 'released');
  const abort = AbortController.prototype.abort;
  AbortController.prototype.abort = function () {
    const r = abort.apply(this, arguments);
    // The turn's own abort: the close handler of its connection.
    if (fs.existsSync(held) && !fs.existsSync(release) && /onClientEnd/.test(new Error().stack)) {
      fs.writeFileSync(release, 'after the turn was aborted\n');
    }
    return r;
  };
  // The pid of the marked command, once spawned.
  const spawned = path.join(dir, 'spawned');
  const note = (args, pid) => {
    if (!pid || !marker || fs.existsSync(spawned)) return;
    if (JSON.stringify(args).includes(marker)) fs.writeFileSync(spawned, String(pid));
  };
  const cp = require('child_process');
  const spawnChild = cp.ChildProcess.prototype.spawn;
  cp.ChildProcess.prototype.spawn = function (options) {
    const r = spawnChild.apply(this, arguments);
    note(options && options.args, this.pid);
    return r;
  };
  const Module = require('module');
  const load = Module._load;
  Module._load = function (request) {
    const m = load.apply(this, arguments);
    if (m && typeof m.spawn === 'function' && !m.gicGated && /[\\/]node-pty[\\/]/.test(String(request))) {
      const spawn = m.spawn;
      m.gicGated = true;
      m.spawn = function (file, args) {
        const p = spawn.apply(this, arguments);
        note([file].concat(args || []), p && p.pid);
        return p;
      };
    }
    return m;
  };
}
`

const spawnGateHooks = `import fs from 'node:fs';
import path from 'node:path';
let dir = '';
let gated = false;
export function initialize(data) { dir = data.dir; }
export async function resolve(specifier, context, next) {
  if (!gated && dir && /(^|\/)node-pty$/.test(specifier)) {
    gated = true;
    fs.writeFileSync(path.join(dir, 'held'), specifier + '\n');
    const deadline = Date.now() + 180000;
    while (!fs.existsSync(path.join(dir, 'released'))) {
      if (Date.now() > deadline) {
        fs.writeFileSync(path.join(dir, 'timedout'), 'no cancel came\n');
        break;
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  }
  return next(specifier, context);
}
`

// NewSpawnGate writes the gate for one server (it holds that server's first
// shell command only); marker is a part of that command's line.
func NewSpawnGate(t testing.TB, marker string) *SpawnGate {
	t.Helper()
	dir := t.TempDir()
	pre := filepath.Join(dir, "gate.cjs")
	for name, text := range map[string]string{"gate.cjs": spawnGateCJS, "hooks.mjs": spawnGateHooks} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if strings.ContainsAny(pre, " \"'\\") {
		t.Fatalf("the gate's path %q needs quoting in NODE_OPTIONS", pre)
	}
	return &SpawnGate{dir: dir, Env: []string{"NODE_OPTIONS=--require " + pre, "GIC_TEST_SPAWN_GATE=" + dir, "GIC_TEST_SPAWN_GATE_MARKER=" + marker}}
}

// Check fails the test unless the gate held the spawn and let it go only
// after the turn was aborted (so the test did cancel in the moment it
// means to).
func (g *SpawnGate) Check(t testing.TB) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(g.dir, "held")); err != nil {
		t.Fatal("the spawn gate never held the command: the server imported node-pty before (was this not its first command?)")
	}
	if _, err := os.Stat(filepath.Join(g.dir, "timedout")); err == nil {
		t.Fatal("the spawn gate let the command go without a cancel: the turn was never aborted")
	}
	if _, err := os.Stat(filepath.Join(g.dir, "released")); err != nil {
		t.Fatal("the spawn gate never saw the turn aborted")
	}
}

// WaitHeld waits until the gate holds the command: the server has said it
// runs, checked that its turn was not aborted, and waits for the spawn. A
// cancel sent after this comes in the moment the gate is for.
func (g *SpawnGate) WaitHeld(t testing.TB, timeout time.Duration) {
	t.Helper()
	if !Poll(timeout, func() bool {
		_, err := os.Stat(filepath.Join(g.dir, "held"))
		return err == nil
	}) {
		t.Fatalf("the spawn gate never held the command within %s (was it not the server's first?)", timeout)
	}
}

// WaitSpawned waits until the server has spawned the marked command, and
// returns its pid.
func (g *SpawnGate) WaitSpawned(t testing.TB, timeout time.Duration) int {
	t.Helper()
	var pid int
	if !Poll(timeout, func() bool {
		b, err := os.ReadFile(filepath.Join(g.dir, "spawned"))
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && pid > 0
	}) {
		var state []string
		for _, f := range []string{"held", "released", "timedout"} {
			if _, err := os.Stat(filepath.Join(g.dir, f)); err == nil {
				state = append(state, f)
			}
		}
		t.Fatalf("the server never spawned the gated command within %s (the gate: %v)", timeout, state)
	}
	return pid
}
