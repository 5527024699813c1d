// Preloaded into Gemini CLI's A2A server (NODE_OPTIONS=--require) by
// gemini-a2a-mcp and the agent panel.
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
// routes alike. The secret is taken out of the environment at once, so the
// commands the agent runs do not inherit it.
'use strict';
const net = require('net');
const http = require('http');
const crypto = require('crypto');

const host = process.env.GEMINI_A2A_LISTEN_HOST || '127.0.0.1';
const secret = process.env.GEMINI_A2A_SECRET || '';
delete process.env.GEMINI_A2A_SECRET;

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

const guarded = Symbol('gemini-a2a-guarded');

// guard makes server check every request before any listener of the
// server's (express) sees it. Upgrades and CONNECT without the secret get
// 401 and their socket is closed.
function guard(server) {
  if (server[guarded]) return;
  server[guarded] = true;
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

// The server logs to the pipe of whoever started it. If that process dies
// (an editor's sidecar killed), writes fail with EPIPE and Node would crash
// on the unhandled stream error; the server should outlive it, so that a
// restarted sidecar can attach to it again and resume its tasks.
for (const s of [process.stdout, process.stderr]) s.on('error', () => {});
