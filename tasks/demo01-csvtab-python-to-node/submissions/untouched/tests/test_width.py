import unittest

from csvtab.width import text_width, truncate, visible


class WidthTests(unittest.TestCase):
    def test_wide_and_combining(self):
        self.assertEqual(text_width("東京"), 4)
        self.assertEqual(text_width("e\u0301"), 1)
        self.assertEqual(text_width("ｱ"), 1)  # halfwidth katakana

    def test_truncate_respects_wide_characters(self):
        self.assertEqual(truncate("東京都", 4), "東…")
        self.assertEqual(truncate("short", 9), "short")

    def test_visible(self):
        self.assertEqual(visible("a\r\nb\tc\x01"), "a\u21b5b c^A")


if __name__ == "__main__":
    unittest.main()
