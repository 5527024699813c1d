// Loaded with NODE_OPTIONS=--require by scripts/windows.sh into Windows
// Node under Wine. Wine 8.0 fails setKeepAlive on a socket that is still
// connecting, and undici (Node's fetch, which Gemini CLI uses for the
// model and for the IDE's MCP server) then fails every request with
// "connect UNKNOWN 127.0.0.1:N". This defers the call until the socket has
// connected. A Wine gap: Node on Windows needs none of it.
'use strict';
const net = require('node:net');
const setKeepAlive = net.Socket.prototype.setKeepAlive;
net.Socket.prototype.setKeepAlive = function (...args) {
  if (this.connecting) {
    this.once('connect', () => {
      try {
        setKeepAlive.apply(this, args);
      } catch {
        // Keep-alive is an optimisation; the connection works without it.
      }
    });
    return this;
  }
  return setKeepAlive.apply(this, args);
};
