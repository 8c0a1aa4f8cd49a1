"""The live CLI view and `srb runs show` carry an agent run's rounds, tokens and cost."""

from __future__ import annotations

from rich.console import Console

from srb_tui.commands.run_view import Display
from srb_tui.service.agent_events import AgentRoundFinished
from srb_tui.service.views.agent_report import cost_text


def _text(display: Display) -> str:
    console = Console(width=160, record=True)
    console.print(display.render())
    return console.export_text()


def test_live_view_sums_rounds_tokens_and_shows_the_gateway_cost() -> None:
    d = Display(run_id="r1", task="demo", agent="codex:m")
    d.apply(AgentRoundFinished("r1", 1, "changed the tree", 0, {"input": 1000, "output": 50},
                               0.5, 1.25))
    d.apply(AgentRoundFinished("r1", 2, "idle", 0, {"input": 2000, "output": 10}, 0.25, 2.5))
    text = _text(d)
    assert "2 round(s)" in text and "3,060 tokens" in text
    assert "cost $2.5000 (gateway)" in text and "client estimate $0.7500" in text


def test_cost_text() -> None:
    assert cost_text({}) == "—"
    assert cost_text({"requests": 3, "total_tokens": 45_000, "cost_usd": 1.234,
                      "unpriced_requests": 0}) == "$1.23 · 45k tok"
    assert cost_text({"requests": 3, "total_tokens": 900, "cost_usd": None,
                      "unpriced_requests": 3}) == "unpriced · 900 tok"
