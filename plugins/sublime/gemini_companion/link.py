"""The editor link: newline-delimited JSON-RPC 2.0 over a child's stdio.

``Link`` starts ``gemini-ide-companion --stdio`` and talks to it. Writes go
through a queue and a writer thread, so sending never blocks the caller (the
editor's UI thread) even when the pipe is full. A reader thread parses the
child's stdout and matches responses to requests; requests and notifications
from the child are handed to ``on_message`` on that reader thread, so the
receiver decides how to reach its own UI thread. A third thread drains
stderr (the sidecar's log) into a short ring buffer for error reports.

Nothing here imports ``sublime``.
"""

import collections
import itertools
import json
import os
import queue
import subprocess
import threading

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603


class LinkError(Exception):
    """Base class of the errors a request can end with."""


class LinkClosed(LinkError):
    """The sidecar exited (or was never started) before answering."""


class RequestTimeout(LinkError):
    """No answer within the request's time limit."""


class RemoteError(LinkError):
    """The sidecar answered with a JSON-RPC error."""

    def __init__(self, code, message, data=None):
        LinkError.__init__(self, "%s (code %s)" % (message, code))
        self.code = code
        self.message = message
        self.data = data


_STOP = object()


class Link(object):
    """One sidecar process and the JSON-RPC conversation with it.

    on_message(method, params, request_id): a request (request_id not None)
    or a notification from the sidecar; called on the reader thread. Answer
    requests with respond() / respond_error().

    on_exit(returncode): called once, on the reader thread, after the
    sidecar's stdout has closed and the process has been reaped.

    on_log(text): optional; each line the sidecar writes to stderr, and lines
    the link itself could not parse.
    """

    def __init__(self, argv, env=None, cwd=None, on_message=None, on_exit=None,
                 on_log=None, stderr_tail=60):
        if not argv or not all(isinstance(a, str) for a in argv):
            raise ValueError("argv must be a non-empty list of strings")
        self.argv = list(argv)
        self.env = env
        self.cwd = cwd
        self._on_message = on_message
        self._on_exit = on_exit
        self._on_log = on_log
        self._proc = None
        self._ids = itertools.count(1)
        self._pending = {}
        self._lock = threading.Lock()
        self._out = queue.Queue()
        self._closed = False
        self._exited = threading.Event()
        self._stderr = collections.deque(maxlen=stderr_tail)
        self.returncode = None

    # ----------------------------------------------------------------- process

    def start(self):
        """Start the process. Raises OSError if it cannot be started."""
        kwargs = {}
        if os.name == "nt":
            kwargs["creationflags"] = 0x08000000  # CREATE_NO_WINDOW
        self._proc = subprocess.Popen(
            self.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=self.env,
            cwd=self.cwd,
            **kwargs
        )
        for target, name in ((self._read_loop, "reader"),
                             (self._write_loop, "writer"),
                             (self._stderr_loop, "stderr")):
            t = threading.Thread(target=target, name="gemini-companion-" + name)
            t.daemon = True
            t.start()
        return self

    @property
    def pid(self):
        return self._proc.pid if self._proc is not None else None

    @property
    def alive(self):
        return (self._proc is not None and not self._exited.is_set()
                and self._proc.poll() is None)

    def stderr_tail(self):
        """The last lines the sidecar wrote to stderr."""
        return list(self._stderr)

    def wait(self, timeout=None):
        """Wait until the process has exited and on_exit has run."""
        return self._exited.wait(timeout)

    def kill(self):
        if self._proc is not None and self._proc.poll() is None:
            try:
                self._proc.kill()
            except OSError:
                pass

    def close(self, timeout=3.0):
        """Ask the sidecar to shut down, then make sure it is gone.

        Blocks up to about ``timeout`` seconds: call it off the UI thread.
        """
        if self._proc is None:
            return
        if self.alive:
            try:
                self.request("shutdown", None, timeout=timeout / 2.0)
            except LinkError:
                pass
        self._close_stdin()
        if not self._exited.wait(timeout / 2.0):
            self.kill()
            self._exited.wait(timeout)

    def _close_stdin(self):
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._out.put(_STOP)

    # ----------------------------------------------------------------- sending

    def _send(self, message):
        try:
            line = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
        except (TypeError, ValueError) as exc:
            raise ValueError("message cannot be encoded as JSON: %s" % exc)
        with self._lock:
            if self._closed or self._proc is None:
                raise LinkClosed("the companion is not running")
        self._out.put((line + "\n").encode("utf-8"))

    def notify(self, method, params=None):
        """Send a notification. Never blocks. Raises LinkClosed if stopped."""
        message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self._send(message)

    def request_async(self, method, params=None, callback=None, timeout=None):
        """Send a request; ``callback(result, error)`` runs on a link thread
        with exactly one of them set (error is a LinkError)."""
        request_id = next(self._ids)
        entry = {"callback": callback, "timer": None, "done": False}
        with self._lock:
            self._pending[request_id] = entry
        message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        try:
            self._send(message)
        except LinkError as exc:
            self._finish(request_id, None, exc)
            return request_id
        if timeout is not None:
            timer = threading.Timer(timeout, self._finish, args=(
                request_id, None,
                RequestTimeout("%s: no answer within %.1f s" % (method, timeout))))
            timer.daemon = True
            entry["timer"] = timer
            timer.start()
        return request_id

    def request(self, method, params=None, timeout=10.0):
        """Send a request and wait for the result. Not for the UI thread."""
        done = threading.Event()
        box = {}

        def callback(result, error):
            box["result"] = result
            box["error"] = error
            done.set()

        self.request_async(method, params, callback, timeout=timeout)
        done.wait()
        if box["error"] is not None:
            raise box["error"]
        return box["result"]

    def respond(self, request_id, result):
        self._send({"jsonrpc": "2.0", "id": request_id, "result": result})

    def respond_error(self, request_id, code, message, data=None):
        error = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        self._send({"jsonrpc": "2.0", "id": request_id, "error": error})

    def _finish(self, request_id, result, error):
        with self._lock:
            entry = self._pending.pop(request_id, None)
        if entry is None:
            return
        if entry["timer"] is not None:
            entry["timer"].cancel()
        if entry["callback"] is not None:
            try:
                entry["callback"](result, error)
            except Exception as exc:  # a callback bug must not kill the link
                self._log("callback for request %s failed: %r" % (request_id, exc))

    # ----------------------------------------------------------------- threads

    def _log(self, text):
        if self._on_log is not None:
            try:
                self._on_log(text)
            except Exception:
                pass

    def _write_loop(self):
        stdin = self._proc.stdin
        while True:
            item = self._out.get()
            if item is _STOP:
                break
            try:
                stdin.write(item)
                stdin.flush()
            except (OSError, ValueError):
                # The sidecar is gone; the reader reports the exit.
                break
        try:
            stdin.close()
        except (OSError, ValueError):
            pass

    def _stderr_loop(self):
        try:
            for raw in iter(self._proc.stderr.readline, b""):
                text = raw.decode("utf-8", "replace").rstrip("\r\n")
                self._stderr.append(text)
                self._log(text)
        except (OSError, ValueError):
            pass
        finally:
            self._proc.stderr.close()

    def _read_loop(self):
        try:
            for raw in iter(self._proc.stdout.readline, b""):
                self._dispatch_line(raw)
        except (OSError, ValueError) as exc:
            self._log("reading from the companion failed: %r" % (exc,))
        finally:
            self._proc.stdout.close()
            self._proc.wait()
            self.returncode = self._proc.returncode
            with self._lock:
                self._closed = True
                pending = list(self._pending)
            self._out.put(_STOP)
            for request_id in pending:
                self._finish(request_id, None, LinkClosed(
                    "the companion exited (code %s)" % (self.returncode,)))
            self._exited.set()
            if self._on_exit is not None:
                try:
                    self._on_exit(self.returncode)
                except Exception as exc:
                    self._log("exit handler failed: %r" % (exc,))

    def _dispatch_line(self, raw):
        line = raw.strip()
        if not line:
            return
        try:
            message = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            self._log("ignored a line that is not JSON: %r" % (line[:200],))
            return
        if not isinstance(message, dict):
            self._log("ignored a JSON value that is not a message: %r" % (line[:200],))
            return
        method = message.get("method")
        if isinstance(method, str):
            request_id = message.get("id")
            if self._on_message is None:
                if request_id is not None:
                    self._respond_quietly(request_id, METHOD_NOT_FOUND,
                                          "method not found: " + method)
                return
            try:
                self._on_message(method, message.get("params"), request_id)
            except Exception as exc:
                self._log("handler for %s failed: %r" % (method, exc))
                if request_id is not None:
                    self._respond_quietly(request_id, INTERNAL_ERROR,
                                          "%s failed: %s" % (method, exc))
            return
        if "id" in message and ("result" in message or "error" in message):
            request_id = message["id"]
            error = message.get("error")
            if request_id is None and error is not None:
                self._log("the companion rejected a message: %r" % (error,))
                return
            if error is not None:
                if isinstance(error, dict):
                    exc = RemoteError(error.get("code"), error.get("message", ""),
                                      error.get("data"))
                else:
                    exc = RemoteError(None, repr(error))
                self._finish(request_id, None, exc)
            else:
                self._finish(request_id, message.get("result"), None)
            return
        self._log("ignored a message that is neither request nor response: %r"
                  % (line[:200],))

    def _respond_quietly(self, request_id, code, text):
        try:
            self.respond_error(request_id, code, text)
        except LinkError:
            pass
