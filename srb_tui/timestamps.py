"""Docker's RFC 3339 timestamps, parsed one way for every room (stdlib only).

Docker writes nanosecond timestamps and trims trailing zeros of the fraction
(``...:05.1234Z``), so its strings do not sort as text. The runner normalises them
(always nine fraction digits, UTC ``Z``) and the store compares them as integer
nanoseconds; both use this parser. It sits beside ``config`` as a leaf module: the runner
may import only the standard library and docker, the store never imports the runner.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

_TS = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?"
    r"(Z|[+-]\d{2}:\d{2})$"
)
ZERO_YEAR = 1


def split_ts(ts: str) -> tuple[datetime, int]:
    """The whole seconds (aware, UTC) and the nanoseconds of ``ts``; ValueError when it
    is not an RFC 3339 timestamp."""
    m = _TS.match(ts)
    if m is None:
        raise ValueError(f"not an RFC 3339 timestamp: {ts!r}")
    year, month, day, hour, minute, second = (int(m.group(i)) for i in range(1, 7))
    nanos = int((m.group(7) or "0").ljust(9, "0"))
    base = datetime(year, month, day, hour, minute, second, tzinfo=UTC)
    zone = m.group(8)
    if zone != "Z":
        sign = 1 if zone[0] == "+" else -1
        base -= sign * timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6]))
    return base, nanos


def normalize_ts(ts: str) -> str:
    """``2024-01-02T03:04:05.1Z`` → ``2024-01-02T03:04:05.100000000Z`` (UTC)."""
    base, nanos = split_ts(ts)
    return f"{base.strftime('%Y-%m-%dT%H:%M:%S')}.{nanos:09d}Z"


def parse_ts(ts: str) -> datetime | None:
    """An aware UTC datetime (microsecond precision), or None for Docker's zero time."""
    base, nanos = split_ts(ts)
    if base.year == ZERO_YEAR:
        return None
    return base + timedelta(microseconds=nanos // 1000)


def ts_epoch(ts: str) -> float:
    """Seconds since the epoch, as a float (sub-microsecond digits are lost)."""
    base, nanos = split_ts(ts)
    return base.timestamp() + nanos / 1e9


def ts_ns(ts: str) -> int | None:
    """Integer nanoseconds since the epoch, or None for text that is not a timestamp."""
    try:
        base, nanos = split_ts(ts)
    except ValueError:
        return None
    return int(base.timestamp()) * 1_000_000_000 + nanos
