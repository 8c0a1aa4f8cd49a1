"""Response bodies: JSON, plain text and the error document."""

from __future__ import annotations

import json

JSON_TYPE = "application/json; charset=utf-8"
TEXT_TYPE = "text/plain; charset=utf-8"


def json_bytes(payload: object) -> bytes:
    """Compact, key-sorted UTF-8 JSON with a final newline: the one encoding shelf uses."""
    return (json.dumps(payload, ensure_ascii=False, sort_keys=True,
                       separators=(",", ":")) + "\n").encode("utf-8")


def error_doc(code: str, message: str, **extra: object) -> bytes:
    detail: dict[str, object] = {"code": code, "message": message}
    detail.update({k: v for k, v in extra.items() if v is not None})
    return json_bytes({"error": detail})


def text_bytes(lines: list[str]) -> bytes:
    return "".join(line + "\n" for line in lines).encode("utf-8")
