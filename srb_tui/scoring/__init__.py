"""srb_tui.scoring: the scoring policy, per-run score envelopes and aggregate metrics.

Host side. `policy` holds the [scoring] numbers and refuses arithmetic that does not close;
`score` turns stage outcomes into `score.json` / `reward.json`; `aggregate` builds the funnel
and the leaderboard over many runs.
"""

from typing import TYPE_CHECKING

from srb_tui.lazy import exports_on_first_use

if TYPE_CHECKING:
    from .aggregate import Funnel, LeaderboardRow, ScoredRun, funnel, funnel_by, leaderboard
    from .policy import PolicyError, ScoringPolicy
    from .score import ModuleScore, ScoreEnvelope, score_run

__all__ = [
    "Funnel",
    "LeaderboardRow",
    "ModuleScore",
    "PolicyError",
    "ScoreEnvelope",
    "ScoredRun",
    "ScoringPolicy",
    "funnel",
    "funnel_by",
    "leaderboard",
    "score_run",
]

__getattr__ = exports_on_first_use(__name__)
