"""Gemini CLI's own IDE client against the plugin and the real sidecar.

The terminal command is run exactly as Terminus would run it (the ``cmd``,
``cwd`` and ``env`` the plugin hands to ``terminus_open``), and what it runs
is cli_probe.mjs: the ``IdeClient`` from @google/gemini-cli-core 0.61.0, the
code ``gemini`` itself uses to find and talk to an IDE. Needs node and the
package installed under tests/node (``npm ci`` there); skipped, saying so,
without them.
"""

import json
import os
import queue
import shutil
import subprocess
import threading
import unittest

import support
from test_plugin import PluginTestCase, SETTINGS, sublime

CORE_DIR = os.environ.get("GEMINI_CLI_CORE_DIR") or os.path.join(
    support.REPO_ROOT, "tests", "node", "node_modules", "@google", "gemini-cli-core")
NODE = shutil.which("node")
PROBE = os.path.join(support.TESTS_DIR, "cli_probe.mjs")


@unittest.skipUnless(NODE and os.path.isdir(os.path.join(CORE_DIR, "dist")),
                     "needs node and @google/gemini-cli-core (npm ci in tests/node)")
class RealCliClientTest(PluginTestCase):

    def start_cli_in_terminal(self):
        """Gemini Companion: Open Gemini CLI in Terminal, with Terminus."""
        sublime.state.resources = ["Packages/Terminus/Terminus.sublime-settings"]
        sublime.load_settings(SETTINGS).set("terminal_command", [NODE, PROBE])
        self.window.run_command("gemini_open_terminal")
        self.ready()
        self.pump_until(lambda: any(c == "terminus_open" for c, _ in self.window.commands_run))
        args = [a for c, a in self.window.commands_run if c == "terminus_open"][0]
        env = dict(os.environ)
        env.update(args["env"])
        env.update({
            "TMPDIR": self.tmp.path,          # where this test's sidecar writes
            "HOME": self.tmp.join("home"),
            "GEMINI_CLI_CORE_DIR": CORE_DIR,
            # This machine has /.dockerenv; without this the CLI dials
            # host.docker.internal instead of 127.0.0.1.
            "SSH_CONNECTION": "127.0.0.1 1 127.0.0.1 22",
        })
        for name in ("GEMINI_CLI_IDE_SERVER_STDIO_COMMAND", "TERM_PROGRAM"):
            env.pop(name, None)
        os.makedirs(env["HOME"], exist_ok=True)
        proc = subprocess.Popen(args["cmd"], cwd=args["cwd"], env=env,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        self.addCleanup(self.stop_cli, proc)
        events = queue.Queue()

        def read():
            for line in proc.stdout:
                events.put(json.loads(line))
        t = threading.Thread(target=read)
        t.daemon = True
        t.start()
        return proc, events

    def stop_cli(self, proc):
        if proc.poll() is None:
            try:
                proc.stdin.write(b'{"cmd": "quit"}\n')
                proc.stdin.flush()
            except OSError:
                pass
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            stream.close()

    def next_event(self, events, kind, predicate=None, timeout=20.0):
        seen = []

        def poll():
            while True:
                try:
                    event = events.get_nowait()
                except queue.Empty:
                    return False
                seen.append(event)
                if event["event"] == kind and (predicate is None or predicate(event)):
                    box.append(event)
                    return True
        box = []
        ok = sublime.run_until(lambda: bool(box) or poll(), timeout=timeout)
        self.assertTrue(ok, "no %s event; saw %s" % (kind, json.dumps(seen)[:2000]))
        return box[0]

    def test_the_cli_connects_to_sublime_text_sees_context_and_gets_the_edited_diff(self):
        view = self.open(self.code)
        proc, events = self.start_cli_in_terminal()
        connected = self.next_event(events, "connected")
        self.assertEqual(connected["status"], "connected", connected)
        self.assertEqual(connected["displayName"], "Sublime Text")
        self.assertTrue(connected["diffing"])
        # CLI 0.61.0 registers its context handler only after its MCP client
        # has connected, so an update the companion sends the moment the
        # event stream opens can be missed; a caret move always arrives.
        view.user_select(sublime.Region(0, 6))

        def active_is_code(event):
            files = ((event["context"] or {}).get("workspaceState") or {}).get("openFiles") or []
            return any(f.get("isActive") and f["path"] == self.code
                       and f.get("selectedText") == "import" for f in files)
        self.next_event(events, "context", active_is_code)

        before = set(v.id() for v in self.window.views())
        proc.stdin.write((json.dumps({"cmd": "openDiff", "filePath": self.code,
                                      "newContent": "import sys\n"}) + "\n").encode())
        proc.stdin.flush()
        self.pump_until(lambda: len(self.window.views()) > len(before), timeout=20)
        diff = [v for v in self.window.views() if v.id() not in before][0]
        self.assertEqual(diff.text(), "import sys\n")
        diff.user_type("# ok\n", at=0)
        diff.run_command("gemini_accept_diff")
        result = self.next_event(events, "diff")["result"]
        self.assertEqual(result, {"status": "accepted", "content": "# ok\nimport sys\n"})
        self.pump_until(lambda: diff not in self.window.views())


if __name__ == "__main__":
    unittest.main()
