"""The editor tools: the sidecar's editor/* requests, answered by plugin.py.

plugin.py runs on the stand-in ``sublime`` modules, whose windows index a
project's files the way Sublime's symbol index does (definitions and calls,
1-based rows and columns in characters), and, where a test says so, with a
stand-in for the LSP package's registry (tests/fake_lsp: language servers'
published diagnostics, LSP positions). The test plays the sidecar
(fake_sidecar: the plugin starts a relay as its sidecar) and sends what the
real one sends when a model calls a tool; it checks the answers the model
would read: paths, 1-based lines and character columns (on a line where an
emoji and an accented letter come before the symbol, so UTF-16 units, bytes
and characters all differ), the line's text, the errors' messages.
"""

import itertools
import json
import os
import queue
import subprocess
import sys
import threading
import unittest

import support
from fake_sidecar import FakeSidecar, write_relay

sublime, sublime_plugin = support.fake_modules()

SETTINGS = "Gemini Companion.sublime-settings"
FAKE_LSP = os.path.join(support.TESTS_DIR, "fake_lsp")

MAIN_GO = (
    "package main\n"
    "\n"
    "import \"fmt\"\n"
    "\n"
    "func main() {\n"
    "\tmsg := Greet(\"😀é\") + Greet(\"x\")\n"
    "\tfmt.Println(msg)\n"
    "}\n")
GREET_GO = (
    "package main\n"
    "\n"
    "// Greet says hello.\n"
    "func Greet(name string) string {\n"
    "\treturn \"hello \" + name\n"
    "}\n")
# The second Greet on line 6: character 23 (code points); UTF-16 column 24.
SECOND_GREET = 23

NOT_AVAILABLE, INVALID_PARAMS = -32010, -32602


