"""Stream parsers on streams captured from the real pinned clients (against the STAND-IN
model server): Claude Code 2.1.220 stream-json and Codex CLI 0.146.0 --json."""

from __future__ import annotations

import json
from pathlib import Path

from srb_tui.agents.streams import (
    ClaudeStreamParser,
    CodexStreamParser,
    StreamParser,
    parse_trajectory,
)

FIXTURES = Path(__file__).parent / "fixtures"


def run(parser: StreamParser, name: str) -> list[tuple[str, dict[str, object]]]:
    out = []
    for line in (FIXTURES / name).read_text().splitlines():
        out += [(e.kind, e.data) for e in parser.feed(line)]
    return out


def test_claude_round_one() -> None:
    p = ClaudeStreamParser()
    events = run(p, "claude-short-r1.jsonl")
    kinds = [k for k, _ in events]
    assert kinds[0] == "session"
    assert kinds.count("tool_call") == 2 and kinds.count("tool_result") == 2
    calls = [d for k, d in events if k == "tool_call"]
    assert calls[0]["name"] == "Bash" and "note.txt" in json.dumps(calls[0]["input"])
    results = [d for k, d in events if k == "tool_result"]
    assert "stand-in note" in str(results[1]["output"])
    s = p.summary
    assert s.session_id and not s.is_error
    assert s.final_message.splitlines()[-1] == "SRB_TASK_COMPLETE"
    assert s.input_tokens > 0 and s.output_tokens > 0 and s.client_cost_usd is not None
    assert s.tool_calls == 2


def test_claude_repeated_message_blocks_are_counted_once() -> None:
    p = ClaudeStreamParser()
    line = (FIXTURES / "claude-short-r1.jsonl").read_text().splitlines()[1]
    assert json.loads(line)["type"] == "assistant"
    first = p.feed(line)
    again = p.feed(line)
    assert [e.kind for e in first] == ["tool_call"] and again == []


def test_claude_resumed_round_keeps_the_session() -> None:
    first, second = ClaudeStreamParser(), ClaudeStreamParser()
    run(first, "claude-short-r1.jsonl")
    run(second, "claude-short-r2.jsonl")
    assert second.summary.session_id == first.summary.session_id


def test_claude_api_error_is_an_error_result_not_work() -> None:
    p = ClaudeStreamParser()
    events = run(p, "claude-500.jsonl")
    s = p.summary
    assert s.is_error and s.terminal_reason == "api_error" and "500" in (s.error or "")
    assert s.work_events == 0
    assert any(k == "error" and d["fatal"] for k, d in events)


def test_codex_round_and_resume() -> None:
    p = CodexStreamParser()
    events = run(p, "codex-short-r1.jsonl")
    kinds = [k for k, _ in events]
    assert kinds[0] == "session"
    assert kinds.count("tool_call") == 2 and kinds.count("tool_result") == 2
    assert kinds.count("error") == 1  # "Model metadata … not found": not a failure
    assert not p.summary.is_error and p.summary.input_tokens > 0
    assert p.summary.final_message.endswith("SRB_TASK_COMPLETE")
    q = CodexStreamParser()
    run(q, "codex-short-r2.jsonl")
    assert q.summary.session_id == p.summary.session_id


def test_codex_retries_then_failure() -> None:
    for name, needle in (("codex-500.jsonl", "high demand"), ("codex-drop.jsonl", "stream")):
        p = CodexStreamParser()
        events = run(p, name)
        assert p.summary.is_error and needle in (p.summary.error or "")
        assert p.summary.work_events == 0
        retries = [d for k, d in events if k == "error" and not d["fatal"]]
        assert any("Reconnecting" in str(d["text"]) for d in retries)


def test_markers_and_junk_are_ignored() -> None:
    p = CodexStreamParser()
    assert p.feed("@@srb round 1 start") == [] and p.feed("not json") == []


def test_mini_swe_agent_trajectory() -> None:
    data = {"info": {"exit_status": "Submitted", "submission": "",
                     "model_stats": {"instance_cost": 0.25}},
            "messages": [{"role": "system", "content": "s"},
                         {"role": "user", "content": "task"},
                         {"role": "assistant", "content": "ls\n```bash\nls\n```"},
                         {"role": "user", "content": "<returncode>0</returncode>"}]}
    events, s = parse_trajectory(data)
    assert [e.kind for e in events][:2] == ["message", "tool_result"]
    assert s.client_cost_usd == 0.25 and not s.is_error


def test_a_tool_call_shows_what_it_acts_on_never_none() -> None:
    """Issue 35 item 7: a Stage III lane's transcript showed Claude Code's Write calls as
    `Write: None` (only `command` was looked for). The console's Transcript tab and a
    lane's tail now share one summary: the command, else the file or path, else JSON."""
    from srb_tui.service.grading.stages.client_lane import transcript_line
    from srb_tui.service.views.agent_report import tool_input_text

    write = {"kind": "tool_call", "name": "Write",
             "input": {"file_path": "/srb/work/candidate.sh", "content": "exit 1\n"}}
    assert transcript_line(write) == "Write: /srb/work/candidate.sh"
    bash = {"kind": "tool_call", "name": "Bash", "input": {"command": "ls -la"}}
    assert transcript_line(bash) == "Bash: ls -la"
    assert tool_input_text({"cmd": ["bash", "-lc", "make"]}) == "bash -lc make"
    assert tool_input_text({"todos": [1]}) == '{"todos": [1]}'
    assert tool_input_text(None) == "" and tool_input_text("raw") == "raw"
