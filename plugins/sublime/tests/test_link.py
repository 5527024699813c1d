"""The editor link (gemini_companion.link): the plugin's transport and
lifecycle, against the real sidecar binary (with a small MCP client playing
Gemini CLI) and against a sidecar the test plays (fake_sidecar) for what the
real one cannot be made to do: die on cue, talk nonsense, never answer,
advise another restart policy."""

import json
import os
import time
import unittest

import support
from fake_sidecar import FakeSidecar, write_relay
from gemini_companion import link as linkmod
from mcp_client import McpClient


class LinkCase(unittest.TestCase):
    def setUp(self):
        self.tmp = support.TempDir()
        self.addCleanup(self.tmp.cleanup)
        self.host = support.QueueHost()
        self.events = []

    def make_link(self, binary, env=None):
        link = linkmod.Link(self.host, {
            "binary": binary, "env": dict(env or {}, TMPDIR=self.tmp.path),
            "log_level": "warn"})
        for event in ("@ready", "@exit", "@state"):
            link.on(event, lambda *args, event=event: self.events.append(event))
        self.addCleanup(link.stop, True)
        return link

    def until(self, predicate, timeout=10.0, message=None):
        self.assertTrue(self.host.run_until(predicate, timeout), message)

    def request(self, link, method, params=None, timeout_ms=10000):
        box = {}
        link.request(method, params, lambda r, e: box.update(result=r, error=e), timeout_ms)
        self.until(lambda: box, 15)
        return box["result"], box["error"]


class RealSidecarTest(LinkCase):

    def start(self, folders):
        link = self.make_link(support.sidecar_binary())
        link.start(folders)
        self.until(lambda: link.state == linkmod.READY,
                   message="not ready: %r %r" % (link.last_error, self.host.logs[-5:]))
        return link

    def test_initialize_v2_names_sublime_text_and_takes_the_sidecars_policy(self):
        workspace = self.tmp.join("project")
        os.makedirs(workspace)
        link = self.start([workspace])
        info = link.info
        self.assertEqual(info["protocolVersion"], 2)
        with open(info["discoveryFile"], encoding="utf-8") as f:
            discovery = json.load(f)
        self.assertEqual(discovery["ideInfo"], {"name": "sublimetext", "displayName": "Sublime Text"})
        self.assertEqual(discovery["workspacePath"], workspace)
        self.assertEqual(link.pid, info["pid"])
        self.assertEqual(link.env["GEMINI_CLI_IDE_SERVER_PORT"], str(info["port"]))
        self.assertTrue(link.capabilities.get("terminalEnv"), link.capabilities)
        self.assertEqual(link.policy["restart"], info["policy"]["restart"])
        self.assertEqual(link.limit("maxSelectionBytes"),
                         info["policy"]["limits"]["maxSelectionBytes"])
        # The sidecar composes the texts, with this plugin's restart command.
        self.assertIn("Gemini Companion: Restart", link.message("gaveUp"))
        self.assertEqual(self.events[-2:], ["@ready", "@state"])

    def test_terminal_env_is_asked_each_time_and_follows_folder_changes(self):
        one, two = self.tmp.join("one"), self.tmp.join("two")
        os.makedirs(one)
        os.makedirs(two)
        link = self.start([one])
        got = []
        link.terminal_env(got.append)
        self.until(lambda: got)
        self.assertEqual(got[0]["GEMINI_CLI_IDE_WORKSPACE_PATH"], one)
        self.assertTrue(link.notify("workspace/foldersChanged", {"workspaceFolders": [one, two]}))
        both = os.pathsep.join([one, two])
        # workspace/envChanged: the link takes the new environment.
        self.until(lambda: link.env.get("GEMINI_CLI_IDE_WORKSPACE_PATH") == both)
        link.terminal_env(got.append)
        self.until(lambda: len(got) == 2)
        self.assertEqual(got[1]["GEMINI_CLI_IDE_WORKSPACE_PATH"], both)
        self.assertEqual(got[1]["GEMINI_CLI_IDE_SERVER_PORT"], str(link.info["port"]))

    def test_status_text_from_the_sidecar_follows_a_connecting_cli(self):
        link = self.start([])
        client = McpClient.from_discovery_file(link.info["discoveryFile"])
        self.addCleanup(client.close)
        client.connect()
        self.until(lambda: link.connected_clients == 1)
        connected = link.status_text
        self.assertTrue(connected, "the sidecar sent no status text")
        client.close()
        self.until(lambda: link.connected_clients == 0, timeout=15)
        self.assertNotEqual(link.status_text, connected)

    def test_unknown_requests_get_an_error_and_the_link_stays_up(self):
        link = self.start([])
        result, error = self.request(link, "editor/nonsense", {})
        self.assertEqual(error.code, linkmod.METHOD_NOT_FOUND)
        result, error = self.request(link, "status/get")
        self.assertIsNone(error)
        self.assertEqual(result["port"], link.info["port"])

    def test_stop_removes_the_discovery_file_and_ends_the_process(self):
        link = self.start([])
        path, pid = link.info["discoveryFile"], link.pid
        link.stop()
        self.assertTrue(support.wait_until(lambda: not support.pid_alive(pid)))
        self.assertFalse(os.path.exists(path))
        self.assertEqual(link.state, linkmod.STOPPED)
        self.assertFalse(link.notify("context/fileClosed", {"path": path}))
        result, error = self.request(link, "status/get")
        self.assertIsInstance(error, linkmod.LinkError)


