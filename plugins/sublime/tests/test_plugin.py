"""plugin.py end to end: the stand-in sublime modules play Sublime Text, the
real gemini-ide-companion binary is the sidecar, and mcp_client plays
Gemini CLI. Each test drives the plugin the way Sublime would (event
listener calls, commands) and checks what a user would notice: what the CLI
is told, which tabs exist, what the status bar and messages say."""

import json
import os
import signal
import subprocess
import sys
import threading
import time
import unittest

import support
from mcp_client import McpClient

sublime, sublime_plugin = support.fake_modules()

SETTINGS = "Gemini Companion.sublime-settings"
# The sidecar's status lines (status.text), shown as is.
NO_CLI = "Gemini: no CLI connected"
ONE_CLI = "Gemini: 1 CLI connected"
TWO_CLIS = "Gemini: 2 CLIs connected"


def idle(session):
    """The status line before any CLI connects: the sidecar's, if its
    initialize answer carries one, else the package's own label."""
    return NO_CLI if isinstance(session.link.info.get("status"), dict) else "Gemini: ready"


class PluginTestCase(unittest.TestCase):
    auto_start = True

    def setUp(self):
        sublime.state.reset()
        self.tmp = support.TempDir()
        self.project = self.tmp.join("project")
        os.makedirs(self.project)
        self.code = self.tmp.write("project/app.py", "import os\n\ns = 'a😀b😀c'\n")
        self.notes = self.tmp.write("project/notes.md", "# notes\n")
        settings = sublime.load_settings(SETTINGS)
        settings.set("binary", support.sidecar_binary())
        settings.set("env", {"TMPDIR": self.tmp.path})
        settings.set("log_level", "warn")
        settings.set("auto_start", self.auto_start)
        self.clients = []
        self.pids = []
        self.window = sublime.add_window([self.project])
        self.plugin = support.load_plugin()
        self.console = []
        self.plugin.console = self.record_console
        sublime_plugin.load_plugin(self.plugin)
        self.loaded = True

    def tearDown(self):
        for client in self.clients:
            client.close()
        for session in self.plugin._sessions.values():
            if session.sidecar_pid and session.sidecar_pid not in self.pids:
                self.pids.append(session.sidecar_pid)
        if self.loaded:
            sublime_plugin.unload_plugin(self.plugin)
        for pid in self.pids:
            support.wait_until(lambda: not support.pid_alive(pid), timeout=10)
        errors = list(sublime.state.errors)
        violations = list(sublime.state.thread_violations)
        self.tmp.cleanup()
        self.assertEqual(errors, [], "plugin callbacks raised:\n" + "\n".join(errors))
        self.assertEqual(violations, [], "Sublime API used off the UI thread")

    # ------------------------------------------------------------ helpers

    def record_console(self, text):
        self.console.append(text)
        if os.environ.get("GIC_TEST_VERBOSE"):
            print("console: " + text)

    def pump_until(self, predicate, timeout=10.0, message=None):
        ok = sublime.run_until(predicate, timeout=timeout)
        self.assertTrue(ok, message or "condition not met within %.0f s" % timeout)

    def session(self, window=None):
        return self.plugin._sessions.get((window or self.window).id())

    def ready(self, window=None):
        window = window or self.window
        self.pump_until(lambda: self.session(window) is not None
                        and self.session(window).state == "ready",
                        message="the window's companion did not become ready: %r" % (
                            self.session(window) and self.session(window).last_error))
        session = self.session(window)
        if session.sidecar_pid not in self.pids:
            self.pids.append(session.sidecar_pid)
        return session

    def cli(self, window=None):
        session = self.ready(window)
        client = McpClient.from_discovery_file(session.discovery_file)
        self.clients.append(client)
        client.connect()
        return client

    def wait_cli(self, client, method, predicate=None, since=0, timeout=10.0):
        found = client.wait_for(method, predicate, timeout=timeout, since=since,
                                pump=sublime.pump)
        self.assertIsNotNone(found, "no %s matching; got %s" % (
            method, json.dumps(client.since(since), ensure_ascii=False)[:3000]))
        return found["params"]

    @staticmethod
    def active(params):
        files = params["workspaceState"]["openFiles"]
        for f in files:
            if f.get("isActive"):
                return f
        return None

    def wait_active(self, client, path, since=0, extra=None):
        def match(params):
            f = self.active(params)
            return f is not None and f["path"] == path and (extra is None or extra(f))
        return self.active(self.wait_cli(client, "ide/contextUpdate", match, since))

    def open(self, path, window=None):
        view = (window or self.window).open_file(path)
        sublime.pump()
        return view

    def discovery(self, session=None):
        with open((session or self.session()).discovery_file, encoding="utf-8") as f:
            return json.load(f)


