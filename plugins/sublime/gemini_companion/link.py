"""The editor link: the one module that runs and talks to gemini-ide-companion.

Spawning ``gemini-ide-companion --stdio``, newline-delimited JSON-RPC over
its stdio, the v2 ``initialize`` handshake, restarts per the sidecar's
``policy.restart`` announced with its ``policy.messages``, ``status``, ``log``,
the terminal environment, and shutdown (docs/editor-link.md). UI code uses
only ``request(method, params, callback)``, ``notify(method, params)``,
``on(method, handler)`` (a request's handler returns its result or raises
LinkError; "@ready", "@exit" and "@state" are lifecycle events) and
``terminal_env(callback)``. Reader, writer and stderr threads hand everything
to the UI thread with ``host.call_soon``; state is touched there only. The
host provides call_soon(fn), call_later(ms, fn), log(text), log_stderr(text),
announce(text) and report_error(text). Nothing here imports ``sublime``.
"""

import collections
import itertools
import json
import os
import queue
import subprocess
import threading
import time

from . import locate

PROTOCOL_VERSION = 2
METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = -32601, -32602, -32603
STOPPED, STARTING, READY, RESTARTING, FAILED = (
    "stopped", "starting", "ready", "restarting", "failed")
# unifiedDiff False: the diff view shows the two texts side by side, so the
# sidecar need not compute or send a unified diff.
CAPABILITIES = {"diff": True, "diffStates": True, "unifiedDiff": False,
                "selection": True, "terminal": True, "diagnostics": False,
                "agent": False}

# The sidecar's advice until its first initialize answer says otherwise.
DEFAULT_POLICY = {
    "restart": {"delaysMs": [100, 500, 1000, 2000, 5000], "windowMs": 60000, "maxRestarts": 5},
    "limits": {"maxSelectionBytes": 65552, "maxOpenFiles": 10,
               "maxSelectedTextUtf16": 16384, "maxMessageBytes": 268435456},
    "messages": {
        "restarting": "gemini-ide-companion exited ({reason}); restarting it. "
                      "Gemini CLI sessions reconnect with /ide enable.",
        "gaveUp": "gemini-ide-companion exited {count} times in a minute ({reason}); "
                  "not restarting it: run Gemini Companion: Restart to try again.",
        "restarted": "gemini-ide-companion restarted; Gemini CLI sessions "
                     "reconnect with /ide enable."}}


class LinkError(Exception):
    """A failed request (``code``: JSON-RPC error); handlers raise it to answer one."""

    def __init__(self, message, code=None):
        Exception.__init__(self, message if code is None else "%s (code %s)" % (message, code))
        self.message, self.code = message, code


def _number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0


