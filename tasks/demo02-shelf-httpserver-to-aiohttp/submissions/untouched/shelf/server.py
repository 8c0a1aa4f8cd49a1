"""shelf's HTTP server on the standard library's http.server.

    bin/shelf [--host HOST] [--port PORT]

One process, one in-memory catalogue (reset at every start), JSON in and
out.  See README.md for the routes and their rules.
"""

from __future__ import annotations

import argparse
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from . import __version__
from .catalog import Catalog
from .media import JSON, TEXT, choose, require_json
from .params import BadInput, last, listing, new_book, parse_query, path_text
from .render import JSON_TYPE, TEXT_TYPE, error_doc, json_bytes, text_bytes
from .routes import Match, match, redirect_target

MAX_BODY = 64 * 1024
HANDLERS = {
    "/": "on_index",
    "/health": "on_health",
    "/books": "on_books",
    "/books/{id}": "on_book",
    "/authors/{name}": "on_authors",
    "/search": "on_search",
    "/stats": "on_stats",
}
INDEX = {
    "service": "shelf",
    "version": __version__,
    "links": {
        "books": "/books",
        "book": "/books/{id}",
        "author": "/authors/{name}",
        "search": "/search?q={text}",
        "stats": "/stats",
        "health": "/health",
    },
}


class Reply:
    """A response before it is written: status, headers, body."""

    def __init__(self, status: int, body: bytes = b"", content_type: str | None = JSON_TYPE,
                 headers: dict[str, str] | None = None):
        self.status = status
        self.body = body
        self.content_type = content_type if status not in (204, 304) else None
        self.headers = dict(headers or {})


def fail(exc: BadInput) -> Reply:
    return Reply(exc.status, error_doc(exc.code, exc.message, field=exc.field))


