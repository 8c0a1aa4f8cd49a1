"""The HTTP fuzzer's requests: their form, their mutations, and how a difference is shrunk.

A request is a method, a raw path, a list of query pairs, a list of headers and a body. Seeds
and the vocabulary mutations draw from come from the task (its seed file, see
:mod:`.http`), never from this module: only generic pieces (percent escapes, slashes,
signs, spaces, a few non-ASCII letters) are built in. Everything here is a pure function of
its random generator, so a round's request sequence is fixed by its seed.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import quote

from .mutate import ddmin, mutate

GENERIC_PIECES: tuple[str, ...] = (
    "/", "//", "%2F", "%20", "+", " ", "-", "_", ".", "..", "0", "00", "%", "%ff", "%C3%A9",
    "é", "ß", "İ", "漢", "\u0301", ";", ",", "=", "&", "?", "~", "*", "'", "1e3", "-1",
)  # fmt: skip
"""inserted into path segments, query names and values, and header values"""
NUMBER_FORMS: tuple[str, ...] = ("+{}", " {}", "{} ", "0{}", "-{}", "{}.0", "{}e0", "{}_0",
                                 "{}\u00a0", "\u0661{}", "\uff11{}")
"""other spellings of a number a parser may or may not accept (sign, spaces, separators,
exponent, non-ASCII digits): where query-string coercion differs between implementations"""
FRAMING_HEADERS = frozenset(
    {"content-length", "transfer-encoding", "host", "connection", "expect", "upgrade", "te"}
)
"""never sent from a seed or a mutation: the HTTP framing is out of scope"""
MAX_BODY_BYTES = 96 * 1024


@dataclass(frozen=True)
class Request:
    """One HTTP request the fuzzer sends to both servers (method, path, query, headers, body)."""

    method: str
    path: str
    query: tuple[tuple[str, str], ...] = ()
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes | None = None

    def target(self) -> str:
        """The request-target as sent: path and query, every byte outside printable ASCII
        (and '#') percent-encoded, so any client can put it on the request line."""
        text = encode_raw(self.path or "/")
        if not text.startswith("/"):
            text = "/" + text
        if self.query:
            text += "?" + "&".join(
                encode_raw(name) + ("=" + encode_raw(value) if value is not None else "")
                for name, value in self.query
            )
        return text

    def header_list(self) -> list[tuple[str, str]]:
        """Headers as sent: framing headers dropped, values reduced to printable ASCII."""
        out = []
        for name, value in self.headers:
            if name.lower() in FRAMING_HEADERS or not name or not _token(name):
                continue
            out.append((name, "".join(c for c in value if " " <= c <= "~").strip()))
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "target": self.target(),
            "headers": [list(pair) for pair in self.header_list()],
            "body_hex": None if self.body is None else self.body.hex(),
        }


def _token(name: str) -> bool:
    return all(c.isascii() and (c.isalnum() or c in "!#$%&'*+-.^_`|~") for c in name)


def encode_raw(text: str) -> str:
    """Percent-encode what may not appear raw on a request line; keep existing escapes."""
    return quote(text, safe="!$&'()*+,;=:@/%?-._~")


@dataclass
class Vocabulary:
    """What a task's seed file declares mutations may use."""

    methods: list[str] = field(default_factory=lambda: ["GET"])
    segments: list[str] = field(default_factory=list)
    query_names: list[str] = field(default_factory=list)
    query_values: list[str] = field(default_factory=list)
    headers: dict[str, list[str]] = field(default_factory=dict)
    bodies: list[bytes] = field(default_factory=list)


def _strings(raw: object) -> list[str]:
    return [str(item) for item in raw] if isinstance(raw, list) else []


def load_vocabulary(raw: Mapping[str, Any] | None) -> Vocabulary:
    data = raw or {}
    headers = data.get("headers") if isinstance(data.get("headers"), dict) else {}
    return Vocabulary(
        methods=_strings(data.get("methods")) or ["GET"],
        segments=_strings(data.get("segments")),
        query_names=_strings(data.get("query_names")),
        query_values=_strings(data.get("query_values")),
        headers={str(k): _strings(v) for k, v in (headers or {}).items()},
        bodies=[item.encode("utf-8") for item in _strings(data.get("bodies"))],
    )


