"""Tool schemas offered to reviewers (Stage I) and adversaries (Stage III), and the checks on
what they hand in (`report`, candidate file sets).

The five reading tools mirror the grader's `Toolbox` (srb_tui/grader/audit/tools.py); their
calls are forwarded unchanged through a `ToolChannel`. `submit_review` follows the published
review shape; `try_test` and `report` carry a candidate as ``{"files": {rel: text}}``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePosixPath
from typing import Any

from .base import ToolSchema

PATH_HELP = "a path written 'original:REL' (State A) or 'submission:REL' (the submission)"
ROOT_ENUM = ["original", "submission"]

LIST_DIR = ToolSchema(
    "list_dir",
    "List a folder of one tree, `depth` levels deep. Entries carry path, type and size.",
    {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": PATH_HELP + "; 'submission:' = its root"},
            "depth": {"type": "integer", "minimum": 1, "maximum": 8, "default": 1},
        },
        "required": ["path"],
    },
)
FETCH_SOURCE = ToolSchema(
    "fetch_source",
    "Read numbered lines of a text file (size-capped; page with start_line/end_line).",
    {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": PATH_HELP},
            "start_line": {"type": "integer", "minimum": 1, "default": 1},
            "end_line": {"type": "integer", "minimum": 1},
        },
        "required": ["path"],
    },
)
SEARCH = ToolSchema(
    "search",
    "Regular-expression search over the text files of one tree or both; returns path, line "
    "and text of each match (capped).",
    {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "Python regular expression"},
            "root": {"type": "string", "enum": [*ROOT_ENUM, "both"], "default": "submission"},
            "glob": {
                "type": "string",
                "description": "file glob; without '/' it matches the base name",
                "default": "*",
            },
            "path": {"type": "string", "description": "limit to a folder: " + PATH_HELP},
            "ignore_case": {"type": "boolean", "default": False},
            "max_results": {"type": "integer", "minimum": 1},
        },
        "required": ["pattern"],
    },
)
DIFF = ToolSchema(
    "diff",
    "Unified diff of the same relative path in both trees (a folder gives the names only on "
    "one side).",
    {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "relative path, or " + PATH_HELP},
            "context": {"type": "integer", "minimum": 0, "maximum": 20, "default": 3},
        },
        "required": ["path"],
    },
)


def run_schema(allowed: Sequence[str]) -> ToolSchema:
    """The `run` tool, naming the allowed program basenames."""
    return ToolSchema(
        "run",
        "Run a program (no shell) with its working directory inside one tree. Allowed "
        f"programs (bare names): {', '.join(allowed)}.",
        {
            "type": "object",
            "properties": {
                "argv": {"type": "array", "items": {"type": "string"}, "minItems": 1},
                "root": {"type": "string", "enum": ROOT_ENUM, "default": "submission"},
                "cwd": {"type": "string", "description": "folder relative to the root"},
                "timeout_sec": {"type": "number", "exclusiveMinimum": 0},
            },
            "required": ["argv"],
        },
    )


def reading_tools(allowed_commands: Sequence[str] = ()) -> list[ToolSchema]:
    """list_dir, fetch_source, search, diff, and run when some command is allowed."""
    tools = [LIST_DIR, FETCH_SOURCE, SEARCH, DIFF]
    if allowed_commands:
        tools.append(run_schema(allowed_commands))
    return tools


def submit_review_schema(gate_ids: Sequence[str]) -> ToolSchema:
    """`submit_review`: {summary, gates: [{id, verdict, confidence, reasoning, evidence}]}."""
    citation = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": PATH_HELP},
            "line": {"type": "integer", "minimum": 1},
            "quote": {"type": "string", "description": "text found at or within 3 lines"},
            "note": {"type": "string"},
        },
        "required": ["path", "line", "quote"],
    }
    gate = {
        "type": "object",
        "properties": {
            "id": {"type": "string", "enum": list(gate_ids)},
            "verdict": {"type": "string", "enum": ["pass", "fail"]},
            "confidence": {"type": "number", "minimum": 0, "maximum": 1},
            "reasoning": {"type": "string"},
            "evidence": {"type": "array", "items": citation},
        },
        "required": ["id", "verdict", "confidence", "reasoning", "evidence"],
    }
    return ToolSchema(
        "submit_review",
        "Hand in the review: one entry per gate with verdict pass or fail. Every fail must "
        "cite evidence {path 'root:REL', line, quote} that can be re-checked in the tree. This "
        "ends the review.",
        {
            "type": "object",
            "properties": {
                "summary": {"type": "string"},
                "gates": {"type": "array", "items": gate},
            },
            "required": ["summary", "gates"],
        },
    )


_FILES = {
    "type": "object",
    "description": "the candidate's files: relative path -> full text",
    "additionalProperties": {"type": "string"},
}

TRY_TEST = ToolSchema(
    "try_test",
    "Run a candidate test on both trees, the same way a reported candidate is judged: its "
    "files are placed in a fresh folder and run by the probe's candidate command on State A "
    "and on the submission. Returns the outcome (upheld | nondeterministic | invalid | "
    "rejected | error), the reason and each run's exit code and output tail.",
    {"type": "object", "properties": {"files": _FILES}, "required": ["files"]},
)
REPORT = ToolSchema(
    "report",
    "Finish the round. found=true hands in the final candidate (files) with a summary of the "
    "behavioural difference it shows; found=false reports that you found none. This ends the "
    "round.",
    {
        "type": "object",
        "properties": {
            "found": {"type": "boolean"},
            "summary": {"type": "string"},
            "claim": {"type": "string", "description": "the difference, State A vs submission"},
            "files": _FILES,
        },
        "required": ["found", "summary"],
    },
)

MAX_CANDIDATE_FILES = 200
MAX_CANDIDATE_BYTES = 4_000_000


def candidate_problems(files: object) -> list[str]:
    """Why a candidate file set cannot be run (empty list = fine)."""
    if not isinstance(files, dict) or not files:
        return ["'files' must be a non-empty object mapping relative paths to file text"]
    problems: list[str] = []
    if len(files) > MAX_CANDIDATE_FILES:
        problems.append(f"at most {MAX_CANDIDATE_FILES} files")
    size = 0
    for name, text in files.items():
        path = PurePosixPath(name) if isinstance(name, str) else None
        if (
            path is None
            or not name
            or "\0" in name
            or "\\" in name
            or path.is_absolute()
            or any(part in ("..", "") for part in name.split("/"))
        ):
            problems.append(f"file name {name!r} must be a plain relative path")
            continue
        if not isinstance(text, str):
            problems.append(f"file {name!r} must be text")
            continue
        size += len(text.encode("utf-8"))
    if size > MAX_CANDIDATE_BYTES:
        problems.append(f"the files total {size} bytes; at most {MAX_CANDIDATE_BYTES}")
    return problems


def report_problems(report: object) -> list[str]:
    """Why a `report` is not acceptable (empty list = fine)."""
    if not isinstance(report, dict):
        return ["the report must be an object {found, summary, files?, claim?}"]
    problems: list[str] = []
    found = report.get("found")
    if not isinstance(found, bool):
        problems.append("'found' must be true or false")
    if not isinstance(report.get("summary"), str):
        problems.append("'summary' must be a string")
    if found is True:
        problems.extend(candidate_problems(report.get("files")))
    return problems


def rejection_text(problems: Sequence[str], what: str) -> str:
    """The single rejection sent back before the one resubmit."""
    listed = "\n".join(f"- {problem}" for problem in problems)
    return (
        f"Your {what} was not accepted:\n{listed}\nSend it again, whole; this is the only resubmit."
    )


def as_json_schema(tool: ToolSchema) -> dict[str, Any]:
    """A tool schema as a plain dict (for transcripts and the console)."""
    return {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema}
