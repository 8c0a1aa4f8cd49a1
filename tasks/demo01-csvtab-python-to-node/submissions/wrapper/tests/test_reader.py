import unittest

from csvtab import InputError
from csvtab.reader import decode, parse


class ParseTests(unittest.TestCase):
    def test_quotes_and_newlines(self):
        text = 'a,"b ""x""",c\r\n"multi\nline",2,3\n'
        self.assertEqual(parse(text), [["a", 'b "x"', "c"], ["multi\nline", "2", "3"]])

    def test_blank_lines_and_trailing_delimiter(self):
        self.assertEqual(parse("a,\n\n\nb"), [["a", ""], ["b"]])

    def test_unterminated_quote_names_line(self):
        with self.assertRaises(InputError) as caught:
            parse('x\ny,"open\nmore\n')
        self.assertIn("line 2", caught.exception.message)

    def test_text_after_closing_quote(self):
        with self.assertRaises(InputError):
            parse('"a"b,c\n')

    def test_bom_and_bad_bytes(self):
        self.assertEqual(decode(b"\xef\xbb\xbfa", "utf-8", "f"), "a")
        with self.assertRaises(InputError):
            decode(b"a\xff", "utf-8", "f")


if __name__ == "__main__":
    unittest.main()
