"""A minimal MCP Streamable HTTP client that plays Gemini CLI in tests.

It does what the CLI does against the companion: reads the discovery file,
POSTs ``initialize`` with the bearer token, sends
``notifications/initialized``, opens the GET event stream, and calls tools.
Notifications from the server (``ide/contextUpdate``, ``ide/diffAccepted``,
...) are collected in ``self.notifications``. Standard library only.
"""

import http.client
import itertools
import json
import queue
import socket
import threading
import time

PROTOCOL_VERSION = "2025-06-18"


class McpError(Exception):
    pass


def _sse_events(fp):
    """Yield the data of each server-sent event read from ``fp``."""
    data = []
    while True:
        raw = fp.readline()
        if not raw:
            if data:
                yield "\n".join(data)
            return
        line = raw.decode("utf-8").rstrip("\r\n")
        if line == "":
            if data:
                yield "\n".join(data)
                data = []
        elif line.startswith("data:"):
            value = line[5:]
            data.append(value[1:] if value.startswith(" ") else value)
        # "event:", "id:", "retry:" and comments are not needed here.


class McpClient(object):
    def __init__(self, port, token, host="127.0.0.1", path="/mcp"):
        self.host = host
        self.port = port
        self.token = token
        self.path = path
        self.session_id = None
        self.notifications = []
        self._cond = threading.Condition()
        self._ids = itertools.count(1)
        self._stream = None
        self._stream_thread = None
        self._closed = False
        self.stream_open = threading.Event()
        self.server_requests = queue.Queue()

    @classmethod
    def from_discovery_file(cls, path):
        with open(path, encoding="utf-8") as f:
            info = json.load(f)
        return cls(info["port"], info.get("authToken", ""))

    # ---------------------------------------------------------------- http

    def _headers(self, extra=None):
        headers = {
            "Authorization": "Bearer " + self.token,
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
            "MCP-Protocol-Version": PROTOCOL_VERSION,
        }
        if self.session_id:
            headers["Mcp-Session-Id"] = self.session_id
        headers.update(extra or {})
        return headers

    def post(self, message, timeout=30.0):
        """POST one JSON-RPC message; for a request, return its response."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        try:
            conn.request("POST", self.path, body=json.dumps(message).encode("utf-8"),
                         headers=self._headers())
            resp = conn.getresponse()
            sid = resp.getheader("Mcp-Session-Id")
            if sid:
                self.session_id = sid
            if resp.status == 202:
                resp.read()
                return None
            if resp.status >= 400:
                raise McpError("HTTP %d: %s" % (resp.status, resp.read()[:500]))
            ctype = resp.getheader("Content-Type", "")
            if "text/event-stream" in ctype:
                for data in _sse_events(resp):
                    msg = json.loads(data)
                    if "id" in msg and msg.get("id") == message.get("id") \
                            and ("result" in msg or "error" in msg):
                        return msg
                    self._incoming(msg)
                raise McpError("event stream ended without a response")
            body = resp.read()
            return json.loads(body) if body else None
        finally:
            conn.close()

    def request(self, method, params=None, timeout=30.0):
        message = {"jsonrpc": "2.0", "id": next(self._ids), "method": method}
        if params is not None:
            message["params"] = params
        reply = self.post(message, timeout=timeout)
        if reply is None:
            raise McpError("no response to %s" % method)
        if "error" in reply:
            raise McpError("%s failed: %r" % (method, reply["error"]))
        return reply["result"]

    def notify(self, method, params=None):
        message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.post(message)

    # --------------------------------------------------------------- session

    def connect(self, timeout=10.0):
        result = self.request("initialize", {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "sublime-plugin-tests", "version": "0"},
        })
        if not self.session_id:
            raise McpError("initialize returned no Mcp-Session-Id")
        self.notify("notifications/initialized")
        self._stream_thread = threading.Thread(target=self._read_stream,
                                               name="mcp-stream")
        self._stream_thread.daemon = True
        self._stream_thread.start()
        if not self.stream_open.wait(timeout):
            raise McpError("the GET event stream did not open")
        return result

    def _read_stream(self):
        conn = http.client.HTTPConnection(self.host, self.port, timeout=None)
        self._stream = conn
        try:
            conn.request("GET", self.path, headers=self._headers(
                {"Accept": "text/event-stream"}))
            resp = conn.getresponse()
            if resp.status != 200:
                return
            self.stream_open.set()
            for data in _sse_events(resp):
                try:
                    self._incoming(json.loads(data))
                except ValueError:
                    pass
        except (OSError, http.client.HTTPException, ValueError, AttributeError):
            # AttributeError: http.client, when close() shuts the socket
            # under a read in progress.
            pass
        finally:
            self.stream_open.set()

    def _incoming(self, msg):
        if "method" in msg and "id" in msg:
            # A request from the server (ping): answer it.
            self.server_requests.put(msg)
            try:
                self.post({"jsonrpc": "2.0", "id": msg["id"], "result": {}})
            except (McpError, OSError):
                pass
            return
        with self._cond:
            self.notifications.append(msg)
            self._cond.notify_all()

    def close(self):
        if self._closed:
            return
        self._closed = True
        if self.session_id:
            conn = http.client.HTTPConnection(self.host, self.port, timeout=5)
            try:
                conn.request("DELETE", self.path, headers=self._headers())
                conn.getresponse().read()
            except (OSError, http.client.HTTPException):
                pass
            finally:
                conn.close()
        stream = self._stream
        if stream is not None and stream.sock is not None:
            try:
                stream.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            stream.close()

    # ----------------------------------------------------------------- tools

    def list_tools(self):
        return self.request("tools/list", {})["tools"]

    def call_tool(self, name, arguments, timeout=30.0):
        return self.request("tools/call", {"name": name, "arguments": arguments},
                            timeout=timeout)

    # --------------------------------------------------------- notifications

    def seen(self, method):
        with self._cond:
            return [n for n in self.notifications if n.get("method") == method]

    def find(self, method, predicate=None):
        """The last notification of ``method`` matching ``predicate``, or None."""
        for n in reversed(self.seen(method)):
            if predicate is None or predicate(n.get("params")):
                return n
        return None

    def mark(self):
        """Index to pass to ``since`` to look only at newer notifications."""
        with self._cond:
            return len(self.notifications)

    def since(self, mark, method=None):
        with self._cond:
            items = self.notifications[mark:]
        return [n for n in items if method is None or n.get("method") == method]

    def wait_for(self, method, predicate=None, timeout=10.0, since=0, pump=None):
        """Wait for a notification; ``pump`` (if given) is called while
        waiting, to keep the editor's UI loop running."""
        deadline = time.monotonic() + timeout
        while True:
            for n in self.since(since, method):
                if predicate is None or predicate(n.get("params")):
                    return n
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            if pump is not None:
                pump(min(0.05, remaining))
            else:
                with self._cond:
                    self._cond.wait(min(0.05, remaining))
