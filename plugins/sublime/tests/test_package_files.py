"""The package's resource files: what Package Control installs and Sublime
reads (settings, command palette, key bindings, menus), checked against the
plugin's code, plus the Python 3.8 plugin host's rules."""

import ast
import glob
import json
import os
import re
import unittest

import support

PKG = support.PACKAGE_DIR
BUILTIN_COMMANDS = {"edit_settings"}
INTERNAL_COMMANDS = {"gemini_companion_replace_text"}
PROPOSAL_COMMANDS = {"gemini_accept_diff", "gemini_reject_diff", "gemini_toggle_inline_diff"}


def sublime_json(path):
    """Parse Sublime's JSON dialect: // and /* */ comments, trailing commas."""
    with open(os.path.join(PKG, path), encoding="utf-8") as f:
        text = f.read()
    out = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            j = i + 1
            while text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("//", i):
            i = text.find("\n", i)
            i = n if i < 0 else i
        elif text.startswith("/*", i):
            i = text.index("*/", i) + 2
        else:
            out.append(ch)
            i += 1
    cleaned = re.sub(r",(\s*[\]}])", r"\1", "".join(out))
    return json.loads(cleaned)


def plugin_tree():
    with open(os.path.join(PKG, "plugin.py"), encoding="utf-8") as f:
        return ast.parse(f.read())


def plugin_commands():
    """Command names plugin.py defines, named as Sublime names them."""
    _, sublime_plugin = support.fake_modules()
    names = set()
    for node in plugin_tree().body:
        if isinstance(node, ast.ClassDef) and any(
                isinstance(b, ast.Attribute) and b.attr.endswith("Command")
                for b in node.bases):
            names.add(sublime_plugin.command_name(node.name))
    return names


def settings_read():
    """{name: default} for every _setting("name", default) in plugin.py."""
    found = {}
    for node in ast.walk(plugin_tree()):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id == "_setting":
            found[node.args[0].value] = ast.literal_eval(node.args[1])
    return found


def menu_commands(items):
    for item in items:
        if "command" in item:
            yield item["command"]
        for child in menu_commands(item.get("children", [])):
            yield child


class PackageFilesTest(unittest.TestCase):

    def test_settings_file_documents_exactly_the_settings_the_plugin_reads(self):
        defaults = sublime_json("Gemini Companion.sublime-settings")
        read = settings_read()
        self.assertEqual(set(defaults), set(read))
        for name, default in read.items():
            self.assertEqual(defaults[name], default, name)

    def test_palette_keymap_and_menus_name_real_commands(self):
        known = plugin_commands() | BUILTIN_COMMANDS
        palette = [c["command"] for c in sublime_json("Default.sublime-commands")]
        keymap = [b["command"] for b in sublime_json("Default.sublime-keymap")]
        main_menu = list(menu_commands(sublime_json("Main.sublime-menu")))
        context_menu = list(menu_commands(sublime_json("Context.sublime-menu")))
        for where, names in (("palette", palette), ("keymap", keymap),
                             ("Main menu", main_menu), ("context menu", context_menu)):
            self.assertEqual([n for n in names if n not in known], [], where)
        user_facing = plugin_commands() - INTERNAL_COMMANDS
        self.assertEqual(user_facing - set(palette), set())
        self.assertEqual(user_facing - set(main_menu), set())
        self.assertEqual(set(context_menu), PROPOSAL_COMMANDS)

    def test_key_bindings_live_under_one_chord_and_diff_keys_only_in_proposals(self):
        bindings = sublime_json("Default.sublime-keymap")
        sequences = [tuple(b["keys"]) for b in bindings]
        self.assertEqual(len(sequences), len(set(sequences)), "duplicate key sequence")
        for b in bindings:
            self.assertEqual(b["keys"][0], "ctrl+alt+g", b)
            self.assertEqual(len(b["keys"]), 2, b)
            if b["command"] in PROPOSAL_COMMANDS:
                self.assertEqual(b.get("context"), [{
                    "key": "setting.gemini_companion_proposal",
                    "operator": "equal", "operand": True}], b)

    def test_sublime_loads_only_plugin_py_and_runs_it_on_python_38(self):
        top_level = sorted(os.path.basename(p) for p in glob.glob(os.path.join(PKG, "*.py")))
        self.assertEqual(top_level, ["plugin.py"])
        with open(os.path.join(PKG, ".python-version")) as f:
            self.assertEqual(f.read().strip(), "3.8")

    def test_package_code_is_python_38_code(self):
        newer = re.compile(r"\.(removeprefix|removesuffix)\(|functools\.cache\b|"
                           r"\bzoneinfo\b|\bmatch\s+\w+.*:\s*$")
        files = [os.path.join(PKG, "plugin.py")] + glob.glob(
            os.path.join(PKG, "gemini_companion", "*.py"))
        self.assertGreaterEqual(len(files), 5)
        for path in files:
            with open(path, encoding="utf-8") as f:
                source = f.read()
            ast.parse(source, path, feature_version=(3, 8))
            for number, line in enumerate(source.splitlines(), 1):
                self.assertIsNone(newer.search(line), "%s:%d: %s" % (path, number, line))

    def test_core_modules_do_not_import_sublime(self):
        for path in glob.glob(os.path.join(PKG, "gemini_companion", "*.py")):
            with open(path, encoding="utf-8") as f:
                tree = ast.parse(f.read())
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom):
                    names = [node.module or ""]
                else:
                    continue
                self.assertFalse([n for n in names if n.startswith("sublime")], path)


if __name__ == "__main__":
    unittest.main()
