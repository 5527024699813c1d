"""Every editor-link transcript, replayed against the plugin's own code.

The transcripts in link/protocol/transcripts (the protocol's recorded
exchanges, shared by the Go tests and every plugin) and in tests/transcripts
(this plugin's own) are replayed with plugin.py loaded on the stand-in
``sublime`` modules and a sidecar the replayer plays (fake_sidecar: the
plugin starts a relay process as its sidecar, so its own transport, process
handling and restarts run). For each step:

- ``sidecar``: the replayer sends the message (with its own paths and real
  ids) and checks what a user would notice: ``status`` text in the status
  bar, ``log`` and ``diff/state`` messages shown as sent, the environment
  after ``workspace/envChanged``, a Terminus terminal opened with the
  ``terminal/env`` answer.
- ``plugin``: the replayer makes the plugin send it the way the editor would
  (a file opened with the caret where the message says, a selection made, a
  tab closed, a folder added, a terminal opened, the Status command's request;
  for files that are not on disk the session is told directly) and checks
  the message the plugin actually sent; messages the plugin sends by itself,
  like ``initialize``, answers and decisions, are just awaited. Plugin
  notifications no line expects are ignored (opening a file, for one, is
  reported twice: on_activated and on_load).
- ``user``: done through the plugin's diff tab: its text edited, the Accept /
  Reject links of its bar clicked, the tab closed.
- ``restart``: the sidecar process dies; the plugin starts a new one.
- A ``diff/close`` the plugin answers with ``"content": null`` before a
  ``user`` step records a race: the user's action reached the plugin first,
  so the replay does it before sending ``diff/close``.
- ``cli`` and ``comment``: skipped (the Go replays perform the CLI's side).
"""

import glob
import itertools
import json
import os
import re
import sys
import unittest

import support
import transcript
from gemini_companion import positions
from fake_sidecar import FakeSidecar, write_relay

sublime, sublime_plugin = support.fake_modules()

SETTINGS = "Gemini Companion.sublime-settings"
SHARED = os.path.join(support.REPO_ROOT, "link", "protocol", "transcripts")
OWN = os.path.join(support.TESTS_DIR, "transcripts")
DIFF_SETTING = "gemini_companion_diff"


def transcript_files():
    """Every transcript a plugin replays (``sidecar-*`` ones test the
    sidecar's own answers to what no plugin sends)."""
    found = []
    for folder in (SHARED, OWN):
        found += [p for p in sorted(glob.glob(os.path.join(folder, "*.jsonl")))
                  if not os.path.basename(p).startswith("sidecar-")]
    return found


