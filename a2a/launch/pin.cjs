// Preloaded into Gemini CLI's A2A server (NODE_OPTIONS=--require) by
// gemini-a2a-mcp and the agent panel: the server calls listen(port) with no
// host, which binds every interface; this makes such calls bind 127.0.0.1
// instead.
'use strict';
const net = require('net');
const host = process.env.GEMINI_A2A_LISTEN_HOST || '127.0.0.1';
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === 'number' || typeof args[0] === 'string' && /^\d+$/.test(args[0])) {
    if (typeof args[1] !== 'string') args.splice(1, 0, host);
  } else if (args[0] && typeof args[0] === 'object' && args[0].path === undefined && !args[0].host) {
    args[0] = Object.assign({}, args[0], { host });
  } else if (args.length === 0 || typeof args[0] === 'function') {
    args.unshift(0, host);
  }
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
