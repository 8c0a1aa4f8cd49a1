"""The route table and path matching, shared by every request handler.

A pattern is a path whose ``{name}`` segments match exactly one non-empty
segment of the request path (raw, still percent-encoded).
"""

from __future__ import annotations

from dataclasses import dataclass

ROUTES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("/", ("GET",)),
    ("/health", ("GET",)),
    ("/books", ("GET", "POST")),
    ("/books/{id}", ("GET", "DELETE")),
    ("/authors/{name}", ("GET",)),
    ("/search", ("GET",)),
    ("/stats", ("GET",)),
)
METHOD_ORDER = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


@dataclass
class Match:
    pattern: str
    methods: tuple[str, ...]
    params: dict[str, str]

    def allowed(self) -> tuple[str, ...]:
        """Methods this route answers, HEAD with GET and OPTIONS always, in a fixed order."""
        names = set(self.methods) | {"OPTIONS"}
        if "GET" in names:
            names.add("HEAD")
        return tuple(m for m in METHOD_ORDER if m in names)

    def allow_header(self) -> str:
        return ", ".join(self.allowed())


def match(path: str) -> Match | None:
    """The route of a raw request path (no query), or None."""
    given = path.split("/")[1:] if path != "/" else [""]
    for pattern, methods in ROUTES:
        wanted = pattern.split("/")[1:] if pattern != "/" else [""]
        if len(wanted) != len(given):
            continue
        params: dict[str, str] = {}
        for want, got in zip(wanted, given):
            if want.startswith("{") and want.endswith("}"):
                if not got:
                    break
                params[want[1:-1]] = got
            elif want != got:
                break
        else:
            return Match(pattern, methods, params)
    return None


def redirect_target(path: str, query: str) -> str | None:
    """Where a path with trailing slashes is redirected (None: no redirect)."""
    if path == "/" or not path.endswith("/"):
        return None
    target = path.rstrip("/") or "/"
    return target + ("?" + query if query else "")