class Replayer(object):
    """Plays one transcript; ``test`` is the running TranscriptTest."""

    def __init__(self, test, path):
        self.test = test
        self.name = os.path.relpath(path, support.REPO_ROOT)
        self.steps = transcript.load(path)
        self.paths = transcript.Paths(test.workspace)
        # ${file} exists when a replay starts; ${file2}, ${file3}... do not.
        with open(self.paths.get("file"), "w", encoding="utf-8") as f:
            f.write("one\ntwo\nthree\n")
        self.conn = None
        self.where = self.name
        self.fresh = itertools.count(1)
        self.plugin_ids = {}            # a plugin request's id in the transcript -> real id
        self.plugin_waiting = []        # real ids of plugin requests not answered yet
        self.sidecar_ids = {}           # a sidecar request's id in the transcript -> id sent
        self.sidecar_waiting = []       # ids of sidecar requests the plugin has not answered
        self.requests = {}              # id sent -> method, for both sides
        self.results = []
        self.bindings = {}              # what placeholders last matched, by key
        self.done = set()               # steps done ahead of their turn
        self.backlog = []               # plugin notifications no line expected yet

    # ------------------------------------------------------------ helpers

    def fail(self, text):
        self.test.fail("%s: %s" % (self.where, text))

    def pump_until(self, predicate, what):
        if not sublime.run_until(predicate, timeout=15):
            self.fail("not seen within 15 s: " + what)

    def connection(self):
        if self.conn is None:
            self.conn = self.test.sidecar.accept(timeout=15)
        return self.conn

    @property
    def window(self):
        return self.test.window

    @property
    def session(self):
        return self.test.plugin._sessions[self.window.id()]

    def diff_view(self):
        views = [v for v in self.window.views() if v.settings().get(DIFF_SETTING)]
        if not views:
            self.fail("no proposal tab is open")
        return views[-1]

    def run(self):
        for index, (number, actor, value) in enumerate(self.steps):
            self.where = "%s:%d" % (self.name, number)
            if index in self.done:
                continue
            if actor == "sidecar" and isinstance(value, dict) and value.get("method") == "diff/close":
                self.user_first(index)
            step = getattr(self, "do_" + actor, None)
            if step is not None:
                step(self.paths.substitute(value))

    def user_first(self, index):
        """A race the transcript records in order: the plugin answers the
        sidecar's diff/close with ``"content": null`` (its view was gone)
        because the user's next action reached it first. So that action is
        done before diff/close is sent, as it happens in the editor."""
        reply = None
        for later in range(index + 1, len(self.steps)):
            number, actor, value = self.steps[later]
            if actor == "sidecar" or (actor == "plugin" and reply is not None):
                return
            if actor == "plugin":
                result = value.get("result") if isinstance(value, dict) else None
                if not (isinstance(result, dict) and "content" in result and result["content"] is None):
                    return
                reply = later
            elif actor == "user" and reply is not None:
                if any(v.settings().get(DIFF_SETTING) for v in self.window.views()):
                    self.where = "%s:%d (before diff/close)" % (self.name, number)
                    self.do_user(self.paths.substitute(value))
                    self.done.add(later)
                return

    # -------------------------------------------------------------- steps

    def do_restart(self, _):
        self.pump_until(lambda: self.session.state == "ready", "the companion ready")
        self.connection().close()       # the relay exits with code 3
        self.conn = None
        self.plugin_waiting, self.sidecar_waiting, self.backlog = [], [], []
        # The user is told, in the sidecar's words, with the reason.
        text = self.session.link.message("restarting", reason="exit code 3")
        self.pump_until(lambda: text in sublime.state.status_messages, "message %r" % text)
        self.restarted = self.session.link.message("restarted")

    def do_user(self, action):
        view = self.diff_view()
        kind = action.get("action")
        if kind == "edit":
            view.user_replace_all(action["content"])
        elif kind == "close":
            view.close()
        elif kind in ("accept", "reject", "acceptOverDiskChange"):
            href = "reject" if kind == "reject" else "accept"
            for _ in range(2 if kind == "acceptOverDiskChange" else 1):
                if not view.settings().get(DIFF_SETTING):
                    break
                content, _, navigate = view.phantoms()[0]
                if 'href="%s"' % href not in content:
                    self.fail("the proposal tab's bar has no %s link: %s" % (href, content))
                navigate(href)
                sublime.pump()
        else:
            self.fail("unknown user action %r" % (kind,))
        sublime.pump()

    def do_sidecar(self, message):
        message = dict(message)
        method, key = message.get("method"), json.dumps(message.get("id"))
        if method is not None and "id" in message:
            real = message["id"] if message["id"] != "<id>" else "replay-%d" % next(self.fresh)
            self.sidecar_ids[key] = real
            self.sidecar_waiting.append(real)
            self.requests[json.dumps(real)] = method
            message["id"] = real
        elif method is None and message.get("id") is not None:
            if message["id"] == "<id>":     # the earliest unanswered request
                real = self.plugin_waiting[0] if self.plugin_waiting else None
            else:
                real = self.plugin_ids.get(key, message["id"])
            if real in self.plugin_waiting:
                self.plugin_waiting.remove(real)
            message["id"] = real
        message = transcript.fill(message, self.bindings)
        self.connection().send(message)
        self.check_effect(message)
        if getattr(self, "restarted", None) and self.requests.get(json.dumps(message.get("id"))) == "initialize":
            text, self.restarted = self.restarted, None
            self.pump_until(lambda: text in sublime.state.status_messages, "message %r" % text)

    def do_plugin(self, pattern):
        pattern = dict(pattern)
        method = pattern.get("method")
        if method is not None and method != "initialize" and \
                method not in ("diff/accepted", "diff/rejected"):
            self.drive(method, pattern.get("params"), "id" in pattern)
        expected_id = pattern.pop("id", None) if "id" in pattern else KeyError
        for kept in list(self.backlog):     # sent ahead of its line (user_first)
            if transcript.mismatch(pattern, kept, bindings=self.bindings) is None:
                self.backlog.remove(kept)
                return
        while True:
            try:
                actual = self.connection().recv(timeout=15)
            except AssertionError as exc:
                self.fail("%s; it sent only notifications no line expects: %s" % (
                    exc, json.dumps(self.backlog, ensure_ascii=False)[:2000]))
            problem = transcript.mismatch(pattern, actual, bindings=self.bindings)
            if problem is None and expected_id is not KeyError:
                problem = self.check_id(method, expected_id, actual)
            if problem is None:
                return
            if "method" in actual and "id" not in actual and not (
                    method == actual["method"] and expected_id is KeyError):
                self.backlog.append(actual)     # a notification no line expects (yet)
                continue
            self.fail("the plugin sent %s\n  %s" % (
                json.dumps(actual, ensure_ascii=False)[:1000], problem))

    def check_id(self, method, expected, actual):
        if "id" not in actual:
            return "it carries no id"
        real = actual["id"]
        if method is not None:                  # a request from the plugin
            self.plugin_ids[json.dumps(expected)] = real
            self.plugin_waiting.append(real)
            self.requests[json.dumps(real)] = method
            return transcript.mismatch("<id>", real)
        if expected is None:
            return None if real is None else "id: expected null, got %r" % (real,)
        if expected == "<id>":      # the earliest request still waiting
            wanted = self.sidecar_waiting[0] if self.sidecar_waiting else None
        else:
            wanted = self.sidecar_ids.get(json.dumps(expected))
        if wanted is not None and real != wanted:
            return "id: %r answers no request; expected %r" % (real, wanted)
        if real not in self.sidecar_waiting:
            return "id: %r is not a request of the sidecar's waiting for an answer" % (real,)
        self.sidecar_waiting.remove(real)
        return None

    # ------------------------------------------------------ what the plugin does

    def drive(self, method, params, is_request):
        """Make the plugin send ``method`` the way the editor would."""
        params = params if isinstance(params, dict) else {}
        session = self.session
        # What the sidecar sent before is taken first (initialize's answer).
        self.pump_until(lambda: session.state == "ready", "the companion ready")
        path, cursor, selected = params.get("path"), params.get("cursor"), params.get("selectedText")
        region = self.region(path, cursor, selected) if method.startswith("context/") else None
        if method == "context/fileFocused" and region is not None:
            view = self.window.find_open_file(path)
            if view is not None and view == self.window.active_view():
                self.window.focus_view(self.window.views()[0])  # away, to come back
            view = self.window.open_file(path)     # focuses it: on_activated
            view.sel().clear()
            view.sel().add(region)
        elif method == "context/selectionChanged" and region is not None:
            self.window.focus_view(self.window.open_file(path))
            self.window.find_open_file(path).user_select(region)
        elif method == "context/fileClosed" and self.window.find_open_file(path) is not None:
            self.window.find_open_file(path).close()
        elif method == "context/fileFocused":
            session.file_focused(path, cursor, selected)
        elif method == "context/selectionChanged":
            session.selection_changed(path, cursor, selected)
        elif method == "context/fileClosed":
            session.file_closed(path)
        elif method == "context/fileRenamed":
            session.file_renamed(params.get("oldPath"), params.get("newPath"))
        elif method == "workspace/foldersChanged":
            self.window.set_project_data({"folders": [
                {"path": p} for p in params.get("workspaceFolders", [])]})
            self.window.run_command("prompt_add_folder")
        elif method == "terminal/env":
            sublime.state.resources = ["Packages/Terminus/Terminus.sublime-settings"]
            sublime.load_settings(SETTINGS).set("terminal_command", [sys.executable])
            self.window.commands_run[:] = []
            self.window.run_command("gemini_open_terminal")
        elif method == "status/get":
            sublime.state.message_dialogs[:] = []
            self.window.run_command("gemini_status")
        elif method == "shutdown":
            session.stop()
        elif is_request:
            session.link.request(method, params, lambda r, e: self.results.append((r, e)))
        elif not session.link.notify(method, params):
            self.fail("the plugin cannot send %s now" % method)

    def region(self, path, cursor, selected):
        """Where the caret and selection go in ``path`` so that the plugin
        reports ``cursor`` and ``selected`` (None: not a file it can show)."""
        if not isinstance(path, str) or not os.path.isfile(path) or not isinstance(cursor, dict):
            return None
        with open(path, encoding="utf-8", newline="") as f:
            lines = f.read().split("\n")
        row = cursor.get("line", 1) - 1
        if not 0 <= row < len(lines):
            return None
        column = positions.codepoint_column(lines[row], cursor.get("character", 1) - 1)
        point = sum(len(line) + 1 for line in lines[:row]) + column
        text = "\n".join(lines)
        if not selected:
            return sublime.Region(point)
        if text[point - len(selected):point] == selected:
            return sublime.Region(point - len(selected), point)
        if text[point:point + len(selected)] == selected:
            return sublime.Region(point + len(selected), point)
        return None

    def check_effect(self, message):
        """What the user sees after the sidecar sent ``message``."""
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        method = message.get("method")
        text = params.get("text") if method == "status" else params.get("message")
        if method in ("status", "log", "diff/state") and isinstance(text, str) and text:
            if method == "status":
                views = self.window.views()
                self.pump_until(lambda: all(v.get_status("gemini_companion") == text for v in views),
                                "status bar %r" % text)
            else:
                self.pump_until(lambda: text in sublime.state.status_messages, "message %r" % text)
        elif method == "workspace/envChanged" and isinstance(params.get("env"), dict):
            self.pump_until(lambda: self.session.env == params["env"], "the new environment")
        answered = self.requests.get(json.dumps(message.get("id")))
        result = message.get("result")
        status = result.get("status") if answered == "initialize" and isinstance(result, dict) else None
        if isinstance(status, dict) and isinstance(status.get("text"), str):
            views = self.window.views()     # initialize's status line, shown at once
            self.pump_until(lambda: all(v.get_status("gemini_companion") == status["text"]
                                        for v in views), "status bar %r" % status["text"])
        if method is None and answered == "status/get" and isinstance(result, dict):
            line = "Gemini CLI sessions: %s" % (result.get("connectedClients"),)
            self.pump_until(lambda: any(line in d for d in sublime.state.message_dialogs),
                            "the Status dialog saying %r" % line)
        if method is None and answered == "terminal/env" and isinstance(result, dict):
            def opened():
                return [a for c, a in self.window.commands_run if c == "terminus_open"]
            self.pump_until(opened, "a Terminus terminal")
            if opened()[0]["env"] != result.get("env"):
                self.fail("the terminal got %r, not the sidecar's terminal/env" % (opened()[0]["env"],))