class LifecycleTest(PluginTestCase):

    def test_each_window_gets_its_own_sidecar_that_names_sublime_text(self):
        session = self.ready()
        info = self.discovery(session)
        self.assertEqual(info["ideInfo"], {"name": "sublimetext",
                                           "displayName": "Sublime Text"})
        self.assertEqual(info["workspacePath"], self.project)
        self.assertEqual(info["port"], session.port)
        self.assertTrue(support.pid_alive(session.sidecar_pid))

        other_project = self.tmp.join("other")
        os.makedirs(other_project)
        other = sublime.new_window([other_project])   # on_new_window
        other_session = self.ready(other)
        self.assertNotEqual(other_session.port, session.port)
        self.assertNotEqual(other_session.sidecar_pid, session.sidecar_pid)
        self.assertEqual(self.discovery(other_session)["workspacePath"], other_project)

    def test_closing_the_window_stops_its_sidecar_and_removes_the_discovery_file(self):
        session = self.ready()
        pid, path = session.sidecar_pid, session.discovery_file
        self.window.user_close()
        self.pump_until(lambda: not support.pid_alive(pid) and not os.path.exists(path),
                        message="sidecar still running after its window closed")
        self.assertNotIn(self.window.id(), self.plugin._sessions)

    def test_unloading_the_plugin_stops_every_sidecar_and_clears_the_status_bar(self):
        view = self.open(self.code)
        session = self.ready()
        self.pump_until(lambda: view.get_status("gemini_companion") != "")
        pid = session.sidecar_pid
        sublime_plugin.unload_plugin(self.plugin)
        self.loaded = False
        self.assertTrue(support.wait_until(lambda: not support.pid_alive(pid)))
        self.assertEqual(view.get_status("gemini_companion"), "")

    def test_quitting_sublime_stops_the_sidecars_cleanly(self):
        session = self.ready()
        pid, path = session.sidecar_pid, session.discovery_file
        sublime._dispatch("on_exit")
        sublime.pump()
        self.assertTrue(support.wait_until(lambda: not support.pid_alive(pid)))
        self.assertFalse(os.path.exists(path))

    def test_the_restart_command_replaces_the_sidecar(self):
        session = self.ready()
        old_pid = session.sidecar_pid
        self.window.run_command("gemini_restart")
        self.pump_until(lambda: session.state == "ready" and session.sidecar_pid != old_pid)
        self.pids.append(session.sidecar_pid)
        self.assertTrue(support.wait_until(lambda: not support.pid_alive(old_pid)))
        self.assertTrue(os.path.isfile(session.discovery_file))

    def test_stop_and_start_commands(self):
        view = self.open(self.code)
        session = self.ready()
        pid, path = session.sidecar_pid, session.discovery_file
        self.window.run_command("gemini_stop")
        self.assertTrue(support.wait_until(lambda: not support.pid_alive(pid)))
        self.assertFalse(os.path.exists(path))
        self.assertEqual(view.get_status("gemini_companion"), "")
        self.window.run_command("gemini_start")
        self.ready()
        self.assertNotEqual(session.sidecar_pid, pid)
        self.pump_until(lambda: view.get_status("gemini_companion") == idle(session))
        client = self.cli()
        self.wait_active(client, self.code)

    def test_status_bar_follows_connected_cli_sessions(self):
        view = self.open(self.code)
        session = self.ready()
        self.pump_until(lambda: view.get_status("gemini_companion") == idle(session))
        first = self.cli()
        self.pump_until(lambda: view.get_status("gemini_companion") == ONE_CLI)
        later = self.window.new_file()     # views opened later get it too
        self.pump_until(lambda: later.get_status("gemini_companion") == ONE_CLI)
        self.cli()
        self.pump_until(lambda: view.get_status("gemini_companion")
                        == TWO_CLIS)
        first.close()
        # A CLI counts as gone once its event stream stayed closed for 5 s.
        self.pump_until(lambda: view.get_status("gemini_companion") == ONE_CLI, timeout=20)
        self.assertEqual(session.describe(), ONE_CLI)

    def test_a_killed_sidecar_is_restarted_and_announced(self):
        view = self.open(self.code)
        view.user_select(sublime.Region(0, 6))
        session = self.ready()
        old_pid, old_port = session.sidecar_pid, session.port
        os.kill(old_pid, signal.SIGKILL)
        self.pump_until(lambda: any("restarting" in m for m in sublime.state.status_messages),
                        message="no restart announcement: %r" % sublime.state.status_messages)
        self.pump_until(lambda: session.state == "ready" and session.sidecar_pid != old_pid,
                        timeout=15, message="not restarted")
        self.pids.append(session.sidecar_pid)
        self.assertTrue(any("restarted" in m for m in sublime.state.status_messages))
        self.assertTrue(os.path.isfile(session.discovery_file))
        self.assertNotEqual(session.port, old_port)
        # The new sidecar was told what the user is looking at.
        client = self.cli()
        active = self.wait_active(client, self.code)
        self.assertEqual(active["selectedText"], "import")
        self.pump_until(lambda: view.get_status("gemini_companion") == ONE_CLI)


