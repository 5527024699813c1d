// Preloaded into Gemini CLI's A2A server (NODE_OPTIONS=--require) by
// gemini-a2a-mcp: the server calls listen(port) with no host, which binds
// every interface; this makes such calls bind 127.0.0.1 instead.
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
  return listen.apply(this, args);
};

// The server logs to the pipe of whoever started it. If that process dies
// (an editor's sidecar killed), writes fail with EPIPE and Node would crash
// on the unhandled stream error; the server should outlive it, so that a
// restarted sidecar can attach to it again and resume its tasks.
for (const s of [process.stdout, process.stderr]) s.on('error', () => {});
