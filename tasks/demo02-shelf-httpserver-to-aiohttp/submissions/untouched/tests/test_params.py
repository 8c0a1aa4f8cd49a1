import unittest

from shelf.media import choose, require_json
from shelf.params import BadInput, listing, parse_query


class QueryTests(unittest.TestCase):
    def test_last_value_wins_and_blank_is_absent(self):
        spec = listing(parse_query("limit=3&limit=5&offset="))
        self.assertEqual((spec.limit, spec.offset), (5, 0))

    def test_integers_are_plain_digits(self):
        with self.assertRaises(BadInput):
            listing(parse_query("limit=1.5"))

    def test_plus_is_a_space(self):
        self.assertEqual(parse_query("q=a+b"), {"q": ["a b"]})


class MediaTests(unittest.TestCase):
    def test_q_values(self):
        self.assertEqual(choose("text/plain;q=0.9, application/json;q=0.5"), "text/plain")
        self.assertIsNone(choose("image/png"))

    def test_json_suffix_is_json(self):
        require_json("application/vnd.shelf+json; charset=UTF-8")
        with self.assertRaises(BadInput):
            require_json("text/json")


if __name__ == "__main__":
    unittest.main()
