"""What happens to a proposal after it is shown, as a Sublime Text user sees
it: a second CLI's proposal queued behind the first, a proposal orphaned by
its CLI, the file changed or deleted on disk, a file outside the project.
Real sidecar, real MCP sessions (one per CLI)."""

import os
import threading

import test_plugin
from test_plugin import PluginTestCase, sublime


class DiffStateTest(PluginTestCase):

    open_diff = test_plugin.DiffTest.open_diff

    def bar(self, view):
        phantoms = view.phantoms()
        return phantoms[0][0] if phantoms else ""

    def call_tool_async(self, client, name, args):
        box = {}
        t = threading.Thread(target=lambda: box.update(result=client.call_tool(name, args)))
        t.start()
        self.pump_until(lambda: not t.is_alive(), timeout=15)
        return box["result"]

    def test_a_second_clis_proposal_waits_and_the_first_says_so(self):
        one, two = self.cli(), self.cli()
        _, first = self.open_diff(one, self.code, "from one\n")
        before = set(v.id() for v in self.window.views())
        result = self.call_tool_async(two, "openDiff", {"filePath": self.code, "newContent": "from two\n"})
        self.assertFalse(result.get("isError", False))
        self.pump_until(lambda: "1 more proposal queued" in self.bar(first))
        self.assertEqual(set(v.id() for v in self.window.views()), before, "no second tab yet")
        self.assertEqual(first.text(), "from one\n")

        first.run_command("gemini_accept_diff")
        self.assertEqual(self.wait_cli(one, "ide/diffAccepted")["content"], "from one\n")
        self.pump_until(lambda: any(v.text() == "from two\n" for v in self.window.views()))
        second = [v for v in self.window.views() if v.text() == "from two\n"][0]
        self.assertIn("Gemini CLI (CLI ", self.bar(second))
        self.assertEqual(two.seen("ide/diffAccepted"), [])
        second.run_command("gemini_reject_diff")
        self.wait_cli(two, "ide/diffRejected")
        self.assertEqual(len(one.seen("ide/diffAccepted")) + len(one.seen("ide/diffRejected")), 1)

    def test_a_change_on_disk_is_shown_and_accepting_over_it_takes_a_second_accept(self):
        client = self.cli()
        _, diff = self.open_diff(client, self.code, "proposed\n")
        with open(self.code, "w", encoding="utf-8") as f:
            f.write("changed by another tool\n")
        self.pump_until(lambda: "Changed on disk" in self.bar(diff)
                        and diff.reference_document == "changed by another tool\n")
        diff.run_command("gemini_accept_diff")
        self.pump_until(lambda: "Accept again to overwrite" in self.bar(diff))
        self.assertIn(diff, self.window.views())
        self.assertEqual(client.seen("ide/diffAccepted"), [])
        diff.run_command("gemini_accept_diff")
        self.assertEqual(self.wait_cli(client, "ide/diffAccepted")["content"], "proposed\n")

    def round_trip(self):
        """Waits for an answer from the sidecar: every message it sent
        before has been handled, and shown, by then."""
        box = {}
        self.session().status_info(lambda result, error: box.update(done=True))
        self.pump_until(lambda: box.get("done"))

    def said(self, text):
        return [m for m in sublime.state.status_messages if text in m]

    def test_a_plain_accept_says_nothing_of_the_disk(self):
        client = self.cli()
        _, diff = self.open_diff(client, self.code, "proposed\n")
        diff.run_command("gemini_accept_diff")
        self.assertEqual(self.wait_cli(client, "ide/diffAccepted")["content"], "proposed\n")
        self.round_trip()
        self.assertEqual(self.said("on disk"), [])

    def test_a_file_put_back_on_disk_is_shown_and_accepted_at_once(self):
        client = self.cli()
        with open(self.code, encoding="utf-8") as f:
            original = f.read()
        _, diff = self.open_diff(client, self.code, "proposed\n")
        with open(self.code, "w", encoding="utf-8") as f:
            f.write("changed by another tool\n")
        self.pump_until(lambda: "Changed on disk" in self.bar(diff))
        with open(self.code, "w", encoding="utf-8") as f:
            f.write(original)
        self.pump_until(lambda: "Changed on disk" not in self.bar(diff)
                        and diff.reference_document == original)
        self.pump_until(lambda: self.said("app.py on disk is back to what it was"))
        diff.run_command("gemini_accept_diff")
        self.assertEqual(self.wait_cli(client, "ide/diffAccepted")["content"], "proposed\n")
        self.round_trip()
        self.assertEqual(len(self.said("back to what it was")), 1)

    def test_a_delete_on_disk_is_shown(self):
        client = self.cli()
        _, diff = self.open_diff(client, self.notes, "proposed\n")
        os.remove(self.notes)
        self.pump_until(lambda: "Deleted on disk" in self.bar(diff))
        diff.run_command("gemini_reject_diff")
        self.wait_cli(client, "ide/diffRejected")
        self.assertFalse(os.path.exists(self.notes))

    def test_an_orphaned_proposal_keeps_its_text_when_accepted(self):
        client = self.cli()
        _, diff = self.open_diff(client, self.code, "keep me\n")
        client.close()
        self.pump_until(lambda: "Orphaned" in self.bar(diff))
        diff.run_command("gemini_accept_diff")
        self.pump_until(lambda: any(v.settings().get("gemini_companion_unwritten") == self.code
                                    for v in self.window.views()))
        kept = [v for v in self.window.views() if v.settings().get("gemini_companion_unwritten")][0]
        self.assertEqual(kept.text(), "keep me\n")
        self.assertIn("Nothing was written", self.bar(kept))
        self.assertFalse(kept.is_scratch(), "closing it must offer to save")
        with open(self.code, encoding="utf-8") as f:
            self.assertNotEqual(f.read(), "keep me\n")

    def test_a_file_outside_the_project_is_marked(self):
        client = self.cli()
        outside = self.tmp.write("elsewhere.txt", "x\n")
        _, diff = self.open_diff(client, outside, "y\n")
        self.assertIn("Outside the workspace", self.bar(diff))
        inside_client = self.cli()
        _, inside = self.open_diff(inside_client, self.notes, "z\n")
        self.assertNotIn("Outside the workspace", self.bar(inside))
        sublime.pump()

    def test_an_accept_racing_a_change_on_disk_shows_the_proposal_again(self):
        client = self.cli()
        _, diff = self.open_diff(client, self.code, "proposed\n")
        diff.user_type("edited ", at=0)
        with open(self.code, "w", encoding="utf-8") as f:
            f.write("written an instant before\n")
        diff.run_command("gemini_accept_diff")   # before the plugin hears of it

        def shown_again():
            return [v for v in self.window.views()
                    if v != diff and v.text() == "edited proposed\n" and "Changed on disk" in self.bar(v)]
        self.pump_until(lambda: shown_again())
        again = shown_again()[0]
        self.assertEqual(again.reference_document, "written an instant before\n")
        self.assertEqual(client.seen("ide/diffAccepted"), [])
        again.run_command("gemini_accept_diff")
        self.assertEqual(self.wait_cli(client, "ide/diffAccepted")["content"], "edited proposed\n")