class ManualStartTest(PluginTestCase):
    auto_start = False

    def test_without_auto_start_the_first_command_starts_the_sidecar(self):
        sublime.pump(0.2)
        self.assertIsNone(self.session())
        sublime.state.resources = []     # no Terminus: the env goes to the clipboard
        self.window.run_command("gemini_copy_env")
        session = self.ready()
        self.pump_until(lambda: "GEMINI_CLI_IDE_SERVER_PORT" in sublime.state.clipboard)
        self.assertIn(str(session.port), sublime.state.clipboard)


class MissingBinaryTest(PluginTestCase):
    auto_start = False

    def test_a_missing_binary_gives_the_install_command_then_recovers(self):
        settings = sublime.load_settings(SETTINGS)
        settings.set("binary", self.tmp.join("nowhere", "gemini-ide-companion"))
        self.window.run_command("gemini_start")
        sublime.pump()
        self.assertEqual(len(sublime.state.error_messages), 1)
        message = sublime.state.error_messages[0]
        self.assertIn("go install ./cmd/gemini-ide-companion "
                      "(in a clone of the gemini-ide-companion repository)", message)
        self.assertIn("nowhere", message)
        self.assertEqual(self.session().state, "failed")
        view = self.window.new_file()
        sublime.pump()
        self.assertEqual(view.get_status("gemini_companion"), "Gemini: stopped (see console)")
        # Fix the setting; the next command starts it.
        settings.set("binary", support.sidecar_binary())
        self.window.run_command("gemini_start")
        self.ready()
        self.pump_until(lambda: any("ready on port" in m for m in sublime.state.status_messages))

    def test_a_bad_env_setting_is_reported_not_crashed_on(self):
        sublime.load_settings(SETTINGS).set("env", {"TMPDIR": 5})
        self.window.run_command("gemini_start")
        sublime.pump()
        self.assertEqual(self.session().state, "failed")
        self.assertIn("TMPDIR", sublime.state.error_messages[-1])