class EditorToolsTest(unittest.TestCase):

    def setUp(self):
        sublime.state.reset()
        self.tmp = support.TempDir()
        self.addCleanup(self.tmp.cleanup)
        self.workspace = self.tmp.join("workspace")
        self.main = self.tmp.write("workspace/main.go", MAIN_GO)
        self.greet = self.tmp.write("workspace/greet.go", GREET_GO)
        self.sidecar = FakeSidecar(sublime.pump)
        settings = sublime.load_settings(SETTINGS)
        settings.set("binary", write_relay(self.tmp.path))
        settings.set("env", self.sidecar.env())
        settings.set("auto_start", True)
        self.window = sublime.add_window([self.workspace])
        self.plugin = support.load_plugin()
        self.plugin.console = lambda text: None
        sublime_plugin.load_plugin(self.plugin)
        self.conn = self.sidecar.accept()
        self.init = self.conn.expect("initialize")
        self.conn.answer(self.init, {"port": 1, "env": {}, "discoveryFile": "",
                                     "capabilities": {"editorTools": True}})
        self.ids = itertools.count(100)

    def tearDown(self):
        sublime_plugin.unload_plugin(self.plugin)
        pids = [c.pid for c in self.sidecar.connections]
        self.sidecar.close()
        for pid in pids:
            support.wait_until(lambda: not support.pid_alive(pid))
        for name in [m for m in sys.modules if m == "LSP" or m.startswith("LSP.")]:
            del sys.modules[name]
        if FAKE_LSP in sys.path:
            sys.path.remove(FAKE_LSP)
        self.assertEqual(sublime.state.errors, [], "plugin callbacks raised")
        self.assertEqual(sublime.state.thread_violations, [], "Sublime API used off the UI thread")

    def call(self, method, params):
        """Send an editor/* request as the sidecar does; (result, error)."""
        request_id = next(self.ids)
        self.conn.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        while True:
            message = self.conn.recv()
            if message.get("id") == request_id and "method" not in message:
                return message.get("result"), message.get("error")

    def ok(self, method, params):
        result, error = self.call(method, params)
        self.assertIsNone(error, "%s answered an error" % method)
        return result

    def error(self, method, params, code):
        result, error = self.call(method, params)
        self.assertIsNone(result, "%s answered %r" % (method, result))
        self.assertEqual(error["code"], code, error)
        return error["message"]

    def at(self, path, line, character, **extra):
        return dict({"path": path, "line": line, "character": character, "maxResults": 200}, **extra)

    def open(self, path):
        view = self.window.open_file(path)
        sublime.pump()
        return view

    # ------------------------------------------------------------ handshake

    def test_initialize_declares_the_tools_sublime_answers(self):
        caps = self.init["params"]["capabilities"]
        for feature in ("diagnostics", "definition", "references", "documentSymbols",
                        "workspaceSymbols", "openEditors", "openFile"):
            self.assertIs(caps.get(feature), True, feature)
        self.assertFalse(caps.get("hover"), "Sublime Text has no hover text of its own")

    # ---------------------------------------------- definitions, references

    def test_definition_of_a_name_after_an_emoji_is_found_in_the_index(self):
        result = self.ok("editor/getDefinition", self.at(self.main, 6, SECOND_GREET + 2))
        self.assertEqual(result["locations"], [{
            "path": self.greet,
            "range": {"start": {"line": 4, "character": 6}, "end": {"line": 4, "character": 11}},
            "text": "func Greet(name string) string {"}])

    def test_references_give_character_columns_and_the_lines_text(self):
        result = self.ok("editor/getReferences", self.at(self.greet, 4, 6))
        starts = [(l["path"], l["range"]["start"]["line"], l["range"]["start"]["character"],
                   l["range"]["end"]["character"]) for l in result["locations"]]
        self.assertEqual(starts, [(self.main, 6, 9, 14), (self.main, 6, SECOND_GREET, SECOND_GREET + 5)])
        self.assertEqual(result["locations"][1]["text"], "\tmsg := Greet(\"😀é\") + Greet(\"x\")")
        self.assertNotIn("truncated", result)

    def test_an_open_files_unsaved_text_wins_over_the_index(self):
        view = self.open(self.main)
        view.user_type("// moved down\n", at=0)
        result = self.ok("editor/getReferences", self.at(self.greet, 4, 6))
        lines = sorted({l["range"]["start"]["line"] for l in result["locations"]})
        self.assertEqual(lines, [7], "references in an edited buffer are where the buffer has them")
        self.assertEqual(result["locations"][0]["text"], "\tmsg := Greet(\"😀é\") + Greet(\"x\")")

    def test_results_stop_at_max_results_and_say_so(self):
        result = self.ok("editor/getReferences", self.at(self.greet, 4, 6, maxResults=1))
        self.assertEqual(len(result["locations"]), 1)
        self.assertIs(result["truncated"], True)

    def test_bad_positions_get_clear_errors(self):
        message = self.error("editor/getDefinition", self.at(self.main, 900, 1), INVALID_PARAMS)
        self.assertEqual(message, "line 900 is past the end of main.go (8 lines)")
        message = self.error("editor/getDefinition", self.at(self.main, 0, 1), INVALID_PARAMS)
        self.assertEqual(message, "line must be 1 or more")
        message = self.error("editor/getDefinition", self.at(self.main, 6, 80), INVALID_PARAMS)
        self.assertIn("past the end of line 6", message)
        message = self.error("editor/getDefinition", self.at(self.main, 2, 1), INVALID_PARAMS)
        self.assertEqual(message, "main.go:2:1 is not on a name")
        message = self.error("editor/getDefinition", self.at("main.go", 1, 1), INVALID_PARAMS)
        self.assertIn("absolute", message)
        message = self.error("editor/getReferences", self.at(self.tmp.join("workspace/gone.go"), 1, 1),
                             INVALID_PARAMS)
        self.assertIn("does not exist", message)

    # ---------------------------------------------------------------- outlines

    def test_document_symbols_of_an_open_file(self):
        self.open(self.greet)
        result = self.ok("editor/getDocumentSymbols", {"path": self.greet, "maxResults": 200})
        self.assertEqual(result["symbols"], [{
            "name": "Greet", "kind": "function",
            "range": {"start": {"line": 4, "character": 6}, "end": {"line": 4, "character": 6}}}])

    def test_document_symbols_of_a_file_that_is_not_open_say_to_open_it(self):
        message = self.error("editor/getDocumentSymbols", {"path": self.greet, "maxResults": 200},
                             NOT_AVAILABLE)
        self.assertIn("greet.go is not open", message)
        self.assertIn("openFile", message)

    def test_workspace_symbols_exact_from_the_index_and_partial_from_open_files(self):
        result = self.ok("editor/searchWorkspaceSymbols", {"query": "Greet", "maxResults": 200})
        self.assertEqual([(s["name"], s["kind"], s["path"], s["range"]["start"]) for s in result["symbols"]],
                         [("Greet", "function", self.greet, {"line": 4, "character": 6})])
        self.assertEqual(self.ok("editor/searchWorkspaceSymbols", {"query": "gree", "maxResults": 200})["symbols"], [])
        self.open(self.greet)
        result = self.ok("editor/searchWorkspaceSymbols", {"query": "gree", "maxResults": 200})
        self.assertEqual([(s["name"], s["path"]) for s in result["symbols"]], [("Greet", self.greet)])
        message = self.error("editor/searchWorkspaceSymbols", {"query": "x" * 257, "maxResults": 200},
                             INVALID_PARAMS)
        self.assertIn("256", message)

    # -------------------------------------------------------------- diagnostics

    def test_without_the_lsp_package_diagnostics_say_what_to_install(self):
        message = self.error("editor/getDiagnostics", {"path": self.main, "maxResults": 200}, NOT_AVAILABLE)
        self.assertIn("install the LSP package", message)
        self.assertIn("main.go", message)

    def test_the_lsp_packages_diagnostics_with_character_columns(self):
        sys.path.insert(0, FAKE_LSP)
        from LSP.plugin.core.registry import windows
        message = self.error("editor/getDiagnostics", {"maxResults": 200}, NOT_AVAILABLE)
        self.assertIn("no language server running", message)
        gopls = windows.start_server(self.window, "gopls")
        gopls.diagnostics.add_diagnostics_async("file://" + self.main, [{
            "range": {"start": {"line": 5, "character": SECOND_GREET},
                      "end": {"line": 5, "character": SECOND_GREET + 5}},
            "severity": 1, "source": "compiler", "code": "WrongArgCount",
            "message": "too many arguments in call to Greet"}])
        gopls.diagnostics.add_diagnostics_async("file://" + self.greet, [{
            "range": {"start": {"line": 3, "character": 5}, "end": {"line": 3, "character": 10}},
            "severity": 2, "source": "unusedfunc", "message": "Greet could be unexported"}])
        result = self.ok("editor/getDiagnostics", {"maxResults": 200})
        self.assertEqual(result["diagnostics"], [
            {"path": self.main, "severity": "error", "source": "compiler", "code": "WrongArgCount",
             "message": "too many arguments in call to Greet",
             "range": {"start": {"line": 6, "character": SECOND_GREET},
                       "end": {"line": 6, "character": SECOND_GREET + 5}}},
            {"path": self.greet, "severity": "warning", "source": "unusedfunc",
             "message": "Greet could be unexported",
             "range": {"start": {"line": 4, "character": 6}, "end": {"line": 4, "character": 11}}}])
        only_errors = self.ok("editor/getDiagnostics", {"severity": "error", "maxResults": 200})
        self.assertEqual([d["path"] for d in only_errors["diagnostics"]], [self.main])
        one_file = self.ok("editor/getDiagnostics", {"path": self.greet, "maxResults": 200})
        self.assertEqual([d["path"] for d in one_file["diagnostics"]], [self.greet])
        cut = self.ok("editor/getDiagnostics", {"maxResults": 1})
        self.assertEqual((len(cut["diagnostics"]), cut.get("truncated")), (1, True))

    # -------------------------------------------------- open editors, openFile

    def test_open_editors_active_first_with_cursor_selection_and_unsaved_changes(self):
        main = self.open(self.main)
        main.user_select(sublime.Region(main.text_point(5, 8), main.text_point(5, 20)))
        greet = self.open(self.greet)
        greet.user_type("// edited\n", at=0)
        sublime.pump()
        result = self.ok("editor/getOpenEditors", {"maxResults": 200})
        self.assertEqual(result["editors"], [
            {"path": self.greet, "active": True, "dirty": True, "cursor": {"line": 2, "character": 1}},
            {"path": self.main,
             "cursor": {"line": 6, "character": 21},
             "selection": {"start": {"line": 6, "character": 9}, "end": {"line": 6, "character": 21}},
             "selectedText": "Greet(\"😀é\") "}])

    def test_open_file_shows_and_selects_the_lines(self):
        self.ok("editor/openFile", {"path": self.greet, "line": 4, "endLine": 5})
        view = self.window.active_view()
        self.assertEqual(view.file_name(), self.greet)
        selected = view.substr(view.sel()[0])
        self.assertEqual(selected, "func Greet(name string) string {\n\treturn \"hello \" + name")
        message = self.error("editor/openFile", {"path": self.main, "line": 90}, INVALID_PARAMS)
        self.assertEqual(message, "line 90 is past the end of main.go (8 lines)")


