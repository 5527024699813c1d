"""Session's answers to bad input from a sidecar.

The real sidecar validates what it sends, so these use a stand-in child that
completes initialize and then sends malformed ``diff/open`` / ``diff/close``
requests and a method nobody knows. The session must answer each with a
JSON-RPC error and carry on; nothing may raise.
"""

import json
import os
import sys
import unittest

import support
from fake_sidecar import FakeSidecar, write_relay
from gemini_companion import session as sessionmod

STAND_IN = r"""
import json, sys
def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n"); sys.stdout.flush()
def report(msg):
    sys.stderr.write("GOT " + json.dumps(msg) + "\n"); sys.stderr.flush()
init = json.loads(sys.stdin.readline())
send({"jsonrpc": "2.0", "id": init["id"], "result": {
    "port": 1, "authToken": "t", "idePid": 1, "discoveryFile": "", "env": {"A": "1"},
    "serverVersion": "test", "pid": 0}})
send({"jsonrpc": "2.0", "id": "a", "method": "diff/open", "params": {"filePath": "rel/x.py", "newContent": "x"}})
send({"jsonrpc": "2.0", "id": "b", "method": "diff/open", "params": {"filePath": "/abs/x.py", "newContent": 5}})
send({"jsonrpc": "2.0", "id": "c", "method": "diff/open", "params": "nonsense"})
send({"jsonrpc": "2.0", "id": "d", "method": "diff/close", "params": {}})
send({"jsonrpc": "2.0", "id": "e", "method": "editor/explode", "params": {}})
send({"jsonrpc": "2.0", "method": "status", "params": {"connectedClients": "many"}})
send({"jsonrpc": "2.0", "method": "log", "params": {"level": "info"}})
send({"jsonrpc": "2.0", "id": "f", "method": "diff/close", "params": {"filePath": "/abs/none.py"}})
for line in sys.stdin:
    report(json.loads(line))
"""


class Host(support.QueueHost):
    """A session host whose diff views are only recorded."""

    def __init__(self):
        support.QueueHost.__init__(self)
        self.opened = []

    def open_diff_view(self, path, new, original, title):
        self.opened.append(path)
        return len(self.opened)

    def diff_view_text(self, handle):
        return None

    def close_diff_view(self, handle):
        pass

    def mark_diff_detached(self, handle):
        pass


class SessionBadInputTest(unittest.TestCase):
    def test_malformed_requests_get_errors_and_nothing_breaks(self):
        tmp = support.TempDir()
        self.addCleanup(tmp.cleanup)
        script = tmp.write("standin.py", STAND_IN)
        wrapper = tmp.write("standin", "#!/bin/sh\nexec %s %s\n" % (sys.executable, script))
        os.chmod(wrapper, 0o755)
        host = Host()
        session = sessionmod.Session(host, {"binary": wrapper, "restart": False})
        session.start(["/abs"])
        self.addCleanup(session.stop)

        def answers():
            got = {}
            for line in host.logs:
                if "GOT " in line:
                    msg = json.loads(line.split("GOT ", 1)[1])
                    if "id" in msg and "method" not in msg:
                        got[msg["id"]] = msg
            return got
        self.assertTrue(host.run_until(lambda: len(answers()) >= 6), host.logs)
        got = answers()
        for request_id in "abcd":
            self.assertEqual(got[request_id]["error"]["code"], -32602, got[request_id])
        self.assertIn("filePath", got["a"]["error"]["message"])
        self.assertIn("newContent", got["b"]["error"]["message"])
        self.assertEqual(got["e"]["error"]["code"], -32601)
        self.assertIn("editor/explode", got["e"]["error"]["message"])
        self.assertEqual(got["f"]["result"], {"content": None})
        self.assertEqual(host.opened, [])
        self.assertEqual(session.state, "ready")
        self.assertEqual(session.connected_clients, 0)
        self.assertEqual(session.env, {"A": "1"})

    def test_a_session_remembers_a_bounded_number_of_recent_files(self):
        session = sessionmod.Session(Host(), {})
        for i in range(40):
            session.file_focused("/p/f%d.py" % i, {"line": 1, "character": 1})
        session.file_focused("/p/f5.py")          # gone already: remembered again
        tracked = session.tracked_files()
        self.assertEqual(len(tracked), sessionmod.REMEMBERED_FILES)
        self.assertEqual(tracked[-1], "/p/f5.py")
        self.assertEqual(tracked[-2], "/p/f39.py")
        session.file_renamed("/p/f39.py", "/p/g39.py")
        session.file_closed("/p/f38.py")
        session.file_focused("relative/path.py")  # ignored
        tracked = session.tracked_files()
        self.assertIn("/p/g39.py", tracked)
        self.assertNotIn("/p/f38.py", tracked)
        self.assertNotIn("relative/path.py", tracked)

    def test_selections_are_cut_to_the_sidecars_byte_limit(self):
        tmp = support.TempDir()
        self.addCleanup(tmp.cleanup)
        host = Host()
        sidecar = FakeSidecar(host.pump)
        self.addCleanup(sidecar.close)
        session = sessionmod.Session(host, {"binary": write_relay(tmp.path), "env": sidecar.env()})
        self.addCleanup(session.stop, True)
        session.start(["/w"])
        conn = sidecar.accept()
        # Before the sidecar has said otherwise, the built-in limit applies.
        self.assertEqual(session.selection_limit, 65552)
        conn.answer(conn.expect("initialize"), {"port": 1, "env": {}, "policy": {
            "limits": {"maxSelectionBytes": 10}}})
        self.assertTrue(host.run_until(lambda: session.state == "ready"))
        self.assertEqual(session.selection_limit, 10)
        cursor = {"line": 1, "character": 1}
        session.selection_changed("/w/a.txt", cursor, "abcdefgh\U0001F600xyz")
        # 8 bytes + a 4-byte emoji would be 12: the emoji is left out whole.
        self.assertEqual(conn.expect("context/selectionChanged")["params"]["selectedText"], "abcdefgh")
        session.file_focused("/w/b.txt", cursor, "\u00e9" * 20)
        self.assertEqual(conn.expect("context/fileFocused")["params"]["selectedText"], "\u00e9" * 5)
        session.selection_changed("/w/b.txt", {"line": 1, "character": 2}, "short")
        self.assertEqual(conn.expect("context/selectionChanged")["params"]["selectedText"], "short")

    def test_the_sidecars_json_log_lines_are_made_readable(self):
        line = json.dumps({"level": "warn", "time": "t", "message": "disk full",
                           "path": "/tmp/x", "n": 3})
        self.assertEqual(sessionmod.format_log_line(line),
                         "warn: disk full (n=3 path=/tmp/x)")
        self.assertEqual(sessionmod.format_log_line("plain text"), "plain text")
        self.assertEqual(sessionmod.format_log_line("[1,2]"), "[1,2]")


if __name__ == "__main__":
    unittest.main()
