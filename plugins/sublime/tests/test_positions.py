"""UTF-16 positions: Sublime counts code points, the editor link UTF-16 units."""

import unittest

import support  # noqa: F401  (puts the package on sys.path)
from gemini_companion import positions


class Utf16Test(unittest.TestCase):
    def test_ascii_columns_are_unchanged(self):
        self.assertEqual(positions.utf16_column("hello world", 5), 5)
        self.assertEqual(positions.cursor(0, 5, "hello"), {"line": 1, "character": 6})

    def test_bmp_characters_count_once(self):
        # é, ß, 日本 are one UTF-16 unit each.
        line = "café 日本"
        self.assertEqual(positions.utf16_column(line, len(line)), len(line))

    def test_astral_characters_count_twice(self):
        # "😀" is U+1F600: one code point, a surrogate pair in UTF-16.
        line = "a😀b😀c"
        self.assertEqual(positions.utf16_column(line, 2), 3)   # after the first emoji
        self.assertEqual(positions.utf16_column(line, 5), 7)
        self.assertEqual(positions.cursor(3, 2, line), {"line": 4, "character": 4})

    def test_column_past_the_end_is_clamped(self):
        self.assertEqual(positions.utf16_column("ab😀", 10), 4)

    def test_round_trip(self):
        line = "x😀y𝄞z"
        for col in range(len(line) + 1):
            units = positions.utf16_column(line, col)
            self.assertEqual(positions.codepoint_column(line, units), col)

    def test_offset_inside_a_surrogate_pair_moves_to_the_character_start(self):
        self.assertEqual(positions.codepoint_column("a😀b", 2), 1)

    def test_negative_input_is_a_clear_error(self):
        with self.assertRaisesRegex(ValueError, "negative"):
            positions.utf16_column("abc", -1)
        with self.assertRaisesRegex(ValueError, "negative"):
            positions.cursor(-1, 0, "")


if __name__ == "__main__":
    unittest.main()