class ToolsServer(object):
    """``gemini-ide-companion tools`` as an agent runs it (a stdio MCP server,
    newline-delimited JSON-RPC), started with the terminal environment the
    plugin gives Gemini CLI; replies are read on a thread so the test can
    keep running Sublime's UI loop meanwhile."""

    def __init__(self, binary, env, cwd):
        self.proc = subprocess.Popen([binary, "tools"], cwd=cwd, env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.replies = queue.Queue()
        self.ids = itertools.count(1)
        threading.Thread(target=self._read, daemon=True).start()
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "test-agent", "version": "1"}})
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _read(self):
        for line in iter(self.proc.stdout.readline, b""):
            message = json.loads(line.decode("utf-8"))
            if "id" in message and "method" not in message:
                self.replies.put(message)

    def _send(self, message):
        self.proc.stdin.write((json.dumps(message) + "\n").encode("utf-8"))
        self.proc.stdin.flush()

    def request(self, method, params):
        request_id = next(self.ids)
        self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        box = []
        if not sublime.run_until(lambda: box or self._take(box), timeout=20):
            raise AssertionError("no answer to %s within 20 s" % method)
        return box[0]

    def _take(self, box):
        try:
            box.append(self.replies.get_nowait())
        except queue.Empty:
            return False
        return True

    def call(self, tool, arguments):
        """(text the model reads, isError)."""
        result = self.request("tools/call", {"name": tool, "arguments": arguments})["result"]
        return result["content"][0]["text"], bool(result.get("isError"))

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(10)
        self.proc.stdout.close()


