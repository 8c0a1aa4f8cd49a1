import http.client
import json
import threading
import unittest
from http.server import ThreadingHTTPServer

from shelf.catalog import Catalog
from shelf.server import Handler


class ServerTests(unittest.TestCase):
    def setUp(self):
        Handler.catalog = Catalog()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def tearDown(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    def get(self, path, **headers):
        conn = http.client.HTTPConnection("127.0.0.1", self.httpd.server_address[1])
        conn.request("GET", path, headers=headers)
        reply = conn.getresponse()
        return reply.status, dict(reply.getheaders()), reply.read()

    def test_book(self):
        status, _, body = self.get("/books/3")
        self.assertEqual(status, 200)
        self.assertEqual(json.loads(body)["title"], "Kindred")

    def test_trailing_slash_redirects(self):
        status, headers, _ = self.get("/books/?limit=2")
        self.assertEqual((status, headers["Location"]), (308, "/books?limit=2"))


if __name__ == "__main__":
    unittest.main()
