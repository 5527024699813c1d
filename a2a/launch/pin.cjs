// Preloaded into Gemini CLI's A2A server (NODE_OPTIONS=--require) by
// gemini-a2a-mcp, gemini-a2a-acp and the agent panel (a2a/launch).
//
// The server calls listen(port) with no host, which binds every interface;
// this makes such calls bind 127.0.0.1 instead.
//
// The server has no authentication: anyone who reaches its port could start
// a task and approve its shell commands, which run as the user who started
// it. Given a secret (GEMINI_A2A_SECRET, in the environment only, never on a
// command line), every HTTP server of the process answers 401 to a request
// that does not carry "Authorization: Bearer <secret>", before the server's
// own code sees it: the agent card, the JSON-RPC methods and the plain-HTTP
// routes alike.
//
// A cancelled turn runs no command. The server aborts a turn when the
// connection that started it closes, and its shell tool stops the command
// from an abort listener that it adds only once the command is spawned; the
// command is reported "executing" before that, and an abort that comes in
// between has already fired, so the listener never runs and the command runs
// to its end. Here an abort listener that kills a process, added to a signal
// that is already aborted, runs at once (as the server's code expects), so
// such a command is killed as it starts, on every OS, whoever the client is.
//
// The server ends with the program that started it. That program holds the
// server's stdin (GEMINI_A2A_LIFELINE=stdin); when it closes, because that
// program exited or was killed, the server kills the commands it runs,
// removes its secret file and its preload's folder, and exits. Another of
// the user's programs can take it over first (the agent panel's next
// sidecar): a GET of /.gemini-a2a/hold with the secret holds the server while
// its response stays open, and for GEMINI_A2A_LINGER_MS after the last holder
// is gone the server waits for a new one. A line "stop" on stdin ends it at
// once, as does SIGTERM.
//
// Every variable of ours is taken out of the environment at once, and
// NODE_OPTIONS is given back its user's value, so the commands the agent
// runs inherit neither the secret nor this preload.
'use strict';
const net = require('net');
const http = require('http');
const crypto = require('crypto');
const fs = require('fs');
const path = require('path');
const childProcess = require('child_process');
const Module = require('module');
const { isMainThread } = require('worker_threads');

function take(name) {
  const v = process.env[name];
  delete process.env[name];
  return v;
}

const host = take('GEMINI_A2A_LISTEN_HOST') || '127.0.0.1';
const secret = take('GEMINI_A2A_SECRET') || '';
// Only the main thread watches stdin. A worker started before this preload
// ran (module hooks registered by an earlier --require or --import of the
// user's NODE_OPTIONS) runs it too, with a copy of the environment; its
// process.stdin would ask the main thread, which waits on the hooks worker
// while it loads the server: neither would go on.
const lifeline = take('GEMINI_A2A_LIFELINE') === 'stdin' && isMainThread;
const lingerMs = Math.max(0, Number(take('GEMINI_A2A_LINGER_MS')) || 0);
const secretDir = take('GEMINI_A2A_SECRET_DIR') || '';
const privateHome = take('GEMINI_A2A_PRIVATE_HOME') || '';
const userNodeOptions = take('GEMINI_A2A_NODE_OPTIONS');
if (userNodeOptions !== undefined) {
  let v = '';
  try {
    v = JSON.parse(userNodeOptions);
  } catch (_) {}
  if (typeof v === 'string' && v !== '') process.env.NODE_OPTIONS = v;
  else delete process.env.NODE_OPTIONS;
}

// The server logs to the pipe of whoever started it. If that process dies,
// writes fail with EPIPE and Node would crash on the unhandled stream error
// before the server could stop in order.
for (const s of [process.stdout, process.stderr]) s.on('error', () => {});

function say(line) {
  try {
    process.stderr.write('gemini-a2a: ' + line + '\n');
  } catch (_) {}
}

// --- Abort listeners added late -------------------------------------------

