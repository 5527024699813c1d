"""The editor link (gemini_companion.link) against the real sidecar binary,
with a small MCP client playing Gemini CLI."""

import json
import os
import queue
import sys
import threading
import unittest

import support
from gemini_companion import link as linkmod
from mcp_client import McpClient


class Recorder(object):
    """Collects what the sidecar sends to the plugin."""

    def __init__(self):
        self.messages = queue.Queue()
        self.exits = queue.Queue()

    def on_message(self, method, params, request_id):
        self.messages.put((method, params, request_id))

    def on_exit(self, code):
        self.exits.put(code)

    def next(self, method, timeout=10.0):
        while True:
            m = self.messages.get(timeout=timeout)
            if m[0] == method:
                return m


class SidecarLinkTest(unittest.TestCase):
    def setUp(self):
        self.tmp = support.TempDir()
        self.workspace = self.tmp.join("project")
        os.makedirs(self.workspace)
        env = dict(os.environ, TMPDIR=self.tmp.path)
        self.rec = Recorder()
        self.link = linkmod.Link([support.sidecar_binary(), "--stdio"], env=env,
                                 on_message=self.rec.on_message,
                                 on_exit=self.rec.on_exit).start()
        self.clients = []

    def tearDown(self):
        for c in self.clients:
            c.close()
        self.link.close()
        self.tmp.cleanup()

    def initialize(self, folders=None):
        return self.link.request("initialize", {
            "protocolVersion": 1,
            "ide": {"name": "sublimetext", "displayName": "Sublime Text"},
            "processId": os.getpid(),
            "workspaceFolders": [self.workspace] if folders is None else folders,
        })

    def cli(self, result):
        client = McpClient.from_discovery_file(result["discoveryFile"])
        self.clients.append(client)
        client.connect()
        return client

    def test_initialize_writes_a_discovery_file_naming_sublime_text(self):
        result = self.initialize()
        path = result["discoveryFile"]
        self.assertTrue(os.path.isfile(path), path)
        self.assertTrue(path.startswith(os.path.join(self.tmp.path, "gemini", "ide")))
        with open(path, encoding="utf-8") as f:
            info = json.load(f)
        self.assertEqual(info["ideInfo"]["displayName"], "Sublime Text")
        self.assertEqual(info["ideInfo"]["name"], "sublimetext")
        self.assertEqual(info["port"], result["port"])
        self.assertEqual(info["workspacePath"], self.workspace)
        self.assertEqual(info["authToken"], result["authToken"])
        self.assertEqual(result["env"]["GEMINI_CLI_IDE_SERVER_PORT"], str(result["port"]))
        self.assertEqual(result["env"]["GEMINI_CLI_IDE_WORKSPACE_PATH"], self.workspace)
        self.assertEqual(result["pid"], self.link.pid)

    def test_bad_initialize_gets_a_clear_error_and_the_link_stays_up(self):
        with self.assertRaises(linkmod.RemoteError) as caught:
            self.link.request("initialize", {"protocolVersion": 99, "ide": {
                "name": "sublimetext", "displayName": "Sublime Text"}})
        self.assertEqual(caught.exception.code, linkmod.INVALID_PARAMS)
        self.assertIn("protocolVersion", caught.exception.message)
        self.assertTrue(self.link.alive)
        self.assertTrue(os.path.isfile(self.initialize()["discoveryFile"]))

    def test_a_connecting_cli_is_reported_and_sees_both_diff_tools(self):
        result = self.initialize()
        client = self.cli(result)
        method, params, _ = self.rec.next("status")
        self.assertEqual(params["connectedClients"], 1)
        names = {t["name"] for t in client.list_tools()}
        self.assertTrue({"openDiff", "closeDiff"} <= names, names)
        client.close()
        self.assertEqual(self.rec.next("status")[1]["connectedClients"], 0)

    def test_context_from_the_plugin_reaches_the_cli(self):
        result = self.initialize()
        client = self.cli(result)
        path = os.path.join(self.workspace, "a.py")
        with open(path, "w") as f:
            f.write("print('a😀b')\n")
        self.link.notify("context/fileFocused", {
            "path": path, "cursor": {"line": 1, "character": 10},
            "selectedText": "😀"})
        update = client.wait_for("ide/contextUpdate", lambda p: any(
            f["path"] == path and f.get("isActive") for f in
            p["workspaceState"]["openFiles"]))
        self.assertIsNotNone(update, client.notifications)
        active = [f for f in update["params"]["workspaceState"]["openFiles"]
                  if f.get("isActive")][0]
        self.assertEqual(active["cursor"], {"line": 1, "character": 10})
        self.assertEqual(active["selectedText"], "😀")

    def test_open_diff_waits_for_the_plugin_and_acceptance_reaches_the_cli(self):
        result = self.initialize()
        client = self.cli(result)
        target = os.path.join(self.workspace, "new.txt")
        answer = {}

        def call():
            answer["result"] = client.call_tool(
                "openDiff", {"filePath": target, "newContent": "proposed\n"})
        t = threading.Thread(target=call)
        t.start()
        method, params, request_id = self.rec.next("diff/open")
        self.assertEqual(params["filePath"], target)
        self.assertEqual(params["newContent"], "proposed\n")
        self.assertIsNone(params["originalContent"])   # the file does not exist
        self.assertIsNotNone(request_id)
        self.link.respond(request_id, {})
        t.join(15)
        self.assertFalse(t.is_alive())
        self.assertEqual(answer["result"]["content"], [])
        self.assertFalse(answer["result"].get("isError", False))
        self.link.notify("diff/accepted", {"filePath": target, "content": "edited\n"})
        accepted = client.wait_for("ide/diffAccepted")
        self.assertEqual(accepted["params"], {"filePath": target, "content": "edited\n"})
        # The companion does not write the file; the CLI does.
        self.assertFalse(os.path.exists(target))

    def test_an_error_answer_to_diff_open_makes_the_tool_fail(self):
        result = self.initialize()
        client = self.cli(result)
        answer = {}

        def call():
            answer["result"] = client.call_tool("openDiff", {
                "filePath": os.path.join(self.workspace, "x.txt"), "newContent": "x"})
        t = threading.Thread(target=call)
        t.start()
        _, _, request_id = self.rec.next("diff/open")
        self.link.respond_error(request_id, linkmod.INTERNAL_ERROR, "no window for it")
        t.join(15)
        self.assertTrue(answer["result"].get("isError"))
        self.assertIn("no window for it", answer["result"]["content"][0]["text"])

    def test_shutdown_removes_the_discovery_file_and_exits_cleanly(self):
        path = self.initialize()["discoveryFile"]
        self.link.close()
        self.assertEqual(self.rec.exits.get(timeout=10), 0)
        self.assertFalse(os.path.exists(path))
        with self.assertRaises(linkmod.LinkClosed):
            self.link.notify("context/fileClosed", {"path": path})


