import json
import unittest

from aiohttp.test_utils import AioHTTPTestCase

from shelf.app import make_app


class AppTests(AioHTTPTestCase):
    async def get_application(self):
        return make_app()

    async def test_book(self):
        reply = await self.client.get("/books/3")
        self.assertEqual(reply.status, 200)
        self.assertEqual(json.loads(await reply.read())["title"], "Kindred")

    async def test_trailing_slash_redirects(self):
        reply = await self.client.get("/books/?limit=2", allow_redirects=False)
        self.assertEqual((reply.status, reply.headers["Location"]), (308, "/books?limit=2"))


if __name__ == "__main__":
    unittest.main()