POLICY = {
    "restart": {"delaysMs": [50, 600], "windowMs": 60000, "maxRestarts": 2},
    "limits": {"maxSelectionBytes": 10},
    "messages": {"restarting": "down: {reason}", "gaveUp": "gave up after {count} ({reason})",
                 "restarted": "back"},
}


class FakeSidecarTest(LinkCase):

    def setUp(self):
        LinkCase.setUp(self)
        self.sidecar = FakeSidecar(self.host.pump)
        self.addCleanup(self.sidecar.close)
        self.link = self.make_link(write_relay(self.tmp.path), self.sidecar.env())

    def ready(self, result=None):
        conn = self.sidecar.accept()
        init = conn.expect("initialize")
        conn.answer(init, dict({"port": 1, "env": {"A": "1"}, "discoveryFile": ""}, **(result or {})))
        self.until(lambda: self.link.state == linkmod.READY)
        return conn, init

    def test_initialize_says_version_2_capabilities_and_the_restart_command(self):
        self.link.start(["/w"])
        conn, init = self.ready()
        params = init["params"]
        self.assertEqual(params["protocolVersion"], 2)
        self.assertEqual(params["ide"], {"name": "sublimetext", "displayName": "Sublime Text",
                                         "restartCommand": "Gemini Companion: Restart"})
        self.assertEqual(params["workspaceFolders"], ["/w"])
        self.assertEqual(params["capabilities"], {
            "diff": True, "diffStates": True, "unifiedDiff": False, "selection": True,
            "terminal": True, "diagnostics": False, "agent": False})
        self.assertNotIn("isTrusted", params)

    def test_restarts_follow_the_sidecars_policy_and_show_its_messages(self):
        self.link.start([])
        conn, _ = self.ready({"policy": POLICY})
        self.assertEqual(self.link.limit("maxSelectionBytes"), 10)
        pid = conn.pid
        conn.close()
        self.until(lambda: "down: exit code 3" in self.host.announced, message=self.host.announced)
        died = time.monotonic()
        self.assertEqual(self.link.state, linkmod.RESTARTING)
        self.assertIn("@exit", self.events)
        conn, _ = self.ready()
        self.assertGreaterEqual(time.monotonic() - died, 0.05)
        self.assertNotEqual(conn.pid, pid)
        self.assertEqual(self.host.announced[-1], "back")
        conn.close()
        self.until(lambda: self.host.announced.count("down: exit code 3") == 2)
        died = time.monotonic()
        conn, _ = self.ready()     # the second delay of the policy
        self.assertGreaterEqual(time.monotonic() - died, 0.6)
        conn.close()
        self.until(lambda: self.link.state == linkmod.FAILED)
        self.assertEqual(self.link.last_error, "gave up after 3 (exit code 3)")
        self.assertEqual(self.host.announced[-1], "gave up after 3 (exit code 3)")
        self.host.pump(0.8)
        self.assertEqual(len(self.sidecar.connections), 3, "restarted after giving up")
        # Restart (the user's command) starts afresh.
        self.link.restart()
        self.ready()

    def test_before_the_first_initialize_the_built_in_policy_applies(self):
        # (test_plugin's CrashLoopTest follows the built-in policy to the end.)
        self.link.start([])
        self.sidecar.accept().close()       # dies before answering initialize
        default = linkmod.DEFAULT_POLICY["messages"]["restarting"]
        self.until(lambda: default.replace("{reason}", "exit code 3") in self.host.announced)
        self.assertEqual(self.link.state, linkmod.RESTARTING)
        self.ready()
        self.assertEqual(self.host.announced[-1], linkmod.DEFAULT_POLICY["messages"]["restarted"])
        self.assertEqual(self.host.errors, [])

    def test_status_log_and_env_changes_are_taken_as_sent(self):
        self.link.start([])
        conn, _ = self.ready()
        conn.send({"jsonrpc": "2.0", "method": "status",
                   "params": {"connectedClients": 2, "text": "Gemini: two of them"}})
        conn.send({"jsonrpc": "2.0", "method": "log",
                   "params": {"level": "warn", "message": "Reconnect with /ide enable."}})
        conn.send({"jsonrpc": "2.0", "method": "workspace/envChanged",
                   "params": {"env": {"B": "2"}, "discoveryFile": "/tmp/d.json"}})
        self.until(lambda: self.link.env == {"B": "2"})
        self.assertEqual((self.link.connected_clients, self.link.status_text), (2, "Gemini: two of them"))
        self.assertIn("Reconnect with /ide enable.", self.host.announced)
        self.assertEqual(self.link.info["discoveryFile"], "/tmp/d.json")

    def test_terminal_env_falls_back_to_the_last_env_when_unanswered(self):
        self.link.start([])
        conn, _ = self.ready()
        got = []
        self.link.terminal_env(got.append)
        request = conn.expect("terminal/env")
        conn.send({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": "no"}})
        self.until(lambda: got)
        self.assertEqual(got, [{"A": "1"}])
        self.link.terminal_env(got.append)
        conn.answer(conn.expect("terminal/env"), {"env": {"A": "2"}, "discoveryFile": "/d"})
        self.until(lambda: len(got) == 2)
        self.assertEqual(got[1], {"A": "2"})

    def test_nonsense_from_the_sidecar_is_logged_and_the_link_stays_up(self):
        self.link.start([])
        conn, _ = self.ready()
        calls = []
        self.link.on("editor/fails", lambda params: 1 / 0)
        self.link.on("editor/works", lambda params: calls.append(params) or {"ok": True})
        conn.send_raw(b"this is not json\n[1, 2]\n\xff\xfe\n\n")
        conn.send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "bad line"}})
        conn.send({"jsonrpc": "2.0", "id": 9999, "result": {}})     # answers nothing
        conn.send({"jsonrpc": "2.0", "method": "editor/unknownNotification", "params": {}})
        conn.send({"jsonrpc": "2.0", "id": "a", "method": "editor/unknown", "params": {}})
        conn.send({"jsonrpc": "2.0", "id": "b", "method": "editor/fails", "params": {}})
        conn.send({"jsonrpc": "2.0", "id": "c", "method": "editor/works", "params": {"x": "ü"}})
        answers = {}
        while len(answers) < 3:
            message = conn.recv()
            answers[message["id"]] = message
        self.assertEqual(answers["a"]["error"]["code"], linkmod.METHOD_NOT_FOUND)
        self.assertIn("editor/unknown", answers["a"]["error"]["message"])
        self.assertEqual(answers["b"]["error"]["code"], linkmod.INTERNAL_ERROR)
        self.assertEqual(answers["c"]["result"], {"ok": True})
        self.assertEqual(calls, [{"x": "ü"}])
        logs = "\n".join(self.host.logs)
        self.assertIn("not a message", logs)
        self.assertIn("bad line", logs)
        self.assertEqual(self.link.state, linkmod.READY)

    def test_requests_time_out_and_fail_when_the_sidecar_dies(self):
        self.link.start([])
        conn, _ = self.ready()
        result, error = self.request(self.link, "hang", None, timeout_ms=200)
        self.assertIn("no answer within 200 ms", str(error))
        box = {}
        self.link.request("hang", None, lambda r, e: box.update(error=e))
        conn.expect("hang")
        conn.expect("hang")
        conn.close()
        self.until(lambda: box)
        self.assertIsInstance(box["error"], linkmod.LinkError)
        self.assertIn("stopped", str(box["error"]))

    def test_stop_sends_shutdown_closes_stdin_and_never_restarts(self):
        self.link.start([])
        conn, _ = self.ready()
        self.link.stop()
        self.assertEqual(conn.expect("shutdown")["method"], "shutdown")
        conn.wait_closed()
        conn.close()
        self.host.pump(0.3)
        self.assertEqual(self.link.state, linkmod.STOPPED)
        self.assertEqual(len(self.sidecar.connections), 1)
        self.assertEqual([a for a in self.host.announced if "exit" in a], [])

    def test_a_sidecar_that_cannot_start_is_reported(self):
        link = self.make_link(self.tmp.join("missing", "gemini-ide-companion"))
        link.start([])
        self.assertEqual(link.state, linkmod.FAILED)
        self.assertIn("go install ./cmd/gemini-ide-companion", self.host.errors[-1])
        link = self.make_link(write_relay(self.tmp.path), {"X": 5})
        link.start([])
        self.assertEqual(link.state, linkmod.FAILED)
        self.assertIn("env", self.host.errors[-1])

    def test_an_error_answer_to_initialize_is_shown_with_the_sidecars_last_words(self):
        self.link.configure({"binary": write_relay(self.tmp.path), "env": dict(
            self.sidecar.env(), GIC_FAKE_SIDECAR_STDERR="protocolVersion 2? never heard of it")})
        self.link.start([])
        conn = self.sidecar.accept()
        init = conn.expect("initialize")
        self.until(lambda: any("never heard" in line for line in self.host.logs))
        conn.send({"jsonrpc": "2.0", "id": init["id"], "error": {"code": -32602, "message": "nope"}})
        self.until(lambda: self.link.state == linkmod.FAILED)
        self.assertIn("nope", self.link.last_error)
        self.assertIn("never heard of it", self.link.last_error)
        conn.expect("shutdown")


if __name__ == "__main__":
    unittest.main()