class Handler(BaseHTTPRequestHandler):
    server_version = "shelf/" + __version__
    protocol_version = "HTTP/1.1"
    catalog: Catalog  # set on the class by serve()

    # ------------------------------------------------------------------ plumbing

    def do_GET(self) -> None:
        self.handle_any("GET")

    def do_HEAD(self) -> None:
        self.handle_any("HEAD")

    def do_POST(self) -> None:
        self.handle_any("POST")

    def do_PUT(self) -> None:
        self.handle_any("PUT")

    def do_PATCH(self) -> None:
        self.handle_any("PATCH")

    def do_DELETE(self) -> None:
        self.handle_any("DELETE")

    def do_OPTIONS(self) -> None:
        self.handle_any("OPTIONS")

    def log_message(self, format: str, *args: object) -> None:
        sys.stderr.write("shelf: %s %s\n" % (self.address_string(), format % args))

    def header(self, name: str) -> str | None:
        value = self.headers.get(name)
        return None if value is None else value.strip()

    def handle_any(self, method: str) -> None:
        path, _, query = self.path.partition("?")
        try:
            reply = self.route(method, path, query)
        except BadInput as exc:
            reply = fail(exc)
        self.send(reply, head=method == "HEAD")

    def send(self, reply: Reply, head: bool) -> None:
        self.send_response(reply.status)
        if reply.content_type:
            self.send_header("Content-Type", reply.content_type)
        for name, value in reply.headers.items():
            self.send_header(name, value)
        if reply.status not in (204, 304):
            self.send_header("Content-Length", str(len(reply.body)))
        if reply.status == 413:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if not head and reply.status not in (204, 304):
            self.wfile.write(reply.body)

    def read_body(self) -> bytes:
        raw = self.header("Content-Length")
        length = int(raw) if raw and raw.isdigit() else 0
        return self.rfile.read(length) if length else b""

    # ------------------------------------------------------------------ routing

    def route(self, method: str, path: str, query: str) -> Reply:
        target = redirect_target(path, query)
        if target is not None:
            return Reply(308, json_bytes({"redirect": target}), headers={"Location": target})
        found = match(path)
        if found is None:
            raise BadInput(404, "not_found", "no such resource")
        if method not in found.allowed():
            return Reply(405, error_doc("method_not_allowed", f"{method} is not allowed here",
                                        allow=list(found.allowed())),
                         headers={"Allow": found.allow_header()})
        if method == "OPTIONS":
            return Reply(204, headers={"Allow": found.allow_header()})
        verb = "GET" if method == "HEAD" else method
        params = parse_query(query)
        handler = getattr(self, HANDLERS[found.pattern])
        return handler(verb, found, params, query)

    def negotiate(self, offers: tuple[str, ...]) -> str:
        chosen = choose(self.header("Accept"), offers)
        if chosen is None:
            raise BadInput(406, "not_acceptable", "available: " + ", ".join(offers))
        return chosen

    # ------------------------------------------------------------------ resources

    def on_index(self, verb: str, found: Match, params: dict[str, list[str]],
                 query: str) -> Reply:
        self.negotiate((JSON,))
        return Reply(200, json_bytes(INDEX))

    def on_health(self, verb: str, found: Match, params: dict[str, list[str]],
                  query: str) -> Reply:
        self.negotiate((JSON,))
        return Reply(200, json_bytes({"status": "ok"}))

    def on_books(self, verb: str, found: Match, params: dict[str, list[str]],
                 query: str) -> Reply:
        if verb == "POST":
            return self.create()
        kind = self.negotiate((JSON, TEXT))
        spec = listing(params)
        books = self.catalog.select(tags=spec.tags, year=spec.year, available=spec.available,
                                    title_part=spec.title_part)
        books = self.catalog.ordered(books, spec.sort, spec.descending)
        page = books[spec.offset: spec.offset + spec.limit]
        if kind == TEXT:
            return Reply(200, text_bytes([book.to_text() for book in page]), TEXT_TYPE)
        return Reply(200, json_bytes({
            "total": len(books), "offset": spec.offset, "limit": spec.limit,
            "items": [book.to_json() for book in page],
        }))

    def on_book(self, verb: str, found: Match, params: dict[str, list[str]],
                query: str) -> Reply:
        text = path_text(found.params["id"])
        if not text.isascii() or not text.isdigit():
            raise BadInput(404, "not_found", "book ids are decimal numbers")
        book_id = int(text)
        if text != str(book_id):
            target = f"/books/{book_id}" + ("?" + query if query else "")
            return Reply(301, json_bytes({"redirect": target}), headers={"Location": target})
        if verb == "DELETE":
            if not self.catalog.delete(book_id):
                raise BadInput(404, "no_such_book", f"no book {book_id}")
            return Reply(204)
        kind = self.negotiate((JSON, TEXT))
        book = self.catalog.get(book_id)
        if book is None:
            raise BadInput(404, "no_such_book", f"no book {book_id}")
        if kind == TEXT:
            return Reply(200, text_bytes([book.to_text()]), TEXT_TYPE)
        return Reply(200, json_bytes(book.to_json()))

    def create(self) -> Reply:
        raw = self.header("Content-Length")
        if raw and raw.isdigit() and int(raw) > MAX_BODY:
            raise BadInput(413, "too_large", f"the body is larger than {MAX_BODY} bytes")
        try:
            require_json(self.header("Content-Type"))
        finally:
            body = self.read_body()
        fields = new_book(body)
        book = self.catalog.add(fields.title, fields.author, fields.year, fields.tags,
                                fields.available)
        return Reply(201, json_bytes(book.to_json()), headers={"Location": f"/books/{book.id}"})

    def on_authors(self, verb: str, found: Match, params: dict[str, list[str]],
                   query: str) -> Reply:
        self.negotiate((JSON,))
        name = path_text(found.params["name"])
        books = self.catalog.by_author(name)
        if not books:
            raise BadInput(404, "no_such_author", f"no books by {name}")
        return Reply(200, json_bytes({"author": books[0].author,
                                      "books": [book.to_json() for book in books]}))

    def on_search(self, verb: str, found: Match, params: dict[str, list[str]],
                  query: str) -> Reply:
        self.negotiate((JSON,))
        text = last(params, "q")
        if text is None or not text.strip():
            raise BadInput(400, "bad_query", "q is required", "q")
        return Reply(200, json_bytes({"query": text, "hits": self.catalog.search(text)}))

    def on_stats(self, verb: str, found: Match, params: dict[str, list[str]],
                 query: str) -> Reply:
        self.negotiate((JSON,))
        return Reply(200, json_bytes(self.catalog.stats()))


def serve(host: str, port: int) -> None:
    Handler.catalog = Catalog()
    httpd = ThreadingHTTPServer((host, port), Handler)
    httpd.daemon_threads = True
    print(f"shelf {__version__} listening on http://{host}:{httpd.server_address[1]}",
          file=sys.stderr, flush=True)
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        httpd.server_close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="shelf", description="shelf's JSON catalogue service")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--version", action="version", version=f"shelf {__version__}")
    args = parser.parse_args(argv)
    serve(args.host, args.port)
    return 0

