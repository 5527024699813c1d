"""Shared test helpers: the real sidecar binary, loading plugin.py with the
stand-in ``sublime`` modules, temporary directories."""

import importlib
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import types

TESTS_DIR = os.path.dirname(os.path.abspath(__file__))
PACKAGE_DIR = os.path.dirname(TESTS_DIR)
REPO_ROOT = os.path.dirname(os.path.dirname(PACKAGE_DIR))
FAKE_DIR = os.path.join(TESTS_DIR, "fake_sublime")
PACKAGE_NAME = "Gemini Companion"  # what Packages/Gemini Companion loads as

if PACKAGE_DIR not in sys.path:
    # Lets tests import the core as the top-level package gemini_companion.
    sys.path.insert(0, PACKAGE_DIR)

_binary_lock = threading.Lock()
_binary = None
_build_dir = None


def sidecar_binary():
    """Path of the real gemini-ide-companion: $GIC_BINARY, else built once
    per test run with ``go build`` into a temporary directory."""
    global _binary, _build_dir
    with _binary_lock:
        if _binary:
            return _binary
        configured = os.environ.get("GIC_BINARY")
        if configured:
            if not os.access(configured, os.X_OK):
                raise RuntimeError("GIC_BINARY=%s is not an executable" % configured)
            _binary = os.path.abspath(configured)
            return _binary
        go = shutil.which("go")
        if go is None:
            raise RuntimeError("set GIC_BINARY or put go on PATH to build the sidecar")
        _build_dir = tempfile.mkdtemp(prefix="gic-sublime-build-")
        target = os.path.join(_build_dir, "gemini-ide-companion")
        proc = subprocess.run(
            [go, "build", "-o", target, "./cmd/gemini-ide-companion"],
            cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if proc.returncode != 0:
            raise RuntimeError("go build failed:\n" + proc.stdout.decode("utf-8", "replace"))
        _binary = target
        return _binary


def wait_until(predicate, timeout=10.0, interval=0.02):
    """Poll ``predicate`` until true or ``timeout``; returns its last value."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(interval)


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie (exited, not yet reaped) still answers kill(0).
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return True


def fake_modules():
    """Import the stand-in ``sublime`` and ``sublime_plugin`` modules."""
    if FAKE_DIR not in sys.path:
        sys.path.insert(0, FAKE_DIR)
    import sublime
    import sublime_plugin
    if not os.path.dirname(os.path.abspath(sublime.__file__)) == FAKE_DIR:
        raise RuntimeError("a real sublime module is on the path: %s" % sublime.__file__)
    return sublime, sublime_plugin


def load_plugin():
    """Import plugin.py the way Sublime does: as ``<package>.plugin``, with
    the package directory as a package. Returns the module (fresh each call)."""
    sublime, sublime_plugin = fake_modules()
    for name in list(sys.modules):
        if name == PACKAGE_NAME or name.startswith(PACKAGE_NAME + "."):
            del sys.modules[name]
    package = types.ModuleType(PACKAGE_NAME)
    package.__path__ = [PACKAGE_DIR]
    package.__package__ = PACKAGE_NAME
    sys.modules[PACKAGE_NAME] = package
    return importlib.import_module(PACKAGE_NAME + ".plugin")


class TempDir(object):
    def __init__(self, prefix="gic-sublime-"):
        # realpath: on some systems the temp dir is behind a symlink, and the
        # CLI compares real paths.
        self.path = os.path.realpath(tempfile.mkdtemp(prefix=prefix))

    def join(self, *parts):
        return os.path.join(self.path, *parts)

    def write(self, relpath, text):
        path = self.join(relpath)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        return path

    def cleanup(self):
        shutil.rmtree(self.path, ignore_errors=True)


class QueueHost(object):
    """The host a link or session needs, without Sublime: "UI" callbacks
    queue up and run on the test's thread in ``pump``; what the user would
    see is recorded."""

    def __init__(self):
        import queue
        self.calls = queue.Queue()
        self.logs = []
        self.announced = []
        self.errors = []
        self.states = []

    def call_soon(self, fn):
        self.calls.put(fn)

    def call_later(self, ms, fn):
        timer = threading.Timer(ms / 1000.0, self.calls.put, args=(fn,))
        timer.daemon = True
        timer.start()

    def pump(self, timeout=0.0):
        """Run queued callbacks, waiting up to ``timeout`` for the first."""
        import queue
        ran = 0
        while True:
            try:
                fn = self.calls.get(timeout=timeout if ran == 0 else 0)
            except queue.Empty:
                return ran
            fn()
            ran += 1

    def run_until(self, predicate, timeout=10.0):
        deadline = time.monotonic() + timeout
        while not predicate():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            self.pump(min(0.05, remaining))
        return True

    def log(self, text):
        self.logs.append(text)

    def log_stderr(self, text):
        self.logs.append("companion: " + text)

    def announce(self, text):
        self.announced.append(text)

    def report_error(self, text):
        self.errors.append(text)

    def show_state(self, session):
        self.states.append(session.describe())
