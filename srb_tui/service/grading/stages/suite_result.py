"""Stage II's result as the grader prints it, so the host need not fetch the file.

The grader's ``suite`` prints each ended module's checks (``@srb-checks``, the JSON the
stage result holds for them) and, once the result file is written, the document without
its checks (``@srb-result``: ``{"document": ..., "checks_streamed": N}``). The checks of
the lines, in order, are the rest of the document: :meth:`StreamedResult.document` puts
them back. It is used only for a grader that exited 0 and only when the lines agree with
themselves (one result line; each module's checks once; N checks); otherwise the host
fetches the file the grader wrote, as it does for a grader that did not finish. Either way
the document is then checked against suite.toml (:mod:`.trust`): the lines are the same
grader's claim as the file.
"""

from __future__ import annotations

import json
from typing import Any

from srb_tui.grader.contract import SUITE_CHECKS_MARK, SUITE_RESULT_MARK

CHECKS_MARK = SUITE_CHECKS_MARK.encode()
RESULT_MARK = SUITE_RESULT_MARK.encode()


class StreamedResult:
    """An ``on_line`` for the grader's ``@srb-checks`` and ``@srb-result`` lines."""

    def __init__(self) -> None:
        self.batches: list[list[Any]] = []
        self.modules: set[str] = set()
        self.result: bytes | None = None
        self.problem = ""

    def on_line(self, raw: bytes) -> tuple[str, list[Any]] | None:
        """Keep a checks or result line; a checks line's (module, checks) once parsed."""
        if raw.startswith(RESULT_MARK):
            if self.result is not None:
                self.problem = "two result lines"
            self.result = raw[len(RESULT_MARK):]
            return None
        if not raw.startswith(CHECKS_MARK):
            return None
        try:
            doc = json.loads(raw[len(CHECKS_MARK):])
        except ValueError:
            self.problem = "a checks line is not JSON"
            return None
        module = doc.get("module") if isinstance(doc, dict) else None
        checks = doc.get("checks") if isinstance(doc, dict) else None
        if not isinstance(module, str) or not isinstance(checks, list):
            self.problem = "a checks line has no module or no checks"
            return None
        if module in self.modules:
            self.problem = f"module {module!r} has two checks lines"
        self.modules.add(module)
        self.batches.append(checks)
        return module, checks

    def document(self) -> dict[str, Any] | None:
        """The stage result the lines carry, or None when they do not carry a whole one."""
        if self.result is None or self.problem:
            return None
        try:
            line = json.loads(self.result)
        except ValueError:
            return None
        doc = line.get("document") if isinstance(line, dict) else None
        count = line.get("checks_streamed") if isinstance(line, dict) else None
        checks = [check for batch in self.batches for check in batch]
        if not isinstance(doc, dict) or doc.get("checks") != [] or count != len(checks):
            return None
        doc["checks"] = checks
        return doc