class CrashLoopTest(PluginTestCase):
    auto_start = False

    def test_a_sidecar_that_keeps_dying_is_given_up_on_with_a_message(self):
        script = self.tmp.write("bin/dies", "#!/bin/sh\necho 'boom' >&2\nexit 7\n")
        os.chmod(script, 0o755)
        sublime.load_settings(SETTINGS).set("binary", script)
        self.window.run_command("gemini_start")
        self.pump_until(lambda: self.session().state == "failed", timeout=30,
                        message="kept restarting a sidecar that always dies")
        # It never answered initialize: the built-in policy and texts apply,
        # five restarts within the minute, then it is given up on.
        messages = self.plugin.sessionmod.linkmod.DEFAULT_POLICY["messages"]
        gave_up = messages["gaveUp"].replace("{count}", "6").replace("{reason}", "exit code 7")
        self.assertEqual(self.session().last_error, gave_up)
        self.assertIn("Gemini Companion: Restart", gave_up)
        restarting = messages["restarting"].replace("{reason}", "exit code 7")
        self.assertEqual(sublime.state.status_messages.count(restarting), 5)
        self.assertEqual(sublime.state.status_messages[-1], gave_up)
        self.assertTrue(any("boom" in line for line in self.console), self.console)


class ContextTest(PluginTestCase):

    def test_focus_cursor_and_selection_reach_the_cli_in_utf16(self):
        client = self.cli()
        view = self.open(self.code)
        self.wait_active(client, self.code)
        # Line 3 is "s = 'a😀b😀c'"; select "😀b😀" (code points 6..9).
        start = view.text_point(2, 6)
        mark = client.mark()
        view.user_select(sublime.Region(start, start + 3))
        active = self.wait_active(client, self.code, mark,
                                  lambda f: f.get("selectedText") == "😀b😀")
        # The caret is after the second emoji: 9 code points, 11 UTF-16 units.
        self.assertEqual(active["cursor"], {"line": 3, "character": 12})

    def test_switching_files_changes_the_active_file(self):
        client = self.cli()
        code_view = self.open(self.code)
        self.open(self.notes)
        params = self.wait_cli(client, "ide/contextUpdate",
                               lambda p: (self.active(p) or {}).get("path") == self.notes)
        paths = [f["path"] for f in params["workspaceState"]["openFiles"]]
        self.assertEqual(set(paths), {self.code, self.notes})
        mark = client.mark()
        self.window.focus_view(code_view)
        self.wait_active(client, self.code, mark)

    def test_no_workspace_trust_is_claimed_for_the_cli(self):
        # Sublime Text has no trust model: the CLI must get no isTrusted, so
        # that its own folder-trust prompt decides (an IDE's value overrides it).
        client = self.cli()
        self.open(self.code)
        params = self.wait_cli(client, "ide/contextUpdate",
                               lambda p: (self.active(p) or {}).get("path") == self.code)
        self.assertNotIn("isTrusted", params["workspaceState"])

    def test_closing_a_file_takes_it_out_of_the_context(self):
        client = self.cli()
        self.open(self.code)
        notes = self.open(self.notes)
        self.wait_active(client, self.notes)
        mark = client.mark()
        notes.close()
        params = self.wait_cli(client, "ide/contextUpdate", lambda p: self.notes not in [
            f["path"] for f in p["workspaceState"]["openFiles"]], mark)
        self.assertEqual([f["path"] for f in params["workspaceState"]["openFiles"]],
                         [self.code])

    def test_unsaved_scratch_widget_and_panel_views_are_not_reported(self):
        client = self.cli()
        code_view = self.open(self.code)
        self.wait_active(client, self.code)
        untitled = self.window.new_file()
        untitled.user_type("not on disk")
        scratch = self.window.open_file(self.notes)
        scratch.set_scratch(True)
        widget_path = self.tmp.write("project/widget.txt", "w")
        widget = self.window.open_file(widget_path)
        widget.settings().set("is_widget", True)
        panel_path = self.tmp.write("project/panel.txt", "p")
        panel = sublime.View(self.window, file_name=panel_path, element="output:exec")
        for view in (untitled, scratch, widget, panel):
            self.window._activate(view)
            view.user_select(sublime.Region(0, 1))
        sublime.pump()
        mark = client.mark()
        self.window.focus_view(code_view)
        code_view.user_select(sublime.Region(1, 2))
        params = self.wait_cli(client, "ide/contextUpdate", lambda p: (
            self.active(p) or {}).get("selectedText") == "m", mark)
        paths = {f["path"] for f in params["workspaceState"]["openFiles"]}
        self.assertEqual(paths, {self.code})

    def test_save_as_renames_the_file_in_the_context(self):
        client = self.cli()
        view = self.open(self.code)
        self.wait_active(client, self.code)
        renamed = self.tmp.join("project", "renamed.py")
        mark = client.mark()
        view.user_save_as(renamed)
        os.remove(self.code)
        params = self.wait_cli(client, "ide/contextUpdate", lambda p: (
            self.active(p) or {}).get("path") == renamed, mark)
        paths = [f["path"] for f in params["workspaceState"]["openFiles"]]
        self.assertNotIn(self.code, paths)

    def test_file_rename_command_renames_the_file_in_the_context(self):
        client = self.cli()
        view = self.open(self.code)
        self.wait_active(client, self.code)
        renamed = self.tmp.join("project", "moved.py")
        mark = client.mark()
        # What File > Rename File does: move the file and retarget its view.
        os.rename(self.code, renamed)
        view.retarget(renamed)
        self.window.run_command("rename_file", {"paths": [self.code]})
        params = self.wait_cli(client, "ide/contextUpdate", lambda p: (
            self.active(p) or {}).get("path") == renamed, mark)
        self.assertNotIn(self.code, [f["path"] for f in params["workspaceState"]["openFiles"]])

    def test_adding_a_folder_updates_the_discovery_file(self):
        session = self.ready()
        extra = self.tmp.join("lib")
        os.makedirs(extra)
        self.window.user_add_folder(extra)
        expected = os.pathsep.join([self.project, extra])
        self.pump_until(lambda: self.discovery(session)["workspacePath"] == expected,
                        message="discovery file not updated: %r" % (self.discovery(session),))
        # The sidecar writes the discovery file, then sends workspace/envChanged.
        self.pump_until(lambda: session.env.get("GEMINI_CLI_IDE_WORKSPACE_PATH") == expected,
                        message="terminal environment not updated: %r" % (session.env,))
        # Project > Remove Folder from Project.
        self.window.set_project_data({"folders": [{"path": extra}]})
        self.window.run_command("remove_folder", {"dirs": [self.project]})
        self.pump_until(lambda: self.discovery(session)["workspacePath"] == extra)

    def test_a_huge_selection_is_cut_to_the_cli_limit(self):
        big = self.tmp.write("project/big.txt", "x" * 200000)
        client = self.cli()
        view = self.open(big)
        mark = client.mark()
        view.user_select(sublime.Region(0, 200000))
        active = self.wait_active(client, big, mark, lambda f: f.get("selectedText"))
        self.assertTrue(active["selectedText"].startswith("x" * 1000))
        self.assertLess(len(active["selectedText"]), 16384 + 100)
        self.assertGreaterEqual(len(active["selectedText"]), 16384)


