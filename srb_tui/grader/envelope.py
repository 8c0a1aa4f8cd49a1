"""Stage result envelopes and atomic JSON writes.

Every stage writes one `swerefactor.stage-result/1` document:
``{schema, stage, task, status, started_at, duration_sec, harness: {fingerprint}, units,
checks, metadata, notes}``. It is written atomically (temporary file in the same folder,
rename; for a durable write also fsync of the file and of the folder), so a reader never
sees half a document and a stage killed mid-way leaves the last complete checkpoint.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .contract import STAGE_RESULT_SCHEMA
from .fingerprint import fingerprint

SCHEMA = STAGE_RESULT_SCHEMA
STATUSES = ("running", "ok", "error")


def utc_iso(when: float | None = None) -> str:
    """An ISO 8601 UTC timestamp with a trailing Z, to the millisecond."""
    moment = datetime.fromtimestamp(time.time() if when is None else when, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def atomic_write_json(path: str | os.PathLike[str], data: Any) -> None:
    """Write `data` as JSON to `path` atomically (temp file + fsync + rename)."""
    atomic_write_text(path, json.dumps(data, indent=2, sort_keys=False, ensure_ascii=False)
                      + "\n")


def _utf8(text: str) -> bytes:
    """``text`` as UTF-8, a lone surrogate (a module's ``"\ud800"``) as its JSON escape
    rather than a crashed grader."""
    return text.encode("utf-8", "backslashreplace")


def atomic_write_text(path: str | os.PathLike[str], text: str, *, durable: bool = True) -> None:
    """Write `text` to `path` atomically (temp file + fsync + rename, fsync of the folder).

    ``durable=False`` leaves out both fsyncs: the rename alone still shows a reader the old
    document or the new one, never half of one, and a writer killed at any point leaves the
    last complete document (the page cache outlives the process); only a crash of the
    kernel itself may lose it."""
    atomic_write_parts(path, [_utf8(text)], durable=durable)


def atomic_write_parts(
    path: str | os.PathLike[str], parts: list[bytes], *, durable: bool = True
) -> None:
    """:func:`atomic_write_text` of the concatenated ``parts``, never joined in memory."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.writelines(parts)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if not durable:
        return
    try:
        dir_fd = os.open(target.parent, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)


_encode = json.JSONEncoder(ensure_ascii=False).encode
"""``json.dumps(value, ensure_ascii=False)`` without building an encoder per call: a list of
checks in one call of the C encoder (a third of the time of one call per check)."""


def encode_checks(checks: list[dict[str, Any]]) -> str:
    """A list of checks as :meth:`StageEnvelope.add_checks` encodes it (one line)."""
    return _encode(checks)


@dataclass
class StageEnvelope:
    """A stage result being built; `write` checkpoints it, `finish` closes it."""

    stage: str
    task: str
    status: str = "running"
    units: list[dict[str, Any]] = field(default_factory=list)
    checks: list[dict[str, Any]] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    started: float = field(default_factory=time.time)
    _clock_start: float = field(default_factory=time.monotonic)
    duration_sec: float | None = None
    # The checks' JSON text (UTF-8), each batch (a module's checks) encoded once, on one
    # line, and the lines joined as they come: a checkpoint is written before and after
    # every module, and re-encoding (or re-joining) 25,000 checks each time cost seconds a
    # stage. ``checks`` is append-only once written (suite.py adds a module's checks,
    # review.py appends one); a new list starts afresh.
    _check_text: bytes = field(default=b"", repr=False)
    _check_count: int = field(default=0, repr=False)
    _check_list: list[dict[str, Any]] | None = field(default=None, repr=False)

    def finish(self, status: str) -> None:
        """Close the envelope with a final status ("ok" or "error")."""
        if status not in STATUSES:
            raise ValueError(f"unknown stage status {status!r}")
        self.status = status
        self.duration_sec = round(time.monotonic() - self._clock_start, 3)

    def to_dict(self) -> dict[str, Any]:
        """The envelope as plain JSON data."""
        duration = self.duration_sec
        if duration is None:
            duration = round(time.monotonic() - self._clock_start, 3)
        return {
            "schema": SCHEMA,
            "stage": self.stage,
            "task": self.task,
            "status": self.status,
            "started_at": utc_iso(self.started),
            "duration_sec": duration,
            "harness": {"fingerprint": fingerprint()},
            "units": self.units,
            "checks": self.checks,
            "metadata": self.metadata,
            "notes": self.notes,
        }

    def document_without_checks(self) -> str:
        """The document's JSON on one line, its ``checks`` an empty list."""
        return _encode({**self.to_dict(), "checks": []})

    def write(self, path: str | os.PathLike[str], *, durable: bool = True) -> None:
        """Checkpoint the envelope to `path` atomically: one top-level key a line, each
        unit and note on a line of its own, each batch of checks (a module's) on one line,
        every value encoded by the C encoder (``durable``: as :func:`atomic_write_text`).
        The document is checkpointed twice a module: the pure-Python encoder that
        ``indent`` needs cost ~1.5 ms a write."""
        checks = self._checks_text()
        head: list[str] = []
        tail: list[str] = []
        for key, value in self.to_dict().items():
            if key == "checks":  # what came so far is the head, what follows the tail
                head, tail = tail, head
                continue
            if key in ("units", "notes") and value:
                text = "[\n    " + ",\n    ".join(map(_encode, value)) + "\n  ]"
            else:
                text = _encode(value)
            tail.append(f"  {_encode(key)}: {text}")
        before = "{\n" + ",\n".join(head) + ',\n  "checks": ['
        after = "\n  ],\n" if checks else "],\n"
        parts = [_utf8(before + ("\n    " if checks else "")), checks,
                 _utf8(after + ",\n".join(tail) + "\n}\n")]
        atomic_write_parts(path, parts, durable=durable)

    def add_checks(self, checks: list[dict[str, Any]]) -> str:
        """Append ``checks``; their JSON text (a list, on one line: no check's JSON holds a
        raw newline), as the document holds them."""
        text = _encode(checks)
        self.add_encoded(checks, text)
        return text

    def add_encoded(self, checks: list[dict[str, Any]], text: str) -> None:
        """:meth:`add_checks` of checks already encoded (``text``: ``encode_checks(checks)``,
        done elsewhere, e.g. by a thread while the grader did other work)."""
        self._checks_text()  # what was appended directly comes first
        self.checks.extend(checks)
        self._add_batch(text)

    def _add_batch(self, text: str) -> None:
        if len(text) > 2:  # not "[]"
            more = _utf8(text[1:-1])
            self._check_text = self._check_text + b",\n    " + more if self._check_text else more
        self._check_count = len(self.checks)

    def _checks_text(self) -> bytes:
        """The checks as the document's lines (``,\n    ``-separated), the new ones added."""
        if self._check_list is not self.checks or self._check_count > len(self.checks):
            self._check_list, self._check_text, self._check_count = self.checks, b"", 0
        fresh = self.checks[self._check_count:]
        if fresh:
            self._add_batch(_encode(fresh))
        return self._check_text
