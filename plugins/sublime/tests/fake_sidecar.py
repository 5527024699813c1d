"""A sidecar the test controls, for what the real one cannot be made to do.

The plugin starts ``relay`` (a tiny executable written into a temp folder) as
its sidecar binary. The relay connects to a ``FakeSidecar`` listening on
127.0.0.1 and copies bytes both ways: the plugin's stdin to the test, the
test's bytes to the plugin's stdout. So the plugin's own transport (process,
pipes, framing, restarts) is what runs, and the test plays the sidecar's side
of the conversation message by message. Closing a connection makes its relay
exit with code 3: a sidecar that died.
"""

import json
import os
import queue
import socket
import sys
import threading
import time

RELAY = r'''
import os, socket, sys, threading
s = socket.create_connection(("127.0.0.1", int(os.environ["GIC_FAKE_SIDECAR_PORT"])))
s.sendall(("%d\n" % os.getpid()).encode())
for line in os.environ.get("GIC_FAKE_SIDECAR_STDERR", "").splitlines():
    sys.stderr.write(line + "\n")
sys.stderr.flush()
def up():
    while True:
        data = os.read(0, 65536)
        if not data:
            break
        s.sendall(data)
    s.shutdown(socket.SHUT_WR)
threading.Thread(target=up, daemon=True).start()
while True:
    data = s.recv(65536)
    if not data:
        break
    os.write(1, data)
sys.exit(3)
'''


def write_relay(folder):
    """Write the relay and an executable that runs it; returns its path."""
    script = os.path.join(folder, "relay.py")
    with open(script, "w", encoding="utf-8") as f:
        f.write(RELAY)
    binary = os.path.join(folder, "fake-gemini-ide-companion")
    with open(binary, "w", encoding="utf-8") as f:
        f.write("#!/bin/sh\nexec '%s' '%s' \"$@\"\n" % (sys.executable, script))
    os.chmod(binary, 0o755)
    return binary


class Timeout(AssertionError):
    pass


class Connection(object):
    """One started relay: what the plugin sent, and a way to answer."""

    def __init__(self, sock, pump):
        self.sock = sock
        self.pump = pump
        self.messages = queue.Queue()
        self.raw = []
        self.closed = threading.Event()
        self.file = sock.makefile("rb")
        self.pid = int(self.file.readline())
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        try:
            for line in iter(self.file.readline, b""):
                self.raw.append(line)
                self.messages.put(json.loads(line.decode("utf-8")))
        except (OSError, ValueError):
            pass
        self.file.close()
        self.closed.set()

    def recv(self, timeout=10.0):
        """The plugin's next message; runs the UI loop while waiting."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                return self.messages.get_nowait()
            except queue.Empty:
                pass
            if time.monotonic() > deadline:
                raise Timeout("the plugin sent nothing within %.0f s" % timeout)
            self.pump(0.02)

    def expect(self, method, timeout=10.0):
        """The plugin's next message, which must be a call of ``method``."""
        message = self.recv(timeout)
        if message.get("method") != method:
            raise AssertionError("expected %s, the plugin sent %r" % (method, message))
        return message

    def send(self, message):
        self.send_raw((json.dumps(message) + "\n").encode("utf-8"))

    def send_raw(self, data):
        self.sock.sendall(data)

    def answer(self, request, result):
        self.send({"jsonrpc": "2.0", "id": request["id"], "result": result})

    def wait_closed(self, timeout=10.0):
        """Wait until the plugin closed the sidecar's stdin."""
        deadline = time.monotonic() + timeout
        while not self.closed.is_set():
            if time.monotonic() > deadline:
                raise Timeout("the plugin did not close the sidecar's stdin")
            self.pump(0.02)

    def close(self):
        """The sidecar dies (its relay exits with code 3)."""
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()


class FakeSidecar(object):
    """Listens for relays; ``pump(timeout)`` runs the editor's UI loop."""

    def __init__(self, pump):
        self.pump = pump
        self.server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(8)
        self.server.settimeout(0.02)
        self.port = self.server.getsockname()[1]
        self.connections = []

    def env(self):
        return {"GIC_FAKE_SIDECAR_PORT": str(self.port)}

    def accept(self, timeout=10.0):
        """The next relay the plugin started."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                sock, _ = self.server.accept()
                break
            except socket.timeout:
                if time.monotonic() > deadline:
                    raise Timeout("the plugin started no sidecar within %.0f s" % timeout)
                self.pump(0.02)
        sock.settimeout(None)
        conn = Connection(sock, self.pump)
        self.connections.append(conn)
        return conn

    def close(self):
        for conn in self.connections:
            conn.close()
        self.server.close()
