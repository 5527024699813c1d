"""Finding the sidecar binary: the configured path, PATH, Go's bin directory,
or a message that says how to install it."""

import os
import unittest

import support
from gemini_companion import locate

INSTALL = ("go install ./cmd/gemini-ide-companion "
           "(in a clone of the gemini-ide-companion repository)")


class LocateTest(unittest.TestCase):
    def setUp(self):
        self.tmp = support.TempDir()
        self.addCleanup(self.tmp.cleanup)

    def executable(self, relpath):
        path = self.tmp.write(relpath, "#!/bin/sh\nexit 0\n")
        os.chmod(path, 0o755)
        return path

    def test_the_configured_path_wins(self):
        on_path = self.executable("bin/gemini-ide-companion")
        configured = self.executable("custom/companion")
        env = {"PATH": os.path.dirname(on_path)}
        self.assertEqual(locate.find_binary(configured, env), configured)

    def test_home_and_variables_are_expanded_in_the_setting(self):
        configured = self.executable("home/tools/gemini-ide-companion")
        env = {"PATH": ""}
        old_home = os.environ.get("HOME")
        os.environ["HOME"] = self.tmp.join("home")
        try:
            self.assertEqual(locate.find_binary("~/tools/gemini-ide-companion", env),
                             configured)
        finally:
            if old_home is None:
                del os.environ["HOME"]
            else:
                os.environ["HOME"] = old_home

    def test_path_is_searched_when_nothing_is_configured(self):
        on_path = self.executable("bin/gemini-ide-companion")
        self.assertEqual(locate.find_binary("", {"PATH": os.path.dirname(on_path)}),
                         on_path)

    def test_go_install_directory_is_searched_when_path_lacks_it(self):
        in_gopath = self.executable("gopath/bin/gemini-ide-companion")
        env = {"PATH": self.tmp.join("empty"), "GOPATH": self.tmp.join("gopath")}
        self.assertEqual(locate.find_binary("", env), in_gopath)
        in_home = self.executable("home/go/bin/gemini-ide-companion")
        env = {"PATH": self.tmp.join("empty"), "HOME": self.tmp.join("home")}
        self.assertEqual(locate.find_binary("", env), in_home)

    def test_not_found_says_how_to_install(self):
        with self.assertRaises(locate.BinaryNotFound) as caught:
            locate.find_binary("", {"PATH": self.tmp.join("empty"),
                                    "HOME": self.tmp.join("nohome")})
        self.assertIn(INSTALL, str(caught.exception))

    def test_a_configured_path_that_is_not_executable_is_named(self):
        plain = self.tmp.write("notexec", "data")
        with self.assertRaises(locate.BinaryNotFound) as caught:
            locate.find_binary(plain, {"PATH": ""})
        self.assertIn(plain, str(caught.exception))
        self.assertIn(INSTALL, str(caught.exception))

    def test_a_setting_of_the_wrong_type_is_a_clear_error(self):
        with self.assertRaisesRegex(locate.BinaryNotFound, "must be a string"):
            locate.find_binary(["gemini-ide-companion"], {"PATH": ""})


if __name__ == "__main__":
    unittest.main()