CHILD = r"""
import sys, json
out = sys.stdout
out.write("this is not json\n")
out.write("[1, 2, 3]\n")
out.write('{"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "x"}}\n')
out.write(json.dumps({"jsonrpc": "2.0", "id": 7, "method": "diff/open",
                      "params": {"filePath": "/x", "newContent": "ü"}}) + "\n")
out.flush()
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("method") == "hang":
        continue
    if msg.get("method") == "quit":
        sys.exit(3)
    if "id" in msg and "method" in msg:
        out.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"],
                              "result": {"echo": msg.get("params")}}) + "\n")
    elif "id" in msg:
        out.write(json.dumps({"jsonrpc": "2.0", "method": "got",
                              "params": msg}) + "\n")
    out.flush()
"""


class LinkRobustnessTest(unittest.TestCase):
    """Behaviour the real sidecar cannot be made to show: a child that talks
    nonsense, never answers, or dies with requests pending."""

    def start(self):
        rec = Recorder()
        lines = []
        link = linkmod.Link([sys.executable, "-c", CHILD], on_message=rec.on_message,
                            on_exit=rec.on_exit, on_log=lines.append).start()
        self.addCleanup(link.kill)
        return link, rec, lines

    def test_garbage_lines_are_logged_and_skipped(self):
        link, rec, lines = self.start()
        method, params, request_id = rec.next("diff/open")
        self.assertEqual((params["newContent"], request_id), ("ü", 7))
        self.assertTrue(any("not JSON" in l for l in lines), lines)
        self.assertTrue(any("not a message" in l for l in lines), lines)
        self.assertTrue(any("rejected a message" in l for l in lines), lines)
        self.assertEqual(link.request("echo", {"a": "😀"}, timeout=10),
                         {"echo": {"a": "😀"}})
        link.respond(request_id, {})
        method, params, _ = rec.next("got")
        self.assertEqual(params, {"jsonrpc": "2.0", "id": 7, "result": {}})

    def test_a_request_without_answer_times_out(self):
        link, _, _ = self.start()
        with self.assertRaises(linkmod.RequestTimeout):
            link.request("hang", None, timeout=0.3)
        self.assertTrue(link.alive)

    def test_pending_requests_fail_when_the_child_exits(self):
        link, rec, _ = self.start()
        errors = queue.Queue()
        link.request_async("hang", None, lambda r, e: errors.put(e))
        link.notify("quit")
        self.assertEqual(rec.exits.get(timeout=10), 3)
        self.assertIsInstance(errors.get(timeout=10), linkmod.LinkClosed)
        self.assertFalse(link.alive)

    def test_values_that_are_not_json_are_refused_before_sending(self):
        link, _, _ = self.start()
        with self.assertRaises(ValueError):
            link.notify("x", {"bad": object()})
        self.assertEqual(link.request("still", 1, timeout=10), {"echo": 1})

    def test_a_missing_binary_is_an_oserror(self):
        with self.assertRaises(OSError):
            linkmod.Link([os.path.join(support.TESTS_DIR, "no-such-binary")]).start()


if __name__ == "__main__":
    unittest.main()
