"""shelf's HTTP service on aiohttp.

    bin/shelf [--host HOST] [--port PORT]

One process, one in-memory catalogue (reset at every start), JSON in and
out.  aiohttp's router serves the routes; one middleware keeps the rules
aiohttp would otherwise answer its own way: trailing-slash redirects, JSON
error bodies for 404/405, the Allow list, and a request path that starts
with several slashes (treated as one).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Awaitable, Callable

from aiohttp import web

from . import __version__
from .catalog import Catalog
from .media import JSON, TEXT, choose, require_json
from .params import BadInput, last, listing, new_book, parse_query, path_text
from .render import JSON_TYPE, TEXT_TYPE, error_doc, json_bytes, text_bytes

MAX_BODY = 64 * 1024
METHOD_ORDER = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
CATALOG = "catalog"
QUERY = "shelf.query"
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
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def reply(status: int, body: bytes = b"", content_type: str = JSON_TYPE,
          headers: dict[str, str] | None = None) -> web.Response:
    response = web.Response(status=status, body=body or None, headers=headers)
    if status != 204:  # an empty text body is still text/plain, as in State A
        response.headers["Content-Type"] = content_type
    return response


def fail(exc: BadInput) -> web.Response:
    response = reply(exc.status, error_doc(exc.code, exc.message, field=exc.field))
    if exc.status == 413:
        response.force_close()
    return response


def split_raw(request: web.Request) -> tuple[str, str]:
    """The raw (still percent-encoded) path and query, several leading slashes made one."""
    path, _, query = request.raw_path.partition("?")
    if path.startswith("//"):
        path = "/" + path.lstrip("/")
    return path, query


def raw_segment(request: web.Request, index: int) -> str:
    """One segment of the raw path (aiohttp's match_info is already decoded, lossily)."""
    return split_raw(request)[0].split("/")[index]


def allow_list(methods: set[str]) -> list[str]:
    names = {m.upper() for m in methods} | {"OPTIONS"}
    if "GET" in names:
        names.add("HEAD")
    return [m for m in METHOD_ORDER if m in names]


def negotiate(request: web.Request, offers: tuple[str, ...]) -> str:
    accept = request.headers.get("Accept")
    chosen = choose(None if accept is None else accept.strip(), offers)
    if chosen is None:
        raise BadInput(406, "not_acceptable", "available: " + ", ".join(offers))
    return chosen


class Redirect(Exception):
    """A permanent redirect to the canonical form of a path."""

    def __init__(self, target: str):
        super().__init__(target)
        self.target = target


@web.middleware
async def edges(request: web.Request, handler: Handler) -> web.StreamResponse:
    path, query = split_raw(request)
    if path != "/" and path.endswith("/"):
        target = (path.rstrip("/") or "/") + ("?" + query if query else "")
        return reply(308, json_bytes({"redirect": target}), headers={"Location": target})
    info = request.match_info
    if path != request.raw_path.partition("?")[0]:
        # aiohttp routed the path as sent; route the one-slash form instead.
        info = await request.app.router.resolve(request.clone(rel_url=path))
        handler = info.handler
    try:
        if info.http_exception is None and request.method != "OPTIONS":
            # Every routed request's query string is decoded (and may be refused) first.
            request[QUERY] = parse_query(query)
        return await handler(request)
    except BadInput as exc:
        return fail(exc)
    except Redirect as move:
        return reply(301, json_bytes({"redirect": move.target}),
                     headers={"Location": move.target})
    except web.HTTPMethodNotAllowed as exc:
        allowed = allow_list(set(exc.allowed_methods))
        return reply(405, error_doc("method_not_allowed",
                                    f"{request.method} is not allowed here", allow=allowed),
                     headers={"Allow": ", ".join(allowed)})
    except web.HTTPNotFound:
        return fail(BadInput(404, "not_found", "no such resource"))


# ---------------------------------------------------------------------- resources


async def index(request: web.Request) -> web.Response:
    negotiate(request, (JSON,))
    return reply(200, json_bytes(INDEX))


async def health(request: web.Request) -> web.Response:
    negotiate(request, (JSON,))
    return reply(200, json_bytes({"status": "ok"}))


async def list_books(request: web.Request) -> web.Response:
    kind = negotiate(request, (JSON, TEXT))
    spec = listing(request[QUERY])
    catalog: Catalog = request.app[CATALOG]
    books = catalog.select(tags=spec.tags, year=spec.year, available=spec.available,
                           title_part=spec.title_part)
    books = catalog.ordered(books, spec.sort, spec.descending)
    page = books[spec.offset: spec.offset + spec.limit]
    if kind == TEXT:
        return reply(200, text_bytes([book.to_text() for book in page]), TEXT_TYPE)
    return reply(200, json_bytes({
        "total": len(books), "offset": spec.offset, "limit": spec.limit,
        "items": [book.to_json() for book in page],
    }))


async def create_book(request: web.Request) -> web.Response:
    length = request.content_length
    if length is not None and length > MAX_BODY:
        raise BadInput(413, "too_large", f"the body is larger than {MAX_BODY} bytes")
    content_type = request.headers.get("Content-Type")
    try:
        require_json(None if content_type is None else content_type.strip())
    finally:
        body = await request.read()
    fields = new_book(body)
    catalog: Catalog = request.app[CATALOG]
    book = catalog.add(fields.title, fields.author, fields.year, fields.tags, fields.available)
    return reply(201, json_bytes(book.to_json()), headers={"Location": f"/books/{book.id}"})


def book_id(request: web.Request) -> int:
    """The id in /books/{id}; a redirect when it has leading zeros, 404 when not a number."""
    text = path_text(raw_segment(request, 2))
    if not text.isascii() or not text.isdigit():
        raise BadInput(404, "not_found", "book ids are decimal numbers")
    number = int(text)
    if text != str(number):
        query = split_raw(request)[1]
        target = f"/books/{number}" + ("?" + query if query else "")
        raise Redirect(target)
    return number


async def get_book(request: web.Request) -> web.Response:
    number = book_id(request)
    kind = negotiate(request, (JSON, TEXT))
    book = request.app[CATALOG].get(number)
    if book is None:
        raise BadInput(404, "no_such_book", f"no book {number}")
    if kind == TEXT:
        return reply(200, text_bytes([book.to_text()]), TEXT_TYPE)
    return reply(200, json_bytes(book.to_json()))


async def delete_book(request: web.Request) -> web.Response:
    number = book_id(request)
    if not request.app[CATALOG].delete(number):
        raise BadInput(404, "no_such_book", f"no book {number}")
    return reply(204)


async def by_author(request: web.Request) -> web.Response:
    negotiate(request, (JSON,))
    name = path_text(raw_segment(request, 2))
    books = request.app[CATALOG].by_author(name)
    if not books:
        raise BadInput(404, "no_such_author", f"no books by {name}")
    return reply(200, json_bytes({"author": books[0].author,
                                  "books": [book.to_json() for book in books]}))


async def search(request: web.Request) -> web.Response:
    negotiate(request, (JSON,))
    text = last(request[QUERY], "q")
    if text is None or not text.strip():
        raise BadInput(400, "bad_query", "q is required", "q")
    return reply(200, json_bytes({"query": text, "hits": request.app[CATALOG].search(text)}))


async def stats(request: web.Request) -> web.Response:
    negotiate(request, (JSON,))
    return reply(200, json_bytes(request.app[CATALOG].stats()))


ROUTES: tuple[tuple[str, dict[str, Handler]], ...] = (
    ("/", {"GET": index}),
    ("/health", {"GET": health}),
    ("/books", {"GET": list_books, "POST": create_book}),
    ("/books/{id}", {"GET": get_book, "DELETE": delete_book}),
    ("/authors/{name}", {"GET": by_author}),
    ("/search", {"GET": search}),
    ("/stats", {"GET": stats}),
)


def options_for(methods: list[str]) -> Handler:
    allow = ", ".join(allow_list(set(methods)))

    async def options(request: web.Request) -> web.Response:
        return reply(204, headers={"Allow": allow})

    return options


def make_app() -> web.Application:
    app = web.Application(middlewares=[edges])
    app[CATALOG] = Catalog()
    for path, methods in ROUTES:
        resource = app.router.add_resource(path)
        for method, handler in methods.items():
            if method == "GET":
                resource.add_route("HEAD", handler)
            resource.add_route(method, handler)
        resource.add_route("OPTIONS", options_for(list(methods)))
    return app


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="shelf", description="shelf's JSON catalogue service")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--version", action="version", version=f"shelf {__version__}")
    args = parser.parse_args(argv)
    print(f"shelf {__version__} listening on http://{args.host}:{args.port}",
          file=sys.stderr, flush=True)
    web.run_app(make_app(), host=args.host, port=args.port, print=None,
                handle_signals=True, access_log=None)
    return 0