def request_from_seed(raw: Mapping[str, Any]) -> Request:
    """One seed: {"method", "path", "query": [[name, value]...] or "a=1&b=2", "headers":
    {name: value} or [[name, value]...], "body": text or null}."""
    query = raw.get("query") or []
    if isinstance(query, str):
        pairs = [tuple(p.split("=", 1)) if "=" in p else (p, "") for p in query.split("&") if p]
    else:
        pairs = [(str(p[0]), str(p[1])) for p in query if isinstance(p, list) and len(p) == 2]
    headers = raw.get("headers") or {}
    items = headers.items() if isinstance(headers, dict) else [tuple(h) for h in headers]
    body = raw.get("body")
    return Request(
        method=str(raw.get("method", "GET")).upper(),
        path=str(raw.get("path", "/")),
        query=tuple((str(n), str(v)) for n, v in pairs),
        headers=tuple((str(n), str(v)) for n, v in items),
        body=None if body is None else str(body).encode("utf-8"),
    )


# --------------------------------------------------------------------------- mutations


def _mutate_text(text: str, rng: random.Random, pool: Sequence[str]) -> str:
    """One edit of a string: insert or overwrite with a piece, delete a character, or
    replace it whole with a vocabulary word."""
    op = rng.randrange(5)
    pos = rng.randrange(len(text) + 1)
    piece = rng.choice(list(pool) or list(GENERIC_PIECES))
    if op == 0:
        return text[:pos] + piece + text[pos:]
    if op == 1 and text:
        return text[:pos] + text[pos + 1 :]
    if op == 2:
        return text[:pos] + piece + text[pos + len(piece) :]
    if op == 3:
        return piece
    return text.upper() if rng.random() < 0.5 else text.lower()


def _mutate_path(path: str, rng: random.Random, vocab: Vocabulary) -> str:
    parts = path.split("/")
    op = rng.randrange(6)
    if op == 0:
        return path + "/" if not path.endswith("/") else path.rstrip("/")
    if op == 1:
        return "/" + path
    k = 1 + rng.randrange(max(1, len(parts) - 1)) if len(parts) > 1 else 0
    if op == 2 and vocab.segments:
        parts.insert(k, rng.choice(vocab.segments))
    elif op == 3 and len(parts) > 2:
        del parts[k]
    else:
        parts[k:k + 1] = [_mutate_text(parts[k] if k < len(parts) else "", rng,
                                       [*vocab.segments, *GENERIC_PIECES])]
    joined = "/".join(parts)
    return joined if joined.startswith("/") else "/" + joined


def _mutate_query(query: list[tuple[str, str]], rng: random.Random, vocab: Vocabulary) -> None:
    values = [*vocab.query_values, *GENERIC_PIECES]
    op = rng.randrange(5)
    if op == 0 or not query:
        name = rng.choice(vocab.query_names or ["q"])
        query.insert(rng.randrange(len(query) + 1), (name, rng.choice(values)))
    elif op == 1:
        del query[rng.randrange(len(query))]
    elif op == 2:
        k = rng.randrange(len(query))
        query.insert(k, query[k])
    elif op == 3:
        k = rng.randrange(len(query))
        value = query[k][1]
        if value.lstrip("-").isdigit() and rng.random() < 0.5:
            query[k] = (query[k][0], rng.choice(NUMBER_FORMS).format(value.lstrip("-")))
        else:
            query[k] = (query[k][0], _mutate_text(value, rng, values))
    else:
        k = rng.randrange(len(query))
        query[k] = (_mutate_text(query[k][0], rng, [*vocab.query_names, *GENERIC_PIECES]),
                    query[k][1])


def _mutate_headers(headers: list[tuple[str, str]], rng: random.Random,
                    vocab: Vocabulary) -> None:
    names = sorted(vocab.headers)
    op = rng.randrange(3)
    if (op == 0 or not headers) and names:
        name = rng.choice(names)
        headers[:] = [(n, v) for n, v in headers if n.lower() != name.lower()]
        headers.append((name, rng.choice(vocab.headers[name] or [""])))
    elif op == 1 and headers:
        del headers[rng.randrange(len(headers))]
    elif headers:
        k = rng.randrange(len(headers))
        name, value = headers[k]
        pool = [*vocab.headers.get(name, []), ";q=0", ";q=0.5", ",", " ", "*/*", ";", "+json"]
        headers[k] = (name, _mutate_text(value, rng, pool))


