"""Timestamps and run ids: UTC ISO-8601 text, and ids like ``r-20261129-164012-ab12``."""

from __future__ import annotations

import re
import secrets
from datetime import UTC, datetime

from srb_tui.timestamps import ts_ns

RUN_ID_PATTERN = re.compile(r"^r-\d{8}-\d{6}-[0-9a-f]{4,}$")


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
    return ts_ns(ts)
