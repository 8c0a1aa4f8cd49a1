"""Tables 2 and 3 list configurations as the paper does (issue 35, figures): by model in the
paper's order, then effort from lowest to highest; a campaign's own order first."""

from __future__ import annotations

from srb_tui.reports import build_report
from srb_tui.reports.config_order import config_order, effort_rank, model_rank
from srb_tui.reports.records import ReportRun


def _run(model: str, effort: str, n: int, agent: str = "imported:harbor") -> ReportRun:
    return ReportRun(run_id=f"r{n}", task="t1", config=f"{agent} · {model} · {effort}",
                     audit_gate="pass", complete=True, agent=agent, model=model,
                     effort=effort, score=10.0)


def test_rows_follow_the_papers_models_and_rising_effort() -> None:
    given = [("glm-5.2", "max"), ("claude-opus-5", "max"), ("gpt-5.6-sol", "high"),
             ("claude-opus-5", "low"), ("gpt-5.6-sol", "none"), ("kimi-k3", "max"),
             ("claude-opus-5", "medium"), ("zz-local", "high"), ("claude-sonnet-5", "xhigh"),
             ("gpt-5.6-luna", "minimal"), ("qwen3.8-max", "max"), ("dsv4-flash", "max"),
             ("claude-opus-5", "xhigh"), ("aa-local", "low")]
    runs = [_run(model, effort, n) for n, (model, effort) in enumerate(given)]
    report = build_report(runs)
    for table_id in ("table2", "table3"):
        table = next(t for t in report.tables if t.id == table_id)
        rows = [(row[2], row[3]) for row in table.rows]
        assert rows == [
            ("claude-opus-5", "low"), ("claude-opus-5", "medium"), ("claude-opus-5", "xhigh"),
            ("claude-opus-5", "max"), ("gpt-5.6-sol", "none"), ("gpt-5.6-sol", "high"),
            ("kimi-k3", "max"), ("claude-sonnet-5", "xhigh"), ("gpt-5.6-luna", "minimal"),
            ("qwen3.8-max", "max"), ("dsv4-flash", "max"), ("glm-5.2", "max"),
            ("aa-local", "low"), ("zz-local", "high"),
        ], table_id


def test_a_campaigns_order_comes_first_and_names_are_read_loosely() -> None:
    runs = [_run("claude-opus-5", "high", 1), _run("gpt-5.6-sol", "low", 2),
            _run("m", "x", 3, agent="replay:reference")]
    names = [r.config for r in runs]
    assert config_order(runs, [names[2], names[1]]) == [names[2], names[1], names[0]]
    assert model_rank("anthropic/Claude Opus 5") == 0
    assert model_rank("DeepSeek V4 Flash") == model_rank("dsv4-flash") == 6
    assert model_rank("llama-4") == 8
    assert effort_rank("XHigh") == 5 and effort_rank("turbo") == 7
