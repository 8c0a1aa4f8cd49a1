"""``report_source`` decodes the score record's modules in Python (json_each with four
json_extract a module cost ~60 ms over 520 runs); what it keeps must be exactly what the
SQL it replaced kept, odd values included."""

from __future__ import annotations

import json
import sqlite3

from srb_tui.store.report_rows import _weighted_modules

SQL = ("SELECT json_extract(m.value, '$.id'), coalesce(json_extract(m.value, '$.passed'), 0),"
       " coalesce(json_extract(m.value, '$.scored'), 0) FROM json_each(?, '$') m"
       " WHERE coalesce(json_extract(m.value, '$.weight'), 1) > 0")


def test_the_modules_kept_are_the_ones_the_sql_kept() -> None:
    modules = [
        {"id": "m01", "weight": 1.0, "passed": 1555, "scored": 1555},
        {"id": "m02", "weight": 0, "passed": 1, "scored": 2},  # weight 0: left out
        {"id": "m03", "passed": 3, "scored": 4},  # no weight counts as 1
        {"id": 3, "weight": "x", "passed": True, "scored": None},  # text > every number
        {"id": None, "weight": False},
        {"id": {"k": 1}, "weight": -1.0},
        5,
        {"id": True, "weight": 2.5, "passed": 2.7, "scored": "4"},
        {"id": [1, 2], "passed": 3},
    ]
    text = json.dumps(modules)
    conn = sqlite3.connect(":memory:")
    want = [(str(r[0]), int(r[1]), int(r[2])) for r in conn.execute(SQL, (text,))]
    assert _weighted_modules(text) == want
    assert [m[0] for m in want][:2] == ["m01", "m03"]
    assert _weighted_modules(None) == [] and _weighted_modules("[]") == []