class Link(object):
    """One editor window's sidecar, restarted when it dies."""

    def __init__(self, host, options=None):
        self.host = host
        self.state, self.last_error, self.binary, self.pid = STOPPED, "", None, None
        self.info, self.env, self.capabilities = {}, {}, {}
        self.policy = json.loads(json.dumps(DEFAULT_POLICY))
        self.connected_clients, self.status_text, self.folders = 0, "", []
        self._handlers = collections.defaultdict(list)
        self._proc = self._out = None
        self._gen, self._ids, self._pending = 0, itertools.count(1), {}
        self._restarts, self._waiters = collections.deque(), []
        self._stderr = collections.deque(maxlen=20)
        self.configure(options)
        for method, handler in (("status", self._on_status), ("log", self._on_log),
                                ("workspace/envChanged", self._on_env)):
            self.on(method, handler)

    def configure(self, options=None):
        """Take (new) settings; they apply from the next (re)start."""
        o = dict(options or {})
        self.binary_setting = o.get("binary", "")
        self.log_level, self.log_file = o.get("log_level", ""), o.get("log_file", "")
        self.extra_env = {} if o.get("env") is None else o.get("env")
        self.environ = dict(os.environ) if o.get("environ") is None else o["environ"]
        self.process_id = o.get("process_id") or os.getpid()
        self.ide = {"name": o.get("ide_name", "sublimetext"),
                    "displayName": o.get("ide_display_name", "Sublime Text"),
                    "restartCommand": o.get("restart_command", "Gemini Companion: Restart")}
        self.restart_on_exit = o.get("restart", True)
        self.is_trusted = o.get("is_trusted")   # None: the CLI's own prompt decides
        self.offers = dict(CAPABILITIES, **(o.get("capabilities") or {}))

    # ---------------------------------------------------------------- public
    def on(self, method, handler):
        self._handlers[method].append(handler)

    def _emit(self, event, *args):
        for handler in list(self._handlers.get(event, ())):
            self._done(handler, *args)

    def limit(self, name):
        value = self.policy["limits"].get(name)
        return value if _number(value) else DEFAULT_POLICY["limits"][name]

    def message(self, name, **values):
        text = self.policy["messages"].get(name)
        text = text if isinstance(text, str) else DEFAULT_POLICY["messages"][name]
        for key, value in values.items():
            text = text.replace("{%s}" % key, str(value))
        return text

    def start(self, folders=None):
        if folders is not None:
            self.folders = list(folders)
        if self.state not in (STARTING, READY, RESTARTING):
            self._restarts.clear()
            self._spawn()

    def restart(self):
        self.stop()
        self.start()

    def stop(self, quiet=False):
        """Shut the sidecar down; ``quiet``: touch no UI (the editor quits)."""
        self._gen += 1
        self._drop(quiet)
        self.state = STOPPED
        if not quiet:
            self._emit("@exit")
            self._flush_waiters(False)
            self._emit("@state")

    def when_ready(self, callback):
        """``callback(True)`` once ready, ``callback(False)`` if that fails."""
        if self.state in (STARTING, RESTARTING):
            return self._waiters.append(callback)
        callback(self.state == READY)

    def notify(self, method, params=None):
        """Send a notification; False if the sidecar is not ready."""
        return self.state == READY and self._send(self._message(method, params))

    def request(self, method, params=None, callback=None, timeout_ms=10000):
        """``callback(result, error)`` runs on the UI thread, error a LinkError."""
        if self.state != READY:
            return self._done(callback, None, LinkError("the companion is not running"))
        self._call(method, params, callback, timeout_ms)

    def terminal_env(self, callback):
        """``callback(env)``: ``terminal/env`` for a terminal opened now, else None."""
        def got(result, error):
            if error is not None:
                self.host.log("terminal/env failed, using the last environment: %s" % (error,))
            self._on_env(result)
            callback(dict(self.env) if self.state == READY else None)
        self.request("terminal/env", {}, got)

    # --------------------------------------------------------------- process
    def _fail(self, message, dialog=False):
        self.state, self.last_error = FAILED, message
        self.host.log(message)
        (self.host.report_error if dialog else self.host.announce)(message)
        self._emit("@state")
        self._flush_waiters(False)

    def _flush_waiters(self, ok):
        waiters, self._waiters = self._waiters, []
        for callback in waiters:
            self._done(callback, ok)

    def _done(self, callback, *args):
        try:
            callback and callback(*args)
        except Exception as exc:    # a UI bug must not break the link
            self.host.log("%r failed: %r" % (callback, exc))

    def _spawn(self):
        self._gen += 1
        gen = self._gen
        self.info, self.env, self.capabilities = {}, {}, {}
        try:
            self.binary = locate.find_binary(self.binary_setting, self.environ)
        except locate.BinaryNotFound as exc:
            return self._fail(str(exc), dialog=True)
        if not isinstance(self.extra_env, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in self.extra_env.items()):
            return self._fail("The \"env\" setting must map names to strings, not %r."
                              % (self.extra_env,), dialog=True)
        argv = [self.binary, "--stdio"]
        if self.log_level:
            argv += ["--log-level", str(self.log_level)]
        if self.log_file:
            argv += ["--log-file", os.path.expanduser(str(self.log_file))]
        try:
            proc = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                env=dict(self.environ, **self.extra_env),
                creationflags=0x08000000 if os.name == "nt" else 0)  # no console window
        except OSError as exc:
            return self._fail("Could not start %s: %s" % (self.binary, exc), dialog=True)
        self._proc, self._out, self.pid = proc, queue.Queue(), proc.pid
        self._stderr.clear()
        for target, args in ((self._read, (proc, gen)), (self._write, (proc, self._out)),
                             (self._drain, (proc,))):
            threading.Thread(target=target, args=args, daemon=True,
                             name="gemini-companion" + target.__name__).start()
        self.state = RESTARTING if self.state == RESTARTING else STARTING
        self._emit("@state")
        params = {"protocolVersion": PROTOCOL_VERSION, "ide": self.ide,
                  "processId": self.process_id, "workspaceFolders": list(self.folders),
                  "capabilities": self.offers}
        if self.is_trusted is not None:
            params["isTrusted"] = bool(self.is_trusted)
        self._call("initialize", params, lambda r, e: self._initialized(gen, r, e), 15000)

    def _initialized(self, gen, result, error):
        if gen != self._gen or self._proc is None:
            return      # stopped, or it died while starting (_exited restarts it)
        if error is not None or not isinstance(result, dict):
            detail = str(error) if error is not None else "unexpected answer %r" % (result,)
            self._gen += 1
            self._drop(False)
            return self._fail("The companion did not start: " + "\n".join(
                [detail] + list(self._stderr)[-3:]))
        was_restart = self.state == RESTARTING
        self.info, self.state, self.last_error = result, READY, ""
        self.pid = result["pid"] if isinstance(result.get("pid"), int) else self.pid
        self._on_env(result)
        caps = result.get("capabilities")
        self.capabilities = caps if isinstance(caps, dict) else {}
        policy = result.get("policy")
        for section, value in (policy.items() if isinstance(policy, dict) else ()):
            if isinstance(value, dict) and section in self.policy:
                self.policy[section] = value
        self._on_status(result.get("status"))   # the status line to show from the start
        self.host.log("companion ready on port %s" % (result.get("port"),))
        self._emit("@ready", result)
        if was_restart:
            self.host.announce(self.message("restarted"))
        self._emit("@state")
        self._flush_waiters(True)

    def _exited(self, gen, code):
        if gen != self._gen:
            return
        self._gen += 1
        self._drop(False)
        self._emit("@exit")
        reason = "signal %d" % -code if code is not None and code < 0 else "exit code %s" % code
        if self._stderr:
            self.host.log("companion's last words:\n  " + "\n  ".join(list(self._stderr)[-3:]))
        if not self.restart_on_exit:
            return self._fail("gemini-ide-companion exited (%s)." % reason)
        policy = dict(DEFAULT_POLICY["restart"])
        policy.update((k, v) for k, v in self.policy["restart"].items() if _number(v) or (
            isinstance(v, list) and v and all(_number(d) for d in v)))
        delays, window = policy["delaysMs"], policy["windowMs"] / 1000.0
        now = time.monotonic()
        while self._restarts and now - self._restarts[0] > window:
            self._restarts.popleft()
        n = len(self._restarts)
        if n >= policy["maxRestarts"]:
            return self._fail(self.message("gaveUp", count=n + 1, reason=reason))
        self._restarts.append(now)
        self.state = RESTARTING
        self.host.announce(self.message("restarting", reason=reason))
        self._emit("@state")
        expected = self._gen
        self.host.call_later(int(delays[min(n, len(delays) - 1)]), lambda: (
            self._gen == expected and self.state == RESTARTING and self._spawn()))

    def _drop(self, quiet):
        """Forget the process: fail its requests, shut it down, kill it in 3 s."""
        proc, out, pending = self._proc, self._out, list(self._pending.values())
        self._proc = self._out = None
        self._pending.clear()       # (timeouts of pending requests look in it)
        self._pending = {}
        self.connected_clients, self.status_text = 0, ""
        for callback in [] if quiet else pending:
            self._done(callback, None, LinkError("the companion stopped"))
        if proc is None:
            return
        out.put(self._encode(self._message("shutdown", None, next(self._ids))))
        out.put(None)       # then stdin closes, which also means shutdown
        reap = threading.Timer(3.0, proc.kill)  # a no-op once it has exited
        reap.daemon = True
        reap.start()

    # -------------------------------------------------------------- messages
    @staticmethod
    def _message(method, params, request_id=None):
        message = {"jsonrpc": "2.0", "method": method, "id": request_id, "params": params}
        return {k: v for k, v in message.items() if v is not None}

    @staticmethod
    def _encode(message):
        text = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
        return (text + "\n").encode("utf-8")    # ValueError/TypeError for non-JSON

    def _send(self, message):
        if self._out is None:
            return False
        self._out.put(self._encode(message))
        return True

    def _call(self, method, params, callback, timeout_ms):
        request_id, pending = next(self._ids), self._pending
        pending[request_id] = callback
        self._send(self._message(method, params, request_id))
        error = LinkError("%s: no answer within %d ms" % (method, timeout_ms))
        self.host.call_later(timeout_ms, lambda: request_id in pending and self._done(
            pending.pop(request_id), None, error))

    def _dispatch(self, gen, message):
        if gen != self._gen:
            return
        method, request_id = message.get("method"), message.get("id")
        if isinstance(method, str) and request_id is None:
            return self._emit(method, message.get("params"))
        if isinstance(method, str):
            handlers = self._handlers.get(method)
            try:
                if not handlers:
                    raise LinkError("method not found: %s" % method, METHOD_NOT_FOUND)
                reply = {"result": handlers[0](message.get("params"))}
            except LinkError as exc:
                reply = {"error": {"code": exc.code or INTERNAL_ERROR, "message": exc.message}}
            except Exception as exc:
                self.host.log("%s failed: %r" % (method, exc))
                reply = {"error": {"code": INTERNAL_ERROR, "message": "%s: %s" % (method, exc)}}
            reply.update(jsonrpc="2.0", id=request_id)
            return self._send(reply)
        error = message.get("error")
        callback = self._pending.pop(request_id, None) if isinstance(request_id, int) else None
        if callback is None and error is not None:
            self.host.log("the companion rejected a message: %s" % json.dumps(error))
        elif error is not None:
            error = error if isinstance(error, dict) else {"message": repr(error)}
            self._done(callback, None, LinkError(str(error.get("message")), error.get("code")))
        else:
            self._done(callback, message.get("result"), None)

    def _on_status(self, params):
        params = params if isinstance(params, dict) else {}
        count, text = params.get("connectedClients"), params.get("text")
        if isinstance(count, int) and _number(count):
            self.connected_clients = count
        if isinstance(text, str):
            self.status_text = text
        self._emit("@state")

    def _on_log(self, params):
        if isinstance(params, dict) and isinstance(params.get("message"), str):
            self.host.log("%s: %s" % (params.get("level", "info"), params["message"]))
            self.host.announce(params["message"])

    def _on_env(self, params):
        if isinstance(params, dict) and isinstance(params.get("env"), dict):
            self.env = dict(params["env"])
            if isinstance(params.get("discoveryFile"), str):
                self.info["discoveryFile"] = params["discoveryFile"]

    # --------------------------------------------------------------- threads
    def _read(self, proc, gen):
        try:
            for raw in iter(proc.stdout.readline, b""):
                try:
                    message = json.loads(raw.decode("utf-8"))
                except ValueError:
                    message = None
                if isinstance(message, dict):
                    self.host.call_soon(lambda m=message: self._dispatch(gen, m))
                elif raw.strip():
                    self.host.log("ignored a line that is not a message: %r" % (raw[:200],))
        except (OSError, ValueError) as exc:
            self.host.log("reading from the companion failed: %r" % (exc,))
        proc.stdout.close()
        proc.wait()
        self.host.call_soon(lambda: self._exited(gen, proc.returncode))

    @staticmethod
    def _write(proc, out):
        try:
            for item in iter(out.get, None):
                proc.stdin.write(item)
                proc.stdin.flush()
        except (OSError, ValueError):
            pass        # it is gone; the reader reports the exit
        try:
            proc.stdin.close()
        except (OSError, ValueError):
            pass

    def _drain(self, proc):
        for raw in iter(proc.stderr.readline, b""):
            text = raw.decode("utf-8", "replace").rstrip("\r\n")
            self._stderr.append(text)
            self.host.log_stderr(text)
        proc.stderr.close()