def mutate_request(request: Request, rng: random.Random, vocab: Vocabulary,
                   corpus: Sequence[bytes]) -> Request:
    """One to three stacked mutations of one part of the request each."""
    method, path = request.method, request.path
    query, headers, body = list(request.query), list(request.headers), request.body
    for _ in range(1 + rng.randrange(3)):
        part = rng.randrange(10)
        if part == 0:
            method = rng.choice(vocab.methods)
        elif part in (1, 2):
            path = _mutate_path(path, rng, vocab)
        elif part in (3, 4, 5):
            _mutate_query(query, rng, vocab)
        elif part in (6, 7):
            _mutate_headers(headers, rng, vocab)
        elif rng.random() < 0.3 and vocab.bodies:
            body = rng.choice(vocab.bodies)
        else:
            body = mutate(body or b"", rng, corpus)[:MAX_BODY_BYTES]
    return Request(method, path, tuple(query), tuple(headers), body)


def first_pass(seeds: Sequence[Request], rng: random.Random) -> list[Request]:
    """The deterministic stage sent after the seeds, in an order fixed by ``rng``: every other
    spelling of every number in a seed's query (:data:`NUMBER_FORMS`), and each seed path
    with a trailing slash added or removed and with a doubled leading slash. Cheap (a few per
    seed) and where framework ports most often drift: coercion and path normalisation."""
    out: list[Request] = []
    for seed in seeds:
        for k, (name, value) in enumerate(seed.query):
            digits = value.lstrip("-")
            if not digits.isdigit():
                continue
            for form in NUMBER_FORMS:
                query = list(seed.query)
                query[k] = (name, form.format(digits))
                out.append(replace(seed, query=tuple(query)))
        slash = seed.path.rstrip("/") if seed.path.endswith("/") and seed.path != "/" else (
            seed.path + "/")
        out += [replace(seed, path=slash), replace(seed, path="/" + seed.path)]
    rng.shuffle(out)
    return list(dict.fromkeys(out))


# --------------------------------------------------------------------------- shrinking


def shrink_request(request: Request, differs: Callable[[Request], bool],
                   deadline: float) -> tuple[Request, int]:
    """A smaller request that still ``differs``: drop headers and query pairs one at a time,
    then delta-debug the body, each query value and the path. Returns (request, tests)."""
    tests = 0

    def check(candidate: Request) -> bool:
        nonlocal tests
        if candidate == request or time.monotonic() >= deadline:
            return False
        tests += 1
        return differs(candidate)

    for attr in ("headers", "query"):
        k = 0
        while k < len(getattr(request, attr)) and time.monotonic() < deadline:
            items = list(getattr(request, attr))
            rest = tuple(items[:k] + items[k + 1 :])
            trial = replace(request, headers=rest) if attr == "headers" else replace(
                request, query=rest)
            if check(trial):
                request = trial
            else:
                k += 1
    if request.body is not None and check(replace(request, body=None)):
        request = replace(request, body=None)
    if request.body:
        current = request

        def body_differs(data: bytes) -> bool:
            return check(replace(current, body=data))

        small, used = ddmin(request.body, body_differs, deadline)
        tests += used
        if small != request.body and differs(replace(request, body=small)):
            request = replace(request, body=small)
    for k, (name, value) in enumerate(request.query):
        if len(value) < 2:
            continue
        pairs = list(request.query)

        def value_differs(data: bytes, k: int = k, name: str = name,
                          pairs: list[tuple[str, str]] = pairs, base: Request = request) -> bool:
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                return False
            trial = list(pairs)
            trial[k] = (name, text)
            return check(replace(base, query=tuple(trial)))

        small, used = ddmin(value.encode("utf-8"), value_differs, deadline)
        tests += used
        pairs[k] = (name, small.decode("utf-8", "replace"))
        if differs(replace(request, query=tuple(pairs))):
            request = replace(request, query=tuple(pairs))
    return request, tests