class DiffTest(PluginTestCase):

    def open_diff(self, client, path, content):
        """Call openDiff as the CLI does; returns (tool result, diff view)."""
        before = set(v.id() for v in self.window.views())
        box = {}

        def call():
            try:
                box["result"] = client.call_tool("openDiff", {"filePath": path,
                                                              "newContent": content})
            except Exception as exc:  # reported below
                box["error"] = exc
        t = threading.Thread(target=call)
        t.start()
        self.pump_until(lambda: not t.is_alive(), timeout=15)
        self.assertNotIn("error", box)
        views = [v for v in self.window.views() if v.id() not in before]
        self.assertEqual(len(views), 1, "expected one new tab")
        return box["result"], views[0]

    def test_open_diff_answers_only_once_the_proposal_tab_exists(self):
        client = self.cli()
        original = self.open(self.code)
        sublime.pump()
        box = {}
        baseline = sublime.pending_callbacks()
        t = threading.Thread(target=lambda: box.update(result=client.call_tool(
            "openDiff", {"filePath": self.code, "newContent": "import sys\n"})))
        t.start()
        # The request reaches the plugin, which queues work for the UI thread;
        # until that runs, the CLI has no answer and there is no tab.
        self.assertTrue(support.wait_until(
            lambda: sublime.pending_callbacks() > baseline, timeout=10))
        self.assertTrue(t.is_alive())
        self.assertEqual(len(self.window.views()), 1)
        self.pump_until(lambda: not t.is_alive(), timeout=15)
        self.assertEqual(box["result"]["content"], [])
        self.assertFalse(box["result"].get("isError", False))
        diff = [v for v in self.window.views() if v != original][0]
        self.assertEqual(diff.text(), "import sys\n")
        with open(self.code, encoding="utf-8") as f:
            self.assertEqual(diff.reference_document, f.read())
        self.assertTrue(diff.is_scratch())
        self.assertFalse(diff.is_read_only())
        self.assertIs(diff.settings().get("gemini_companion_proposal"), True)
        accept = sublime_plugin._find_command("gemini_accept_diff", "text")
        self.assertTrue(accept(diff).is_visible())
        self.assertFalse(accept(original).is_visible())   # menus hide it elsewhere
        self.assertEqual(diff.settings().get("syntax"), "Packages/Python/Python.sublime-syntax")
        self.assertTrue(diff.name().startswith("app.py"), diff.name())
        self.assertEqual(self.window.active_view(), diff)
        bar = diff.phantoms()
        self.assertEqual(len(bar), 1)
        self.assertIn('href="accept"', bar[0][0])
        self.assertIn('href="reject"', bar[0][0])
        self.assertIn(self.code, bar[0][0])
        self.pump_until(lambda: ("toggle_inline_diff", None) in diff.commands_run)
        self.assertEqual(original.text(), "import os\n\ns = 'a😀b😀c'\n")

    def test_accept_sends_the_edited_text_and_closes_the_tab_without_asking(self):
        client = self.cli()
        _, diff = self.open_diff(client, self.code, "import sys\n")
        diff.user_type("# reviewed\n", at=0)
        diff.run_command("gemini_accept_diff")
        params = self.wait_cli(client, "ide/diffAccepted")
        self.assertEqual(params, {"filePath": self.code,
                                  "content": "# reviewed\nimport sys\n"})
        self.pump_until(lambda: diff not in self.window.views())
        self.assertEqual(diff.close_prompts, [])
        # The CLI writes the file, not the editor.
        with open(self.code, encoding="utf-8") as f:
            self.assertEqual(f.read(), "import os\n\ns = 'a😀b😀c'\n")

    def test_the_accept_link_in_the_tab_accepts(self):
        client = self.cli()
        _, diff = self.open_diff(client, self.code, "v2\n")
        content, layout, navigate = diff.phantoms()[0]
        self.assertEqual(layout, sublime.LAYOUT_BLOCK)
        navigate("accept")
        self.assertEqual(self.wait_cli(client, "ide/diffAccepted")["content"], "v2\n")
        self.pump_until(lambda: diff not in self.window.views())

    def test_reject_command_and_reject_link(self):
        client = self.cli()
        _, diff = self.open_diff(client, self.code, "v2\n")
        self.window.run_command("gemini_reject_diff")     # runs on the active tab
        self.assertEqual(self.wait_cli(client, "ide/diffRejected"),
                         {"filePath": self.code})
        self.pump_until(lambda: diff not in self.window.views())
        mark = client.mark()
        _, diff = self.open_diff(client, self.notes, "other\n")
        diff.phantoms()[0][2]("reject")
        self.assertEqual(self.wait_cli(client, "ide/diffRejected", since=mark),
                         {"filePath": self.notes})

    def test_closing_the_tab_rejects(self):
        client = self.cli()
        _, diff = self.open_diff(client, self.code, "v2\n")
        diff.close()
        self.assertEqual(self.wait_cli(client, "ide/diffRejected"), {"filePath": self.code})
        self.assertEqual(client.seen("ide/diffAccepted"), [])

    def test_close_diff_from_the_cli_returns_the_text_and_sends_no_decision(self):
        client = self.cli()
        _, diff = self.open_diff(client, self.code, "v2\n")
        diff.user_type("edited ", at=0)
        box = {}
        t = threading.Thread(target=lambda: box.update(
            result=client.call_tool("closeDiff", {"filePath": self.code})))
        t.start()
        self.pump_until(lambda: not t.is_alive(), timeout=15)
        self.assertEqual(json.loads(box["result"]["content"][0]["text"]),
                         {"content": "edited v2\n"})
        self.pump_until(lambda: diff not in self.window.views())
        # Nothing else arrives for that file: make a later event and check.
        mark = client.mark()
        view = self.open(self.notes)
        self.wait_active(client, self.notes, mark)
        self.assertEqual(client.seen("ide/diffRejected"), [])
        self.assertEqual(client.seen("ide/diffAccepted"), [])
        self.assertTrue(view.is_valid())

    def test_a_second_proposal_for_the_same_file_replaces_the_first(self):
        client = self.cli()
        _, first = self.open_diff(client, self.code, "first\n")
        _, second = self.open_diff(client, self.code, "second\n")
        self.pump_until(lambda: first not in self.window.views())
        diffs = [v for v in self.window.views() if v.settings().get("gemini_companion_diff")]
        self.assertEqual(diffs, [second])
        # The second proposal is still pending: accepting it reaches the CLI.
        second.run_command("gemini_accept_diff")
        self.assertEqual(self.wait_cli(client, "ide/diffAccepted")["content"], "second\n")
        self.assertEqual(client.seen("ide/diffRejected"), [])

    def test_a_proposal_for_a_new_file_diffs_against_nothing(self):
        client = self.cli()
        target = self.tmp.join("project", "fresh.go")
        _, diff = self.open_diff(client, target, "package main\n")
        self.assertEqual(diff.reference_document, "")
        self.assertEqual(diff.settings().get("syntax"), "Packages/Go/Go.sublime-syntax")
        self.assertIn("create", diff.phantoms()[0][0])
        self.assertFalse(os.path.exists(target))

    def test_proposals_left_open_when_the_sidecar_dies_say_so(self):
        client = self.cli()
        _, diff = self.open_diff(client, self.code, "v2\n")
        session = self.session()
        old = session.sidecar_pid
        os.kill(old, signal.SIGKILL)
        self.pump_until(lambda: "no longer waiting" in (diff.phantoms() or [("",)])[0][0])
        self.pump_until(lambda: session.state == "ready" and session.sidecar_pid != old,
                        timeout=15)
        self.pids.append(session.sidecar_pid)
        self.assertIs(diff.settings().get("gemini_companion_proposal"), False)
        diff.run_command("gemini_accept_diff")    # disabled: nothing to accept
        sublime.pump()
        self.assertIn(diff, self.window.views())
        diff.run_command("gemini_reject_diff")    # closes the leftover tab
        self.pump_until(lambda: diff not in self.window.views())


