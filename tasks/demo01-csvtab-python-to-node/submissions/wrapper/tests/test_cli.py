import io
import unittest
from contextlib import redirect_stderr
from unittest import mock

from csvtab.cli import main, run


class CliTests(unittest.TestCase):
    def test_numeric_sort_puts_text_last(self):
        with mock.patch("csvtab.reader.read_source", return_value=b"n\n10\nx\n9\n"):
            out = run(["-s", "n", "-n", "-f", "tsv"])
        self.assertEqual(out, "n\n9\n10\nx\n")

    def test_columns_by_name_and_number(self):
        with mock.patch("csvtab.reader.read_source", return_value=b"a,b,c\n1,2,3\n"):
            out = run(["--columns=c,1", "--format", "json"])
        self.assertEqual(out, '[\n  {"c": "3", "a": "1"}\n]\n')

    def test_bad_option_exits_2(self):
        with redirect_stderr(io.StringIO()) as err:
            self.assertEqual(main(["--format", "xml"]), 2)
        self.assertIn("--format", err.getvalue())


if __name__ == "__main__":
    unittest.main()
