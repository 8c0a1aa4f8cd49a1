"""Timestamps and run ids: UTC ISO-8601 text, and ids like ``r-20261129-164012-ab12``."""

from __future__ import annotations

import re
import secrets
from datetime import UTC, datetime

RUN_ID_PATTERN = re.compile(r"^r-\d{8}-\d{6}-[0-9a-f]{4,}$")
_DOCKER_TS = re.compile(
    r"^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$"
)


def utc_now() -> str:
    """The current time as ``2026-11-29T16:40:12.123456Z``."""
    return format_ts(datetime.now(UTC))


def format_ts(moment: datetime) -> str:
    """``moment`` (aware) as UTC ISO-8601 with microseconds and a ``Z``."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def new_run_id(moment: datetime | None = None) -> str:
    """A fresh run id ``r-YYYYMMDD-HHMMSS-xxxx`` (UTC time, four random hex digits)."""
    moment = moment or datetime.now(UTC)
    stamp = moment.astimezone(UTC).strftime("%Y%m%d-%H%M%S")
    return f"r-{stamp}-{secrets.token_hex(2)}"


def docker_ts_ns(ts: str) -> int | None:
    """A Docker RFC3339Nano timestamp as integer nanoseconds since the epoch (UTC).

    Docker trims trailing zeros of the fraction, so these strings do not sort as text;
    compare their ``docker_ts_ns`` instead. Returns ``None`` for text that is not such a
    timestamp.
    """
    match = _DOCKER_TS.match(ts)
    if match is None:
        return None
    year, month, day, hour, minute, second, frac, zone = match.groups()
    try:
        base = datetime(
            int(year), int(month), int(day), int(hour), int(minute), int(second), tzinfo=UTC
        )
    except ValueError:
        return None
    seconds = int(base.timestamp())
    if zone != "Z":
        sign = 1 if zone[0] == "+" else -1
        seconds -= sign * (int(zone[1:3]) * 3600 + int(zone[4:6]) * 60)
    nanos = int((frac or "").ljust(9, "0"))
    return seconds * 1_000_000_000 + nanos