class TranscriptTest(unittest.TestCase):

    def setUp(self):
        sublime.state.reset()
        self.tmp = support.TempDir()
        self.addCleanup(self.tmp.cleanup)
        self.workspace = self.tmp.join("workspace")
        os.makedirs(self.workspace)
        self.sidecar = FakeSidecar(sublime.pump)
        settings = sublime.load_settings(SETTINGS)
        settings.set("binary", write_relay(self.tmp.path))
        settings.set("env", self.sidecar.env())
        settings.set("auto_start", True)
        settings.set("show_inline_diff", False)
        self.window = sublime.add_window([self.workspace])
        self.window.new_file()          # a tab to show the status bar in
        self.plugin = support.load_plugin()
        self.plugin.console = lambda text: None
        sublime_plugin.load_plugin(self.plugin)     # starts the window's companion

    def tearDown(self):
        sublime_plugin.unload_plugin(self.plugin)
        pids = [c.pid for c in self.sidecar.connections]
        self.sidecar.close()
        for pid in pids:
            support.wait_until(lambda: not support.pid_alive(pid))
        self.assertEqual(sublime.state.errors, [], "plugin callbacks raised")
        self.assertEqual(sublime.state.thread_violations, [], "Sublime API used off the UI thread")

    def test_the_shared_transcripts_are_there(self):
        shared = glob.glob(os.path.join(SHARED, "*.jsonl"))
        if not shared and not os.environ.get("CI"):
            self.skipTest("no transcripts in %s yet" % SHARED)
        self.assertTrue(shared, "no transcripts in %s" % SHARED)


def _replay(path):
    def test(self):
        Replayer(self, path).run()
    test.__doc__ = "replay %s" % os.path.relpath(path, support.REPO_ROOT)
    return test


for _path in transcript_files():
    _name = re.sub(r"\W+", "_", os.path.splitext(os.path.basename(_path))[0])
    setattr(TranscriptTest, "test_replay_%s_%s" % (
        "shared" if _path.startswith(SHARED) else "own", _name), _replay(_path))


if __name__ == "__main__":
    unittest.main()
