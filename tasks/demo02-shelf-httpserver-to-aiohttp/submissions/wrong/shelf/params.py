"""Query strings and request bodies: decoding, coercion and validation.

Framework-neutral.  Every function takes plain strings or bytes and raises
:class:`BadInput` with the error code, message and field the client sees.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from urllib.parse import parse_qsl, unquote_to_bytes

from .catalog import SORT_KEYS

INTEGER = re.compile(r"-?[0-9]+")
TRUE_WORDS = ("true", "1", "yes", "on")
FALSE_WORDS = ("false", "0", "no", "off")
MAX_LIMIT = 100
DEFAULT_LIMIT = 10
MAX_TITLE = 200
MAX_TAGS = 8


class BadInput(Exception):
    """A client error: HTTP status, error code, message and the offending field."""

    def __init__(self, status: int, code: str, message: str, field: str | None = None):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.field = field


def parse_query(raw: str) -> dict[str, list[str]]:
    """``a=1&b=&a=2`` -> {"a": ["1", "2"], "b": [""]}; '+' is a space; invalid UTF-8 is an
    error (400 bad_query)."""
    try:
        pairs = parse_qsl(raw, keep_blank_values=True, encoding="utf-8", errors="strict")
    except UnicodeDecodeError:
        raise BadInput(400, "bad_query", "the query string is not valid UTF-8") from None
    out: dict[str, list[str]] = {}
    for name, value in pairs:
        out.setdefault(name, []).append(value)
    return out


def last(query: dict[str, list[str]], name: str) -> str | None:
    """The last value given for ``name``; an empty value counts as not given."""
    values = query.get(name)
    if not values or values[-1] == "":
        return None
    return values[-1]


def integer(query: dict[str, list[str]], name: str, default: int | None,
            low: int, high: int) -> int | None:
    text = last(query, name)
    if text is None:
        return default
    if not INTEGER.fullmatch(text):
        raise BadInput(400, "bad_query", f"{name} must be an integer", name)
    value = int(text)
    if not low <= value <= high:
        raise BadInput(400, "bad_query", f"{name} must be between {low} and {high}", name)
    return value


def boolean(query: dict[str, list[str]], name: str) -> bool | None:
    text = last(query, name)
    if text is None:
        return None
    word = text.lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise BadInput(400, "bad_query", f"{name} must be true or false", name)


@dataclass
class Listing:
    limit: int
    offset: int
    sort: str
    descending: bool
    tags: list[str]
    year: int | None
    available: bool | None
    title_part: str | None


def listing(query: dict[str, list[str]]) -> Listing:
    """The parameters of GET /books."""
    limit = integer(query, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT)
    offset = integer(query, "offset", 0, 0, 1_000_000)
    sort = last(query, "sort") or "id"
    if sort not in SORT_KEYS:
        raise BadInput(400, "bad_query", "sort must be one of " + ", ".join(SORT_KEYS), "sort")
    order = (last(query, "order") or "asc").lower()
    if order not in ("asc", "desc"):
        raise BadInput(400, "bad_query", "order must be asc or desc", "order")
    return Listing(
        limit=limit if limit is not None else DEFAULT_LIMIT,
        offset=offset or 0,
        sort=sort,
        descending=order == "desc",
        tags=[tag for tag in query.get("tag", []) if tag],
        year=integer(query, "year", None, -9999, 9999),
        available=boolean(query, "available"),
        title_part=last(query, "q"),
    )


def path_text(segment: str) -> str:
    """A percent-encoded path segment as text ('+' stays '+'); 400 bad_path if it is not
    UTF-8."""
    try:
        return unquote_to_bytes(segment).decode("utf-8")
    except UnicodeDecodeError:
        raise BadInput(400, "bad_path", "the path is not valid UTF-8") from None


@dataclass
class NewBook:
    title: str
    author: str
    year: int
    tags: list[str]
    available: bool


def new_book(body: bytes) -> NewBook:
    """Validate the JSON body of POST /books."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise BadInput(400, "bad_json", "the body is not valid UTF-8") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadInput(400, "bad_json", f"the body is not JSON: {exc.msg} at "
                       f"line {exc.lineno} column {exc.colno}") from None
    if not isinstance(data, dict):
        raise BadInput(422, "invalid", "the body must be a JSON object")
    title = data.get("title")
    if not isinstance(title, str) or not title.strip():
        raise BadInput(422, "invalid", "title must be a non-empty string", "title")
    if len(title.strip()) > MAX_TITLE:
        raise BadInput(422, "invalid", f"title is longer than {MAX_TITLE} characters", "title")
    author = data.get("author")
    if not isinstance(author, str) or not author.strip():
        raise BadInput(422, "invalid", "author must be a non-empty string", "author")
    year = data.get("year")
    if isinstance(year, bool) or not isinstance(year, int) or not -9999 <= year <= 9999:
        raise BadInput(422, "invalid", "year must be an integer between -9999 and 9999", "year")
    tags = data.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) and t for t in tags):
        raise BadInput(422, "invalid", "tags must be a list of non-empty strings", "tags")
    if len(tags) > MAX_TAGS:
        raise BadInput(422, "invalid", f"at most {MAX_TAGS} tags", "tags")
    available = data.get("available", True)
    if not isinstance(available, bool):
        raise BadInput(422, "invalid", "available must be true or false", "available")
    return NewBook(title.strip(), author.strip(), year, list(dict.fromkeys(tags)), available)
