"""A pytest plugin that turns a pytest run into one behavioural module's result.

Loaded with ``pytest -p swerefactor.pytest_module``; writes ``$SRB_RESULT`` once, when
pytest ends: ``{"checks": [...], "metadata": {"runner": "pytest", ...}}``.

- One check per collected test, its id the pytest node id.
- Verdicts: the call phase decides (passed → pass, failed → fail, skipped → skip); a
  failure in setup or teardown is ``error``; the first verdict that is not a pass is
  kept, so a test that failed in setup did not also pass. A file that does not collect
  is one ``error`` check named after the collector.
- Markers: ``srb_weight(w)`` (0 reports without scoring), ``srb_skip_ok`` (this skip is
  licensed and stays a skip, marked ``permitted_skip``), ``srb_group(name)`` (carried in
  the check's metadata). A skip without ``srb_skip_ok`` is recorded as ``fail``: the
  environment is fixed and offline, so a skipped check is a check the submission did not
  let run. A test may also set ``srb_weight`` / ``srb_note`` at run time through
  ``request.node.user_properties``.

pytest itself is never imported here: hooks are plain functions pytest finds by name, so
the plugin runs under whatever pytest the stage image carries.
"""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any

from . import PROVIDER

MARKERS = (
    "srb_weight(value): 0 reports this test without scoring it (default 1)",
    "srb_skip_ok: this skip is licensed and recorded as a skip",
    "srb_group(name): a group label carried into the check's metadata",
)
SUMMARY_LIMIT = 300
DETAIL_LIMIT = 1800

_recorder: _Recorder | None = None


class _Recorder:
    """One record per node id, written once as the module result."""

    def __init__(self, out_path: str) -> None:
        self.out_path = out_path
        self.records: dict[str, dict[str, Any]] = {}
        self.marks: dict[str, dict[str, Any]] = {}

    def note_item(self, item: Any) -> None:
        marks: dict[str, Any] = {}
        weight = item.get_closest_marker("srb_weight")
        if weight is not None and weight.args:
            marks["weight"] = weight.args[0]
        if item.get_closest_marker("srb_skip_ok") is not None:
            marks["skip_ok"] = True
        group = item.get_closest_marker("srb_group")
        if group is not None and group.args:
            marks["group"] = str(group.args[0])
        self.marks[item.nodeid] = marks

    def observe(self, report: Any) -> None:
        verdict = _verdict(report)
        if verdict is None:
            return
        nodeid = str(report.nodeid)
        existing = self.records.get(nodeid)
        if existing is not None and existing["verdict"] != "pass":
            return
        marks = self.marks.get(nodeid, {})
        weight = _weight(marks.get("weight", 1.0))
        note = ""
        for name, value in getattr(report, "user_properties", None) or []:
            if name == "srb_weight":
                weight = _weight(value)
            elif name == "srb_note":
                note = str(value)
        record: dict[str, Any] = {"id": nodeid, "verdict": verdict, "weight": weight}
        metadata: dict[str, Any] = {}
        if marks.get("group"):
            metadata["group"] = marks["group"]
        if note:
            metadata["note"] = note[:600]
        text = _longrepr(report)
        if verdict == "skip":
            reason = _skip_reason(report)
            if marks.get("skip_ok"):
                metadata["permitted_skip"] = True
                record["summary"] = f"skipped: {reason}" if reason else "skipped"
            else:
                record["verdict"] = "fail"
                record["summary"] = "skipped, which the contract does not permit" + (
                    f": {reason}" if reason else ""
                )
                record["detail"] = (
                    "This test did not run and has no srb_skip_ok marker, so it is "
                    "recorded as a fail." + (f" The suite's reason: {reason}" if reason else "")
                )
        elif verdict in ("fail", "error"):
            record["summary"] = _first_error_line(text) or f"{verdict} in {report.when}"
            if text:
                record["detail"] = _clip(text)
        duration = getattr(report, "duration", 0.0) or 0.0
        record["duration_sec"] = round(float(duration), 3)
        if metadata:
            record["metadata"] = metadata
        self.records[nodeid] = record

    def collect_error(self, report: Any) -> None:
        nodeid = str(report.nodeid) or "<collection>"
        text = _longrepr(report)
        self.records[nodeid] = {
            "id": nodeid,
            "verdict": "error",
            "weight": 1.0,
            "summary": "collection failed: " + (_first_error_line(text) or "see detail"),
            "detail": _clip(text),
        }

    def flush(self) -> None:
        if not self.out_path:
            return
        payload = {
            "checks": list(self.records.values()),
            "metadata": {"runner": "pytest", "tests": len(self.records), "plugin": PROVIDER},
        }
        folder = os.path.dirname(self.out_path) or "."
        os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".srb-", suffix=".json")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(payload, fh, indent=1)
        os.replace(tmp, self.out_path)


def _verdict(report: Any) -> str | None:
    when, outcome = report.when, report.outcome
    if when == "call":
        return {"passed": "pass", "failed": "fail", "skipped": "skip"}.get(outcome, "error")
    if when == "setup":
        return {"failed": "error", "skipped": "skip"}.get(outcome)
    if when == "teardown" and outcome == "failed":
        return "error"
    return None


def _weight(value: object) -> float:
    try:
        return max(0.0, float(value))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 1.0


def _longrepr(report: Any) -> str:
    raw = getattr(report, "longrepr", None)
    if raw is None:
        return ""
    if isinstance(raw, tuple | list):
        return str(raw[-1])
    return str(raw)


def _skip_reason(report: Any) -> str:
    raw = getattr(report, "longrepr", None)
    text = str(raw[2]) if isinstance(raw, tuple | list) and len(raw) >= 3 else str(raw or "")
    text = text.strip()
    if text.startswith("Skipped:"):
        text = text[len("Skipped:"):].strip()
    if text.lower() in ("skipped", "unconditional skip"):
        text = ""
    return text[:240]


def _first_error_line(text: str) -> str:
    for line in text.splitlines():
        if line.startswith("E ") and line[2:].strip():
            return line[2:].strip()[:SUMMARY_LIMIT]
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:SUMMARY_LIMIT] if lines else ""


def _clip(text: str, limit: int = DETAIL_LIMIT) -> str:
    if len(text) <= limit:
        return text
    marker = f"\n[srb: {len(text) - limit} characters left out]\n"
    head = (limit * 2) // 3
    return text[:head] + marker + text[len(text) - (limit - head) :]


# --------------------------------------------------------------------------- pytest hooks


def pytest_configure(config: Any) -> None:
    global _recorder
    for marker in MARKERS:
        config.addinivalue_line("markers", marker)
    _recorder = _Recorder(os.environ.get("SRB_RESULT", ""))


def pytest_collection_modifyitems(items: list[Any]) -> None:
    if _recorder is not None:
        for item in items:
            _recorder.note_item(item)


def pytest_collectreport(report: Any) -> None:
    if _recorder is not None and report.outcome == "failed":
        _recorder.collect_error(report)


def pytest_runtest_logreport(report: Any) -> None:
    if _recorder is not None:
        _recorder.observe(report)


def pytest_unconfigure(config: Any) -> None:
    global _recorder
    if _recorder is not None:
        _recorder.flush()
        _recorder = None