(function runLateAbortListeners() {
  // Only the listeners that stop a process the server started (its shell
  // tool's: they kill the child or its group). Other late listeners keep
  // the platform's behaviour, never running: code that links a new
  // controller to an older signal must not see its work aborted.
  const killsAProcess = (listener) => {
    const fn = typeof listener === 'function' ? listener : listener && listener.handleEvent;
    if (typeof fn !== 'function') return false;
    try {
      return /\.kill\(|taskkill/.test(Function.prototype.toString.call(fn));
    } catch (_e) {
      return false;
    }
  };
  const proto = AbortSignal.prototype;
  const add = proto.addEventListener;
  const remove = proto.removeEventListener;
  const late = new WeakMap(); // signal -> Set of {listener, capture}
  const captureOf = (options) => (typeof options === 'boolean' ? options : !!(options && options.capture));
  Object.defineProperty(proto, 'addEventListener', {
    configurable: true,
    writable: true,
    value: function addEventListener(type, listener, options) {
      const r = add.call(this, type, listener, options);
      if (type !== 'abort' || !listener || !this.aborted || !killsAProcess(listener)) return r;
      const capture = captureOf(options);
      const own = options && typeof options === 'object' ? options.signal : undefined;
      let set = late.get(this);
      if (!set) late.set(this, (set = new Set()));
      for (const e of set) if (e.listener === listener && e.capture === capture) return r;
      const entry = { listener, capture };
      set.add(entry);
      const signal = this;
      queueMicrotask(() => {
        if (!set.delete(entry) || (own && own.aborted)) return;
        const event = new Event('abort');
        try {
          if (typeof listener === 'function') listener.call(signal, event);
          else if (typeof listener.handleEvent === 'function') listener.handleEvent(event);
        } catch (err) {
          say('an abort listener failed: ' + (err && err.stack ? err.stack : err));
        }
      });
      return r;
    },
  });
  Object.defineProperty(proto, 'removeEventListener', {
    configurable: true,
    writable: true,
    value: function removeEventListener(type, listener, options) {
      const r = remove.call(this, type, listener, options);
      const set = type === 'abort' ? late.get(this) : undefined;
      if (set) {
        const capture = captureOf(options);
        for (const e of set) if (e.listener === listener && e.capture === capture) set.delete(e);
      }
      return r;
    },
  });
})();

// --- The processes the server starts ---------------------------------------

// children are the processes the server started that still run: its
// commands (through node-pty or child_process), MCP servers, git.
const children = new Set();

function track(pid, group) {
  if (!pid) return () => {};
  const c = { pid, group };
  children.add(c);
  return () => children.delete(c);
}

const spawnChild = childProcess.ChildProcess.prototype.spawn;
childProcess.ChildProcess.prototype.spawn = function spawn(options) {
  const r = spawnChild.apply(this, arguments);
  if (this.pid) this.once('exit', track(this.pid, !!(options && options.detached)));
  return r;
};

// node-pty's spawn starts a process in a session (and group) of its own
// without child_process; it is loaded by name or, from the server's ES
// module, by its path.
const ptyModule = /(^|[\\/])node-pty([\\/](lib[\\/])?index\.js)?$/;
const wrapped = Symbol('gemini-a2a-tracked');
const load = Module._load;
Module._load = function _load(request) {
  const m = load.apply(this, arguments);
  if (m && typeof m === 'object' && !m[wrapped] && typeof request === 'string' && ptyModule.test(request)) {
    m[wrapped] = true;
    for (const name of ['spawn', 'fork', 'createTerminal']) {
      const f = m[name];
      if (typeof f !== 'function') continue;
      try {
        m[name] = function () {
          const p = f.apply(this, arguments);
          if (p && p.pid) {
            const untrack = track(p.pid, true);
            try {
              p.onExit(untrack);
            } catch (_) {}
          }
          return p;
        };
      } catch (_) {}
    }
  }
  return m;
};

function killChildren() {
  for (const c of children) {
    if (process.platform === 'win32') {
      try {
        childProcess.spawnSync('taskkill', ['/pid', String(c.pid), '/t', '/f'], { stdio: 'ignore', windowsHide: true });
      } catch (_) {}
      continue;
    }
    if (c.group) {
      try {
        process.kill(-c.pid, 'SIGKILL');
      } catch (_) {}
    }
    try {
      process.kill(c.pid, 'SIGKILL');
    } catch (_) {}
  }
  children.clear();
}

// --- Authentication ---------------------------------------------------------

// Both sides are hashed first, so the comparison takes the same time
// whatever the header's length and content.
const digest = (s) => crypto.createHash('sha256').update(s, 'utf8').digest();
const wanted = secret ? digest('Bearer ' + secret) : null;

function authorized(req) {
  const got = req && req.headers && req.headers.authorization;
  return typeof got === 'string' && crypto.timingSafeEqual(digest(got), wanted);
}

const refusal = JSON.stringify({
  error: 'unauthorized: this Gemini CLI A2A server answers only the program that started it',
});

function refuse(res) {
  res.statusCode = 401;
  res.setHeader('WWW-Authenticate', 'Bearer');
  res.setHeader('Content-Type', 'application/json');
  res.setHeader('Content-Length', Buffer.byteLength(refusal));
  // The body is not read; the connection is not reused.
  res.setHeader('Connection', 'close');
  res.end(refusal);
}

const holdPath = '/.gemini-a2a/hold';
const guarded = Symbol('gemini-a2a-guarded');
let port = 0; // of the first server guarded, for the secret file's name

// guard makes server check every request before any listener of the
// server's (express) sees it. Upgrades and CONNECT without the secret get
// 401 and their socket is closed.
function guard(server) {
  if (server[guarded]) return;
  server[guarded] = true;
  server.once('listening', () => {
    const a = server.address();
    if (!port && a && typeof a === 'object') port = a.port;
  });
  const emit = server.emit;
  server.emit = function (event, req, res, ...rest) {
    switch (event) {
      case 'request':
      case 'checkContinue':
      case 'checkExpectation':
        if (!authorized(req)) {
          refuse(res);
          return true;
        }
        if (event === 'request' && lifeline && req.method === 'GET' && req.url === holdPath) {
          holdOpen(req, res);
          return true;
        }
        break;
      case 'upgrade':
      case 'connect':
        if (!authorized(req)) {
          // Here res is the connection's socket.
          res.end('HTTP/1.1 401 Unauthorized\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
          return true;
        }
        break;
    }
    return emit.call(this, event, req, res, ...rest);
  };
}

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === 'number' || typeof args[0] === 'string' && /^\d+$/.test(args[0])) {
    if (typeof args[1] !== 'string') args.splice(1, 0, host);
  } else if (args[0] && typeof args[0] === 'object' && args[0].path === undefined && !args[0].host) {
    args[0] = Object.assign({}, args[0], { host });
  } else if (args.length === 0 || typeof args[0] === 'function') {
    args.unshift(0, host);
  }
  if (wanted && this instanceof http.Server) guard(this);
  // Node closes a keep-alive connection left idle for 5 s. The server runs a
  // turn under the connection that started it and aborts the turn when
  // that connection closes, which is how a client stops a running tool; the
  // client keeps that connection in use, and closes it itself, so the
  // server need not close idle ones (a safety net for a loaded machine).
  if (typeof this.keepAliveTimeout === 'number') this.keepAliveTimeout = 0;
  return listen.apply(this, args);
};