class TerminalTest(PluginTestCase):

    def test_with_terminus_gemini_opens_in_a_terminal_with_the_sidecar_env(self):
        sublime.state.resources = ["Packages/Terminus/Terminus.sublime-settings"]
        probe = [sys.executable, "-c",
                 "import os; print(os.environ['GEMINI_CLI_IDE_SERVER_PORT'],"
                 " os.environ['GEMINI_CLI_IDE_WORKSPACE_PATH'], os.getcwd())"]
        sublime.load_settings(SETTINGS).set("terminal_command", probe)
        self.window.run_command("gemini_open_terminal")
        session = self.ready()
        self.pump_until(lambda: any(c == "terminus_open" for c, _ in self.window.commands_run))
        args = [a for c, a in self.window.commands_run if c == "terminus_open"][0]
        self.assertEqual(args["cmd"], probe)
        self.assertEqual(args["env"], session.env)
        self.assertFalse(args["auto_close"])
        # Run it as Terminus would: the command sees the sidecar's port.
        out = subprocess.run(args["cmd"], cwd=args["cwd"],
                             env=dict(os.environ, **args["env"]),
                             stdout=subprocess.PIPE, check=True).stdout.decode().split()
        self.assertEqual(out, [str(session.port), self.project, self.project])

    def test_each_terminal_gets_the_environment_the_sidecar_gives_then(self):
        sublime.state.resources = ["Packages/Terminus/Terminus.sublime-settings"]
        sublime.load_settings(SETTINGS).set("terminal_command", [sys.executable])
        self.window.run_command("gemini_open_terminal")
        session = self.ready()

        def opened():
            return [a["env"] for c, a in self.window.commands_run if c == "terminus_open"]
        self.pump_until(lambda: len(opened()) == 1)
        self.assertEqual(opened()[0]["GEMINI_CLI_IDE_WORKSPACE_PATH"], self.project)
        extra = self.tmp.join("lib")
        os.makedirs(extra)
        self.window.user_add_folder(extra)
        both = os.pathsep.join([self.project, extra])
        # workspace/envChanged reaches the session; the next terminal asks
        # terminal/env again and gets the new folders.
        self.pump_until(lambda: session.env.get("GEMINI_CLI_IDE_WORKSPACE_PATH") == both)
        self.window.run_command("gemini_open_terminal")
        self.pump_until(lambda: len(opened()) == 2)
        self.assertEqual(opened()[1]["GEMINI_CLI_IDE_WORKSPACE_PATH"], both)
        self.assertEqual(opened()[1]["GEMINI_CLI_IDE_SERVER_PORT"], str(session.port))

    def test_gemini_missing_from_path_is_explained(self):
        sublime.state.resources = ["Packages/Terminus/Terminus.sublime-settings"]
        sublime.load_settings(SETTINGS).set("terminal_command", ["no-such-gemini-cli"])
        self.window.run_command("gemini_open_terminal")
        self.ready()
        self.pump_until(lambda: sublime.state.error_messages)
        self.assertIn("npm install -g @google/gemini-cli", sublime.state.error_messages[0])
        self.assertNotIn("terminus_open", [c for c, _ in self.window.commands_run])

    def test_without_terminus_the_exports_are_copied_for_an_outside_terminal(self):
        sublime.state.resources = ["Packages/User/Terminus.sublime-settings"]  # not installed
        self.window.run_command("gemini_open_terminal")
        session = self.ready()
        self.pump_until(lambda: sublime.state.clipboard)
        self.assertTrue(any("Terminus is not installed" in m and "copied" in m
                            for m in sublime.state.status_messages))
        script = sublime.state.clipboard + (
            'printf "%s|%s|%s" "$GEMINI_CLI_IDE_SERVER_PORT" '
            '"$GEMINI_CLI_IDE_WORKSPACE_PATH" "$GEMINI_CLI_IDE_AUTH_TOKEN"\n')
        out = subprocess.run(["sh", "-c", script], stdout=subprocess.PIPE,
                             check=True).stdout.decode()
        self.assertEqual(out, "%s|%s|%s" % (session.port, self.project, session.auth_token))

    def test_export_lines_survive_awkward_values(self):
        value = "it's a \"path\" with $dollars; and spaces"
        script = self.plugin.export_lines({"X_TEST": value}, platform="linux")
        out = subprocess.run(["sh", "-c", script + 'printf "%s" "$X_TEST"'],
                             stdout=subprocess.PIPE, check=True).stdout.decode()
        self.assertEqual(out, value)
        self.assertEqual(self.plugin.export_lines({"A": "it's"}, platform="windows"),
                         "$env:A = 'it''s'\n")


class StatusCommandTest(PluginTestCase):

    def test_status_command_shows_port_workspace_and_sessions(self):
        session = self.ready()
        self.cli()
        self.pump_until(lambda: session.connected_clients == 1)
        self.window.run_command("gemini_status")
        self.pump_until(lambda: sublime.state.message_dialogs)
        text = sublime.state.message_dialogs[-1]
        self.assertIn("Gemini CLI sessions: 1", text)
        self.assertIn("Port: %s" % session.port, text)
        self.assertIn(self.project, text)
        self.assertIn(session.discovery_file, text)


class DoctorCommandTest(PluginTestCase):

    def test_doctor_shows_the_findings_for_a_cli_started_from_this_window(self):
        session = self.ready()
        self.window.run_command("gemini_doctor")
        self.pump_until(lambda: sublime.state.message_dialogs)
        text = sublime.state.message_dialogs[-1]
        self.assertIn("Gemini Companion: Doctor", text)
        self.assertIn("MCP initialize on 127.0.0.1:%s with the file's token succeeded" % session.port, text)
        self.assertIn("would connect (/ide status: Connected)", text)


if __name__ == "__main__":
    unittest.main()
