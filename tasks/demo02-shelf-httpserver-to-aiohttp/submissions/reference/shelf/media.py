"""Content negotiation (Accept) and Content-Type parsing, framework-neutral."""

from __future__ import annotations

from .params import BadInput

JSON = "application/json"
TEXT = "text/plain"
OFFERS = (JSON, TEXT)


def split_params(value: str) -> tuple[str, dict[str, str]]:
    """``"Text/Plain; q=0.5; charset=\"utf-8\""`` -> ("text/plain", {"q": "0.5", ...})."""
    parts = value.split(";")
    media = parts[0].strip().lower()
    params: dict[str, str] = {}
    for part in parts[1:]:
        name, sep, raw = part.partition("=")
        name = name.strip().lower()
        if not sep or not name:
            continue
        raw = raw.strip()
        if len(raw) >= 2 and raw[0] == raw[-1] == '"':
            raw = raw[1:-1]
        params[name] = raw
    return media, params


def quality(raw: str | None) -> float:
    """A q parameter: 0..1 with at most three decimals; anything else counts as 0."""
    if raw is None:
        return 1.0
    text = raw.strip()
    if not text or len(text) > 5 or text[0] not in "01":
        return 0.0
    try:
        value = float(text)
    except ValueError:
        return 0.0
    return value if 0.0 <= value <= 1.0 else 0.0


def choose(accept: str | None, offers: tuple[str, ...] = OFFERS) -> str | None:
    """The offer the client prefers; None when it accepts none of them (406)."""
    if accept is None or not accept.strip():
        return offers[0]
    best: tuple[float, int, int] | None = None
    chosen = None
    ranges = []
    for item in accept.split(","):
        if not item.strip():
            continue
        media, params = split_params(item)
        ranges.append((media, quality(params.get("q"))))
    for position, offer in enumerate(offers):
        kind = offer.split("/")[0]
        score: tuple[float, int] | None = None
        for media, q in ranges:
            if media == offer:
                specificity = 2
            elif media == kind + "/*":
                specificity = 1
            elif media == "*/*":
                specificity = 0
            else:
                continue
            if score is None or specificity > score[1]:
                score = (q, specificity)
        if score is None or score[0] <= 0.0:
            continue
        rank = (score[0], score[1], -position)
        if best is None or rank > best:
            best, chosen = rank, offer
    return chosen


def require_json(content_type: str | None) -> None:
    """Accept application/json or application/<anything>+json, UTF-8 only (else 415)."""
    if content_type is None or not content_type.strip():
        raise BadInput(415, "unsupported_media_type", "Content-Type must be application/json")
    media, params = split_params(content_type)
    if media != JSON and not (media.startswith("application/") and media.endswith("+json")):
        raise BadInput(415, "unsupported_media_type",
                       f"Content-Type {media or '(empty)'} is not JSON")
    charset = params.get("charset")
    if charset is not None and charset.lower() not in ("utf-8", "utf8"):
        raise BadInput(415, "unsupported_media_type", f"charset {charset} is not supported")