// --- Lifetime ---------------------------------------------------------------

let ending = false;

// end stops the server: the commands it runs first, then its files, then
// the process.
function end(why) {
  if (ending) return;
  ending = true;
  say(why + '; the server stops, with the commands it runs');
  killChildren();
  removeFiles();
  process.exit(0);
}

// removeFiles removes the server's secret file (if it still is this
// process's), the private home of the agent's MCP servers, and the private
// folder this preload was written to.
function removeFiles() {
  if (secretDir && port) {
    const file = path.join(secretDir, 'server-' + port + '.json');
    try {
      const r = JSON.parse(fs.readFileSync(file, 'utf8'));
      if (r && r.pid === process.pid) fs.unlinkSync(file);
    } catch (_) {}
  }
  // The private home of the MCP servers the starter gave the agent.
  if (privateHome && path.basename(privateHome).startsWith('gemini-a2a-home-')) {
    try {
      fs.rmSync(privateHome, { recursive: true, force: true });
    } catch (_) {}
  }
  const dir = path.dirname(__filename);
  if (path.basename(dir).startsWith('gemini-a2a-mcp-')) {
    try {
      fs.rmSync(dir, { recursive: true, force: true });
    } catch (_) {}
  }
}

let holders = 0;
let lingering = null;

function held() {
  holders++;
  if (lingering) {
    clearTimeout(lingering);
    lingering = null;
  }
}

function letGo(why) {
  if (--holders > 0 || ending) return;
  if (lingerMs <= 0) {
    end(why);
    return;
  }
  say(why + '; waiting ' + lingerMs / 1000 + ' s for a program to take the server over');
  lingering = setTimeout(() => end(why + ', and no program took the server over'), lingerMs);
}

// holdOpen answers a hold: headers and a line now, then nothing until the
// holder goes.
function holdOpen(req, res) {
  held();
  res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' });
  res.write('held\n');
  let gone = false;
  res.on('close', () => {
    if (gone) return;
    gone = true;
    letGo('the program that held the server let it go');
  });
}

if (lifeline) {
  held();
  let gone = false;
  const lost = () => {
    if (gone) return;
    gone = true;
    letGo('the program that started the server is gone');
  };
  let said = '';
  const stdin = process.stdin;
  stdin.setEncoding('utf8');
  stdin.on('data', (d) => {
    said = (said + d).slice(-16);
    if (/(^|\n)stop\r?\n/.test(said)) end('the program that started the server stopped it');
  });
  stdin.on('end', lost);
  stdin.on('close', lost);
  stdin.on('error', lost);
  stdin.resume();
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP']) {
    try {
      process.on(sig, () => end('stopped by ' + sig));
    } catch (_) {}
  }
}