class ThroughTheRealSidecarTest(unittest.TestCase):
    """An agent's call through ``gemini-ide-companion tools`` and the real
    sidecar reaches the plugin, and the model reads its answer."""

    def setUp(self):
        sublime.state.reset()
        self.tmp = support.TempDir()
        self.addCleanup(self.tmp.cleanup)
        self.workspace = self.tmp.join("workspace")
        self.main = self.tmp.write("workspace/main.go", MAIN_GO)
        self.greet = self.tmp.write("workspace/greet.go", GREET_GO)
        settings = sublime.load_settings(SETTINGS)
        settings.set("binary", support.sidecar_binary())
        settings.set("env", {"TMPDIR": self.tmp.path})
        settings.set("log_level", "warn")
        settings.set("auto_start", True)
        self.window = sublime.add_window([self.workspace])
        self.plugin = support.load_plugin()
        self.plugin.console = lambda text: None
        sublime_plugin.load_plugin(self.plugin)
        session = self.plugin._sessions[self.window.id()]
        self.assertTrue(sublime.run_until(lambda: session.state == "ready", timeout=20), session.last_error)
        self.pid = session.sidecar_pid
        env = dict(os.environ, TMPDIR=self.tmp.path, **session.env)
        self.tools = ToolsServer(support.sidecar_binary(), env, self.workspace)

    def tearDown(self):
        self.tools.close()
        sublime_plugin.unload_plugin(self.plugin)
        support.wait_until(lambda: not support.pid_alive(self.pid))
        self.assertEqual(sublime.state.errors, [], "plugin callbacks raised")
        self.assertEqual(sublime.state.thread_violations, [], "Sublime API used off the UI thread")

    def test_the_model_reads_the_definition_sublime_found(self):
        text, is_error = self.tools.call("getDefinition", {"path": self.main, "line": 6, "character": SECOND_GREET})
        self.assertFalse(is_error, text)
        locations = json.loads(text)["locations"]
        self.assertEqual([(l["path"], l["range"]["start"], l.get("text")) for l in locations],
                         [(self.greet, {"line": 4, "character": 6}, "func Greet(name string) string {")])

    def test_the_model_is_told_what_sublime_cannot_answer(self):
        text, is_error = self.tools.call("getDiagnostics", {"path": self.main})
        self.assertTrue(is_error)
        self.assertIn("install the LSP package", text)
        text, is_error = self.tools.call("getHover", {"path": self.main, "line": 6, "character": SECOND_GREET})
        self.assertTrue(is_error)
        self.assertIn("Sublime Text", text)
        self.assertIn("hover", text)


if __name__ == "__main__":
    unittest.main()
